package postgres

import (
	"context"
	"time"
)

// endWaits removes this process's waits from ask_waiters as it closes,
// so no other replica shows them.
func (s *Store) endWaits() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.EndWaits(ctx) // a failure leaves them counting until their ends
}
