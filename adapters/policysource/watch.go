package policysource

import (
	"context"
	"errors"
	"github.com/toolperm/pdp/internal/filewatch"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// Observer is told of every activation attempt (metrics).
type Observer interface {
	PolicyActivated(p *pdp.Policy, err error)
}

// Status is what GET /v1/policy shows.
type Status struct {
	Revision    string       `json:"revision"`
	Source      string       `json:"source"`
	Kind        Kind         `json:"kind"`
	ActivatedAt time.Time    `json:"activated_at"`
	LastCheck   time.Time    `json:"last_check"`
	LastError   *StatusError `json:"last_error"`
}

// StatusError is why the source's newest version is not the active
// policy: the failed attempt to load it. It is cleared once a version
// after it is activated, or the source holds the active version again.
type StatusError struct {
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// WatchOptions tune a Watcher; zero values are sane.
type WatchOptions struct {
	// Poll is how often the source is checked besides file events
	// (default 5s).
	Poll     time.Duration
	Observer Observer
	Logger   *slog.Logger
	Client   *http.Client
}

// Watcher keeps the engine's policy current with its source.
type Watcher struct {
	cfg    Config
	engine *pdp.Engine
	opts   WatchOptions

	mu           sync.Mutex
	status       Status
	lastDigest   string // content of the last attempt, good or bad
	activeDigest string // content of the active policy
	etag         string
}

// NewWatcher returns a watcher of cfg's source for engine.
func NewWatcher(cfg Config, engine *pdp.Engine, opts WatchOptions) *Watcher {
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{cfg: cfg, engine: engine, opts: opts}
	w.status.Kind = KindOf(cfg.Path)
	w.status.Source = cfg.Path
	if w.status.Kind == Builtin {
		w.status.Source = "builtin"
	}
	return w
}

// Status returns the active revision, its source and, while the source's
// newest version failed to load, why.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// Run checks the source until ctx ends: on file events (directory and
// tarball sources, watching the containing directory so a replace by
// rename is seen) and every Poll. The built-in policy never changes.
func (w *Watcher) Run(ctx context.Context) {
	kind := KindOf(w.cfg.Path)
	if kind == Builtin {
		return
	}
	var dirs []string
	switch kind {
	case Directory:
		dirs = []string{w.cfg.Path}
	case Tarball:
		dirs = []string{filepath.Dir(w.cfg.Path)}
	}
	filewatch.Run(ctx, filewatch.Options{Dirs: dirs, Poll: w.opts.Poll, Logger: w.opts.Logger}, func() { w.Reload(ctx) })
}

// Reload makes one attempt: load the source; if it changed, compile and
// test it, then activate it. The first call loads the initial policy. It returns whether a new policy was
// activated, and the error of a failed attempt (the old policy keeps
// serving).
func (w *Watcher) Reload(ctx context.Context) (bool, error) {
	p, digest, err := w.load(ctx)
	w.mu.Lock()
	w.status.LastCheck = time.Now()
	unchanged := errors.Is(err, errUnchanged)
	if unchanged && w.lastDigest == w.activeDigest {
		// The source holds the active policy again (a read that failed
		// on the way, e.g. a directory being replaced): no error stands.
		w.status.LastError = nil
	}
	w.mu.Unlock()
	if unchanged {
		return false, nil
	}
	if err == nil {
		err = p.Check(ctx)
	}
	if err == nil {
		err = w.engine.Swap(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if digest != "" {
		w.lastDigest = digest // a broken version is not retried until it changes
	}
	if w.opts.Observer != nil {
		w.opts.Observer.PolicyActivated(p, err)
	}
	now := time.Now()
	if err != nil {
		w.status.LastError = &StatusError{Message: err.Error(), At: now}
		w.opts.Logger.Error("policy not activated; the last good one keeps serving", "source", w.status.Source, "err", err)
		return false, err
	}
	// The error was the previous version's: the active policy is now
	// the source's newest (the refusal stays in the log and the metric).
	w.status.Revision, w.status.ActivatedAt, w.status.LastError = p.Revision, now, nil
	w.activeDigest = digest
	w.opts.Logger.Info("policy activated", "source", w.status.Source, "revision", p.Revision)
	return true, nil
}

var errUnchanged = errors.New("unchanged")

// load reads the source. It returns errUnchanged when the content is the
// one last tried, and the content's digest otherwise.
func (w *Watcher) load(ctx context.Context) (*pdp.Policy, string, error) {
	w.mu.Lock()
	last, etag := w.lastDigest, w.etag
	w.mu.Unlock()
	if err := w.cfg.Validate(); err != nil {
		return nil, "", err
	}
	switch KindOf(w.cfg.Path) {
	case Builtin:
		if last != "" {
			return nil, "", errUnchanged
		}
		p, err := LoadFS(ctx, w.cfg.Builtin, "builtin")
		if err != nil {
			return nil, "", err
		}
		return p, p.Revision, nil
	case Directory:
		d, err := ContentRevision(os.DirFS(w.cfg.Path), w.cfg.Path)
		if err != nil {
			return nil, "", err
		}
		if d == last {
			return nil, "", errUnchanged
		}
		p, err := LoadDir(ctx, w.cfg.Path)
		return p, d, err
	case Tarball:
		raw, err := os.ReadFile(w.cfg.Path)
		if err != nil {
			return nil, "", err
		}
		if digest(raw) == last {
			return nil, "", errUnchanged
		}
		p, err := w.cfg.compileBundle(ctx, raw, w.cfg.Path)
		return p, digest(raw), err
	case HTTP:
		f, err := fetch(ctx, w.opts.Client, w.cfg, etag)
		if err != nil {
			return nil, "", err
		}
		if f.notModified {
			return nil, "", errUnchanged
		}
		w.mu.Lock()
		w.etag = f.etag
		w.mu.Unlock()
		if digest(f.body) == last {
			return nil, "", errUnchanged
		}
		p, err := w.cfg.compileBundle(ctx, f.body, w.cfg.Path)
		return p, digest(f.body), err
	}
	return nil, "", errUnchanged
}
