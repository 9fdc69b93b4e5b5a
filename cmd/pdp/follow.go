package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/toolperm/pdp/client"
)

// followAsks prints each new ask as the live event stream brings it,
// starting with stream (nil: not open). When the stream breaks it
// reconnects after the last event it read, so no ask is missed; when the
// server no longer keeps that far back, or the first stream never
// opened, it lists the pending asks again once connected. A server
// without the stream is asked every second instead. It closes the
// streams it opens.
func followAsks(ctx context.Context, t terminalChannel, c *client.Client, stream *client.Stream, seen map[string]bool, out, errOut io.Writer) error {
	last, relist := "", stream == nil
	reads := askReads{t: t, errOut: errOut}
	for {
		if stream == nil {
			s, err := c.Events(ctx, last)
			var api *client.Error
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, client.ErrResumeTooOld):
				last, relist = "", true
				continue
			case errors.As(err, &api) && (api.Status == 404 || api.Code == "events_unavailable"):
				return pollAsks(ctx, t, c, seen, out, errOut)
			}
			if retry, err := reads.judge(err); err != nil {
				return err
			} else if retry {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
				continue
			}
			stream = s
		}
		ev, err := stream.Next()
		if err != nil {
			// The server ended the stream (a restart, a reader too slow):
			// go on after the last event read.
			stream.Close()
			stream = nil
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		last = stream.LastID()
		switch {
		case ev.Kind == client.EventReady && relist:
			asks, err := pendingAsks(ctx, c, seen)
			if err != nil {
				stream.Close()
				stream = nil
				continue
			}
			relist = false
			if err := printAsks(out, asks); err != nil {
				return err
			}
		case ev.Kind == client.EventAsk && ev.Decision != nil && ev.Decision.Answer == nil && !seen[ev.Decision.DecisionID]:
			seen[ev.Decision.DecisionID] = true
			if err := printAsks(out, []client.Event{*ev.Decision}); err != nil {
				return err
			}
		}
	}
}

// pollAsks lists the new asks every second, for a server without the
// live event stream.
func pollAsks(ctx context.Context, t terminalChannel, c *client.Client, seen map[string]bool, out, errOut io.Writer) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	reads := askReads{t: t, errOut: errOut}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		asks, err := pendingAsks(ctx, c, seen)
		if ctx.Err() != nil {
			return nil
		}
		if retry, err := reads.judge(err); err != nil {
			return err
		} else if retry {
			continue
		}
		if err := printAsks(out, asks); err != nil {
			return err
		}
	}
}

// askReads judges the outcome of each read of the asks: a refusal (an
// answer under 500) ends the follow; any other error is said once, on
// errOut, and the read is tried again until one succeeds.
type askReads struct {
	t       terminalChannel
	errOut  io.Writer
	failing bool
}

// judge returns the error that ends the follow, or whether to read again.
func (r *askReads) judge(err error) (retry bool, _ error) {
	var api *client.Error
	switch {
	case err == nil:
		r.failing = false
		return false, nil
	case errors.As(err, &api) && api.Status < 500:
		return false, r.t.failed("asks", err)
	}
	if !r.failing {
		fmt.Fprintf(r.errOut, "pdp: %v; still trying\n", r.t.failed("asks", err))
	}
	r.failing = true
	return true, nil
}
