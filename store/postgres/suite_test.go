package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/store/postgres"
	"github.com/toolperm/pdp/store/storetest"
)

// TestStoreSuite runs the suite every storage backend passes, each case on
// a database of its own in one throwaway cluster.
func TestStoreSuite(t *testing.T) {
	cluster := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := postgres.Open(t.Context(), newDatabase(t, cluster), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

var databases atomic.Int64

// newDatabase creates an empty database in the cluster and returns its URL.
func newDatabase(t testing.TB, cluster string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("pdp_%d", databases.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cluster)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestOutcomesRecordedAsAnswersMoveApart: migration 5 moves the outcomes
// earlier versions recorded as answers to the outcome columns.
func TestOutcomesRecordedAsAnswersMoveApart(t *testing.T) {
	db := newDatabase(t, pgtest.Start(t))
	s, err := postgres.Open(t.Context(), db, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	storetest.OutcomesMoved(t, s, func(ctx context.Context, sql string) error {
		_, err := conn.Exec(ctx, sql)
		return err
	})
}
