package app

import (
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/config"
)

// TestASinkCarriesEverySetting: what config.NotifySink says reaches the
// sink notify builds, the queue's byte bound included.
func TestASinkCarriesEverySetting(t *testing.T) {
	c := config.NotifySink{Name: "desk", Kind: "command", Command: []string{"notify-send"}, Events: []string{"ask"},
		Filter:  config.NotifyFilter{SessionPrefix: "s", CapabilityPrefix: "shell.", Source: "rule"},
		Timeout: 3 * time.Second, MaxAttempts: 2, Backoff: time.Second, Queue: 7, QueueBytes: 4096, AnswerLinks: true, AllowGrants: true}
	s, err := sinkOf(c, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.Queue != 7 || s.QueueBytes != 4096 || s.Timeout != 3*time.Second || s.MaxAttempts != 2 || s.Backoff != time.Second ||
		!s.AnswerLinks || !s.AllowGrants || s.Filter.CapabilityPrefix != "shell." || s.Filter.SessionPrefix != "s" || s.Filter.Source != "rule" {
		t.Fatalf("the sink lost a setting: %+v", s)
	}
}
