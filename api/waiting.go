package api

import "time"

// Waiter is one runtime waiting on an ask now (GET
// /v1/decisions/{id}?wait=): the token it waits with ("anonymous" where
// the server has no tokens) and since when.
type Waiter struct {
	By    string    `json:"by"`
	Since time.Time `json:"since"`
}

// AnonymousWaiter is the waiter's name on a server without tokens.
const AnonymousWaiter = "anonymous"
