package schema

// PendingAsks indexes the asks nobody has answered, which the expiry
// sweep reads oldest first: the index holds only them, so the sweep
// costs the pending asks, not the trail.
const PendingAsks = `
CREATE INDEX decisions_pending ON decisions(time, id) WHERE decision = 'ask' AND answer IS NULL;
`
