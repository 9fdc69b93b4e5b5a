package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
)

// When the server starts shutting down (Config.Stopping closes), every
// parked wait answers at once with the decision as it stands, a wait
// asked for afterwards does not park, and the event streams end; an
// answered decision is still answered.
func TestStoppingAnswersParkedWaits(t *testing.T) {
	stopping := make(chan struct{})
	logger, parked := logged("waiting for an answer")
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Stopping, c.MaxWait, c.Logger = stopping, time.Hour, logger
	})
	stream := s.events("")
	pending := s.decide(shell("stop", "make docs"))["decision_id"].(string)
	answered := s.decide(shell("stop", "make lint"))["decision_id"].(string)
	s.mustStatus(200, "POST", "/v1/decisions/"+answered+"/answer", map[string]any{"answer": "deny"})

	// The stream holds both asks and the answer.
	for range 3 {
		next(t, stream, 10*time.Second)
	}

	type result struct {
		rec api.Event
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			var r result
			resp, err := http.Get(s.srv.URL + "/v1/decisions/" + pending + "?wait=1h")
			if r.err = err; err == nil {
				defer resp.Body.Close()
				if r.err = json.NewDecoder(resp.Body).Decode(&r.rec); r.err == nil && resp.StatusCode != http.StatusOK {
					r.err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			results <- r
		}()
	}
	for range 2 {
		if id := attr(<-parked, "decision_id"); id != pending {
			t.Fatalf("parked on %s", id)
		}
	}
	close(stopping)
	for range 2 {
		r := <-results
		if r.err != nil || r.rec.DecisionID != pending || r.rec.Decision.Decision != "ask" || r.rec.Answer != nil {
			t.Fatalf("a parked wait got %+v, %v", r.rec, r.err)
		}
	}
	if code, rec := s.call("GET", "/v1/decisions/"+pending+"?wait=1h", nil); code != http.StatusOK || rec["answer"] != nil {
		t.Fatalf("a wait after shutting down began: %d %v", code, rec)
	}
	if code, rec := s.call("GET", "/v1/decisions/"+answered+"?wait=1h", nil); code != http.StatusOK || rec["answer"] == nil {
		t.Fatalf("an answered decision after shutting down began: %d %v", code, rec)
	}
	if _, err := stream.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the event stream ended with %v", err)
	}
}
