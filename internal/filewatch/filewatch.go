// Package filewatch is the one loop that reloads something from files:
// the policy source and the TLS certificate both use it.
package filewatch

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Settle is how long a burst of file events (write, chmod, rename) is
// let finish before the reload.
const Settle = 200 * time.Millisecond

// Options say what to watch.
type Options struct {
	// Dirs are the directories whose events mean a reload: the files'
	// own, so a replace by rename (a secret volume's symbolic-link swap)
	// is seen. None: polling only.
	Dirs []string
	// Poll is how often to reload whatever the events say (default a
	// minute).
	Poll time.Duration
	// Signals, when set, each mean a reload (SIGHUP).
	Signals <-chan os.Signal
	// Logger hears of a directory that cannot be watched; NoWatch is
	// that warning's message ("no file watch; polling only").
	Logger  *slog.Logger
	NoWatch string
}

// Run calls reload on the directories' events once they settle, every
// Poll, and on every signal, until ctx ends. A directory that cannot be
// watched is a warning, and polling goes on.
func Run(ctx context.Context, o Options, reload func()) {
	if o.Poll <= 0 {
		o.Poll = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NoWatch == "" {
		o.NoWatch = "no file watch; polling only"
	}
	var events <-chan fsnotify.Event
	if len(o.Dirs) > 0 {
		if fw, err := fsnotify.NewWatcher(); err != nil {
			o.Logger.Warn(o.NoWatch, "err", err)
		} else {
			defer fw.Close()
			for _, dir := range o.Dirs {
				if err := fw.Add(dir); err != nil {
					o.Logger.Warn(o.NoWatch, "dir", dir, "err", err)
				}
			}
			events = fw.Events
		}
	}
	ticker := time.NewTicker(o.Poll)
	defer ticker.Stop()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-events:
			settle = time.After(Settle)
		case <-settle:
			settle = nil
			reload()
		case <-ticker.C:
			reload()
		case <-o.Signals:
			reload()
		}
	}
}
