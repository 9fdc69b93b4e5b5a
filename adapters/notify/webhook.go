package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The headers of a webhook's POST.
const (
	// SignatureHeader is "sha256=" and the hex HMAC-SHA256 of the raw
	// body with the sink's secret.
	SignatureHeader = "X-PDP-Signature"
	// TimestampHeader is the time the attempt was sent (RFC 3339), the
	// body's sent_at: a receiver refuses one too old, against replay.
	TimestampHeader = "X-PDP-Timestamp"
	// EventHeader names the event (ask, answer, expired, level).
	EventHeader = "X-PDP-Event"
)

// Sign is the X-PDP-Signature of body with secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// poster POSTs JSON to one URL: no redirects (a sink's URL is where the
// event goes, nowhere else), the answer read up to 64 KiB, 2xx a success.
type poster struct {
	url    string
	client *http.Client
}

func newPoster(url string) poster {
	return poster{url: url, client: &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (p poster) post(ctx context.Context, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolperm-pdp")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// webhook POSTs the event as JSON, signed.
type webhook struct {
	poster
	secret []byte
	now    func() time.Time
}

func newWebhook(s *Sink) *webhook {
	return &webhook{poster: newPoster(s.URL), secret: s.Secret, now: time.Now}
}

func (w *webhook) deliver(ctx context.Context, ev *Event) error {
	body, sentAt, err := ev.body(w.now())
	if err != nil {
		return errors.Join(errPermanent, err)
	}
	return w.post(ctx, body, http.Header{
		SignatureHeader: {Sign(w.secret, body)},
		TimestampHeader: {sentAt},
		EventHeader:     {ev.Event},
	})
}

// errPermanent marks an event no attempt can send.
var errPermanent = errors.New("cannot be sent")
