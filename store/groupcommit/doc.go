// Package groupcommit writes items in shared transactions: one goroutine
// takes every item waiting, hands them to a callback that writes them in
// one transaction, and answers each caller only after that callback
// returns — durability without a transaction per item. The storage
// backends use it for the audit trail; the SQL stays in each backend.
package groupcommit
