package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// apiError is an error with its HTTP status and a stable code.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

func fail(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// handleError writes every error as {"error":{"code","message"}}.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var refused *pdp.Refusal
	if errors.As(err, &refused) {
		// A refusal of what the request holds is recorded like one of the
		// role check; a hidden one as the 404 it answers.
		code := http.StatusForbidden
		if refused.Hidden != nil {
			code = http.StatusNotFound
		}
		s.refuse(c, code, callerOf(c).name, refused.Reason)
	}
	ae := classify(err)
	if ae.Status >= 500 {
		s.cfg.Logger.Error("request failed", "method", c.Request().Method, "path", c.Path(), "status", ae.Status, "err", err)
	}
	body := api.Error{Error: api.ErrorDetail{Code: ae.Code, Message: ae.Message}}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(ae.Status)
		return
	}
	_ = c.JSON(ae.Status, body)
}

// classify maps errors from the engine, the store and Echo to API errors.
func classify(err error) *apiError {
	var ae *apiError
	var bad *pdp.Error
	var refused *pdp.Refusal
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &refused) && refused.Hidden == nil:
		return fail(http.StatusForbidden, "forbidden", "%s", refused.Message)
	case errors.As(err, &bad):
		status := http.StatusBadRequest
		if bad.Kind != nil {
			status = classify(bad.Kind).Status
		}
		return &apiError{Status: status, Code: bad.Code, Message: bad.Message}
	case errors.Is(err, pdp.ErrStoreUnavailable):
		return fail(http.StatusServiceUnavailable, "store_unavailable", "%v", err)
	case errors.Is(err, pdp.ErrAuditUnavailable):
		return fail(http.StatusServiceUnavailable, "audit_unavailable", "the decision could not be recorded in the audit trail; the call must not run")
	case errors.Is(err, pdp.ErrNotFound):
		return fail(http.StatusNotFound, "not_found", "%v", err)
	case errors.Is(err, pdp.ErrExists):
		return fail(http.StatusConflict, "already_exists", "%v", err)
	case errors.Is(err, pdp.ErrExpired):
		return fail(http.StatusConflict, "expired", "%v", err)
	case errors.Is(err, pdp.ErrConflict):
		return fail(http.StatusConflict, "conflict", "%v", err)
	case errors.Is(err, pdp.ErrNotGrantable):
		return fail(http.StatusUnprocessableEntity, "not_grantable", "%v", err)
	case errors.As(err, &he):
		return echoError(he)
	}
	return fail(http.StatusInternalServerError, "internal", "internal error: %v", err)
}

func echoError(he *echo.HTTPError) *apiError {
	switch he.Code {
	case http.StatusRequestEntityTooLarge:
		return fail(he.Code, "body_too_large", "the request body is larger than the configured limit")
	case http.StatusNotFound:
		return fail(he.Code, "not_found", "no such route")
	case http.StatusMethodNotAllowed:
		return fail(he.Code, "method_not_allowed", "method not allowed on this route")
	}
	return fail(he.Code, "http_error", "%v", he.Message)
}

// storeUnavailable: without the session there is no decision, and no
// allow. Bad input, refusals and what the store says of an id pass
// through; anything else is a 503.
func storeUnavailable(err error) error {
	var bad *pdp.Error
	var refused *pdp.Refusal
	if err == nil || errors.As(err, &bad) || errors.As(err, &refused) || errors.Is(err, pdp.ErrNotFound) || errors.Is(err, pdp.ErrExists) {
		return err
	}
	return fail(http.StatusServiceUnavailable, "store_unavailable", "the session store is unavailable: %v", err)
}
