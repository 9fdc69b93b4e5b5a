package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/internal/pgtest"
)

func TestStartServesAndStops(t *testing.T) {
	var url string
	t.Run("running", func(t *testing.T) {
		url = pgtest.Start(t, "max_connections=20")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatalf("connecting to %s: %v", url, err)
		}
		defer conn.Close(ctx)
		var one int
		if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("select 1 = %d, %v", one, err)
		}
		var setting string
		if err := conn.QueryRow(ctx, "show max_connections").Scan(&setting); err != nil || setting != "20" {
			t.Fatalf("max_connections = %q, %v; want the setting passed to Start", setting, err)
		}
	})
	if t.Failed() || url == "" {
		return // skipped or failed above
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, url); err == nil {
		conn.Close(ctx)
		t.Fatal("the cluster still answers after its test ended")
	}
}

func TestClustersAreSeparate(t *testing.T) {
	a, b := pgtest.Start(t), pgtest.Start(t)
	if a == b {
		t.Fatalf("two clusters share the URL %s", a)
	}
}
