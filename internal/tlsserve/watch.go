package tlsserve

import (
	"context"
	"github.com/toolperm/pdp/internal/filewatch"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
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
	c.warnExpiry(opts.Logger)
	filewatch.Run(ctx, filewatch.Options{Dirs: uniqueDirs(c.certFile, c.keyFile), Poll: opts.Poll, Signals: hup, Logger: opts.Logger,
		NoWatch: "no file watch of the TLS certificate; SIGHUP and polling only"}, func() { c.reload(opts) })
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
