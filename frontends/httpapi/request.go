package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
)

// decodeJSON reads the body into v strictly: one JSON object, no unknown
// fields. The body limit's own error (413) passes through.
func decodeJSON(c echo.Context, v any) error {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he
		}
		return fail(http.StatusBadRequest, "invalid_body", "reading the body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail(http.StatusBadRequest, "invalid_json", "the request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(http.StatusBadRequest, "invalid_json", "invalid JSON body: %v", err)
	}
	if dec.More() {
		return fail(http.StatusBadRequest, "invalid_json", "invalid JSON body: more than one JSON value")
	}
	if err := api.DuplicateKeys(raw); err != nil {
		return fail(http.StatusBadRequest, "ambiguous_argument", "%v: which one a tool reads is its own business, so the body is refused", err)
	}
	return nil
}

// listLimit reads ?limit= of a list route: 1 to maxListLimit, default 50.
func listLimit(c echo.Context) (int, error) {
	l := c.QueryParam("limit")
	if l == "" {
		return defaultListLimit, nil
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > maxListLimit {
		return 0, fail(http.StatusBadRequest, "invalid_limit", "limit must be a number from 1 to %d", maxListLimit)
	}
	return n, nil
}

// listed answers a plain list route: up to ?limit= items of list, newest
// first, under key.
func listed[T any](c echo.Context, key string, list func(ctx context.Context, limit int) ([]T, error)) error {
	limit, err := listLimit(c)
	if err != nil {
		return err
	}
	items, err := list(c.Request().Context(), limit)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, map[string]any{key: items})
}
