package tlsserve

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configure Watch.
type WatchOptions struct {
	// Poll is how often the files are read again when no file event
	// came (a file system without notifications); default one minute.
	Poll   time.Duration
	Logger *slog.Logger
	// Observer, when set, counts the reloads refused.
	Observer Observer
	// Reloaded, when set, is told of every reload attempt (tests).
	Reloaded func(changed bool, err error)
}

// Observer counts the reloads refused, for metrics.
type Observer interface {
	// TLSReloadRefused: files that changed were not taken and the
	// certificate before keeps serving; reason is RefusedInvalid,
	// RefusedExpired or RefusedNotYetValid.
	TLSReloadRefused(reason string)
}

// Watch reloads the certificate until ctx ends: on SIGHUP, on file
// events in the files' directories (a replace by rename, as a secret
// volume's symbolic-link swap does, is seen), and every Poll. A reload
// that fails, or finds a certificate outside its validity, is logged and
// counted (Observer), and the certificate before keeps serving.
func (c *Certificate) Watch(ctx context.Context, opts WatchOptions) {
	if opts.Poll <= 0 {
		opts.Poll = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var events <-chan fsnotify.Event
	if fw, err := fsnotify.NewWatcher(); err != nil {
		opts.Logger.Warn("no file watch of the TLS certificate; SIGHUP and polling only", "err", err)
	} else {
		defer fw.Close()
		for _, dir := range uniqueDirs(c.certFile, c.keyFile) {
			if err := fw.Add(dir); err != nil {
				opts.Logger.Warn("no file watch of the TLS certificate; SIGHUP and polling only", "dir", dir, "err", err)
			}
		}
		events = fw.Events
	}
	c.warnExpiry(opts.Logger)
	ticker := time.NewTicker(opts.Poll)
	defer ticker.Stop()
	// File events come in bursts (write, chmod, rename): settle first.
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
			settle = time.After(200 * time.Millisecond)
		case <-settle:
			settle = nil
			c.reload(opts)
		case <-ticker.C:
			c.reload(opts)
		case <-hup:
			c.reload(opts)
		}
	}
}

func (c *Certificate) reload(opts WatchOptions) {
	changed, err := c.Reload()
	switch {
	case err != nil:
		reason := RefusedReason(err)
		leaf := c.Leaf()
		opts.Logger.Error("TLS certificate not reloaded; the one before keeps serving", "reason", reason, "err", err,
			"serving", leaf.Subject.String(), "serving_not_after", leaf.NotAfter)
		if opts.Observer != nil {
			opts.Observer.TLSReloadRefused(reason)
		}
	case changed:
		leaf := c.Leaf()
		opts.Logger.Info("TLS certificate reloaded", "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
		c.warnExpiry(opts.Logger)
	}
	if opts.Reloaded != nil {
		opts.Reloaded(changed, err)
	}
}

func (c *Certificate) warnExpiry(logger *slog.Logger) {
	leaf := c.Leaf()
	if state := expiry(leaf, time.Now()); state != "" {
		logger.Warn("the TLS certificate "+state, "subject", leaf.Subject.String(), "not_before", leaf.NotBefore, "not_after", leaf.NotAfter)
	}
}

func uniqueDirs(files ...string) []string {
	var dirs []string
	seen := map[string]bool{}
	for _, f := range files {
		if d := filepath.Dir(f); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}
