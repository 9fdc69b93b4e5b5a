package app

import (
	"context"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// deadlineAudit gives each decision's audit write server.decision_timeout
// from when it is handed over: the group commit carries the deadline to
// the transaction, which fails whole past it (a 503, nothing written).
type deadlineAudit struct {
	pdp.AuditLog
	timeout time.Duration
}

func (a deadlineAudit) Record(ctx context.Context, ev pdp.AuditRecord) error {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	return a.AuditLog.Record(ctx, ev)
}
