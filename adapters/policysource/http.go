package policysource

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// fetched is one poll of an HTTP bundle source.
type fetched struct {
	body        []byte
	etag        string
	notModified bool
}

// fetch gets the bundle, sending If-None-Match when an ETag is known.
func fetch(ctx context.Context, client *http.Client, c Config, etag string) (fetched, error) {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Path, nil)
	if err != nil {
		return fetched{}, err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fetched{}, fmt.Errorf("downloading the bundle: %w", err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return fetched{notModified: true, etag: etag}, nil
	case http.StatusOK:
	default:
		return fetched{}, fmt.Errorf("downloading the bundle: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes()+1))
	if err != nil {
		return fetched{}, fmt.Errorf("downloading the bundle: %w", err)
	}
	if int64(len(body)) > c.maxBytes() {
		return fetched{}, fmt.Errorf("the bundle is over the %d-byte limit", c.maxBytes())
	}
	return fetched{body: body, etag: resp.Header.Get("ETag")}, nil
}
