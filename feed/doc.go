// Package feed is the PDP's live change feed (GET /v1/events): a Hub
// reads the store's change log (ChangeLog) when told that something
// committed, keeps the most recent changes in a bounded ring, and hands
// every subscriber the changes after the last one it saw — from the ring,
// or from the log for older ones. A subscriber that falls behind its
// bounded buffer is dropped; it resumes from its last id without a gap.
//
// The Hub implements Feed. With one SQLite file the engine and the
// API notify it; a store shared by replicas (PostgreSQL) notifies it when
// another replica commits a change, and the Hub also rereads the log on
// a timer, so no change is missed either way.
package feed
