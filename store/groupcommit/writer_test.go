package groupcommit_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/store/groupcommit"
)

var errClosed = errors.New("closed")

func TestWriter(t *testing.T) {
	failure := errors.New("disk full")
	cases := []struct {
		name    string
		fail    error
		wantErr error
	}{
		{name: "committed", fail: nil, wantErr: nil},
		{name: "failed", fail: failure, wantErr: failure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var written []int
			var observed int
			w := groupcommit.New(func(_ context.Context, batch []int) error {
				mu.Lock()
				defer mu.Unlock()
				if c.fail == nil {
					written = append(written, batch...)
				}
				return c.fail
			}, groupcommit.Options{MaxBatch: 4, Closed: errClosed, Observe: func(n int, _ time.Duration, _ error) {
				mu.Lock()
				observed += n
				mu.Unlock()
			}})
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range errs {
				wg.Go(func() { errs[i] = w.Submit(context.Background(), i) })
			}
			wg.Wait()
			w.Close()
			for i, err := range errs {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("item %d: %v, want %v", i, err, c.wantErr)
				}
			}
			st := w.Stats()
			if c.fail == nil && (len(written) != 20 || st.Items != 20 || st.MaxBatch > 4 || st.Transactions < 5) {
				t.Fatalf("written %d, stats %+v", len(written), st)
			}
			if c.fail != nil && (st.Items != 0 || st.Errors < 5) {
				t.Fatalf("stats %+v", st)
			}
			if observed != 20 {
				t.Fatalf("observed %d items", observed)
			}
			if err := w.Submit(context.Background(), 99); !errors.Is(err, errClosed) {
				t.Fatalf("after close: %v", err)
			}
		})
	}
}

// Submitters that become runnable together share a transaction even on
// one processor: the writer lets them queue before it commits the first.
func TestSubmittersReadyTogetherShareATransaction(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var sizes []int
	w := groupcommit.New(func(_ context.Context, batch []int) error {
		sizes = append(sizes, len(batch))
		return nil
	}, groupcommit.Options{MaxBatch: 64, Closed: errClosed})
	defer w.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Submit(context.Background(), i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if st := w.Stats(); st.Items != 8 || st.Transactions > 2 {
		t.Fatalf("8 submitters ready together took %d transactions (sizes %v)", st.Transactions, sizes)
	}
}
