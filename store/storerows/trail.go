package storerows

import "github.com/toolperm/pdp/api"

// EachInChunks calls fn with every decision read returns, a chunk at a
// time along the id index, until a chunk is short or fn returns an
// error. read gets the id to start from — at (first) or after it — and
// reads at most chunk events, oldest first, each read its own short
// query so a long export holds nothing open.
func EachInChunks(from string, chunk int, read func(from string, first bool) ([]api.Event, error), fn func(api.Event) error) error {
	for first := true; ; first = false {
		events, err := read(from, first)
		if err != nil {
			return err
		}
		for _, rec := range events {
			if err := fn(rec); err != nil {
				return err
			}
		}
		if len(events) < chunk {
			return nil
		}
		from = events[len(events)-1].DecisionID
	}
}
