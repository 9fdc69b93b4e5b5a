package decisionlog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/pdp"
)

// Stdout is the path that means the process's standard output.
const Stdout = "-"

// BufferBytes is the size of the write buffer: a line is written out
// when the buffer fills, at the latest after the flush interval.
const BufferBytes = 64 << 10

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("decision log closed")

// Options configure a Writer; the zero value is usable.
type Options struct {
	// Mask lists argument keys whose values are written as "***", at any
	// depth of the arguments, whatever their case.
	Mask []string
	// ReplicaID is labels.id (default: the host name).
	ReplicaID string
	// Version is labels.version (default: the binary's module version).
	Version string
	// FlushInterval is the longest a line waits in the buffer (default 1s).
	FlushInterval time.Duration
	// Logger reports write failures (default: discarded).
	Logger *slog.Logger
}

// Stats counts a Writer's lines.
type Stats struct {
	Lines   int64 // lines written out
	Dropped int64 // lines lost to write errors
}

// Writer appends one JSON line per decision. It is safe for concurrent
// use; Close flushes everything buffered.
type Writer struct {
	out      io.Writer
	file     *os.File // nil when the output is not ours to close
	mask     mask
	labels   map[string]string
	logger   *slog.Logger
	interval time.Duration

	mu      sync.Mutex
	buf     *bufio.Writer
	pending int64 // lines in buf
	closed  bool
	stats   Stats

	stop, done chan struct{}
}

// Open returns a Writer appending to the file at path (created if
// missing), or writing to standard output when path is "-".
func Open(path string, o Options) (*Writer, error) {
	if path == Stdout {
		return newWriter(os.Stdout, nil, o), nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("opening the decision log: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the decision log %s: %w", path, err)
	}
	return newWriter(f, f, o), nil
}

// endLine ends a last line left unfinished (a write cut short by a full
// disk or a crash of the machine), so the first new line is not glued to it.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// New returns a Writer writing to out, which Close flushes but does not close.
func New(out io.Writer, o Options) *Writer {
	return newWriter(out, nil, o)
}

func newWriter(out io.Writer, file *os.File, o Options) *Writer {
	if o.ReplicaID == "" {
		o.ReplicaID, _ = os.Hostname()
	}
	if o.Version == "" {
		o.Version = moduleVersion()
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Writer{
		out: out, file: file, mask: newMask(o.Mask), logger: o.Logger, interval: o.FlushInterval,
		labels: map[string]string{"id": o.ReplicaID, "version": o.Version},
		buf:    bufio.NewWriterSize(out, BufferBytes),
		stop:   make(chan struct{}), done: make(chan struct{}),
	}
	go w.flushEvery()
	return w
}

// moduleVersion is the version of this build (internal/buildinfo): the
// version the release script stamped, else the module's tag,
// pseudo-version or "(devel)".
func moduleVersion() string {
	return buildinfo.Read().Version
}

// Record appends the line of ev to the buffer. A failure is reported on
// the Writer's logger and counted as dropped, as well as returned.
func (w *Writer) Record(_ context.Context, ev pdp.AuditRecord) error {
	line, err := w.line(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		err = ErrClosed
	case err == nil:
		// Write out whole lines only, so a process killed between two
		// writes leaves no line cut short: a line that does not fit sends
		// the buffer out first (a line longer than the buffer goes out
		// in one write of its own).
		if len(line) > w.buf.Available() && w.buf.Buffered() > 0 {
			if ferr := w.flushLocked(); ferr != nil {
				w.pending++
				return w.failed(ferr)
			}
		}
		w.pending++
		if _, werr := w.buf.Write(line); werr != nil {
			return w.failed(werr)
		}
		return nil
	}
	w.stats.Dropped++
	w.logger.Error("decision not exported to the decision log", "decision_id", ev.Decision.DecisionID, "err", err)
	return err
}

// line is the JSON line of ev, newline included.
func (w *Writer) line(ev pdp.AuditRecord) ([]byte, error) {
	e, err := newEvent(ev, w.labels, w.mask)
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding decision %s: %w", ev.Decision.DecisionID, err)
	}
	return append(line, '\n'), nil
}

// Flush writes out every buffered line.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.pending == 0 && w.buf.Buffered() == 0 {
		return nil
	}
	if err := w.buf.Flush(); err != nil {
		return w.failed(err)
	}
	w.stats.Lines += w.pending
	w.pending = 0
	return nil
}

// failed drops the buffered lines after a write error, so the next lines
// are tried afresh (a full disk that frees up loses only what it refused).
func (w *Writer) failed(err error) error {
	w.logger.Error("decision log write failed; lines dropped", "lines", w.pending, "err", err)
	w.stats.Dropped += w.pending
	w.pending = 0
	w.buf.Reset(w.out)
	return fmt.Errorf("writing the decision log: %w", err)
}

// flushEvery flushes the buffer every interval until Close.
func (w *Writer) flushEvery() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = w.Flush() // reported by failed
		case <-w.stop:
			return
		}
	}
}

// Stats returns the counts so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Close flushes every buffered line, syncs and closes a file it opened,
// and refuses later records. It is safe to call more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.flushLocked()
	if w.file != nil {
		if fi, serr := w.file.Stat(); serr == nil && fi.Mode().IsRegular() {
			err = errors.Join(err, w.file.Sync())
		}
		err = errors.Join(err, w.file.Close())
	}
	return err
}

// Tee returns an audit log that records every event in primary, then,
// once primary has committed it, appends it to log. A decision primary
// refuses is not logged (it is answered as a deny and is not in the
// trail); a failure of log is reported by the Writer and does not fail
// the record, so the answer always matches the trail. A nil primary
// logs only; a nil log is primary itself.
func Tee(primary pdp.AuditLog, log *Writer) pdp.AuditLog {
	switch {
	case log == nil:
		return primary
	case primary == nil:
		return logOnly{log}
	}
	return tee{primary: primary, log: log}
}

type tee struct {
	primary pdp.AuditLog
	log     *Writer
}

func (t tee) Record(ctx context.Context, ev pdp.AuditRecord) error {
	if err := t.primary.Record(ctx, ev); err != nil {
		return err
	}
	_ = t.log.Record(ctx, ev) // the Writer reports its own failures
	return nil
}

// logOnly is the audit log of a process without a trail (the hook's
// local mode): the export is all there is, and its failure is not the
// decision's.
type logOnly struct{ log *Writer }

func (l logOnly) Record(ctx context.Context, ev pdp.AuditRecord) error {
	_ = l.log.Record(ctx, ev) // the Writer reports its own failures
	return nil
}
