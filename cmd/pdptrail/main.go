// Command pdptrail builds a synthetic audit trail through the SQLite
// store, and measures the list queries of a server serving one.
//
//	go run ./cmd/pdptrail generate -db /tmp/trail.db -events 10000000
//	pdp serve --db /tmp/trail.db &
//	go run ./cmd/pdptrail lists -url http://127.0.0.1:8181 -rounds 200
//
// generate writes every event with Store.Record (group commit, as the
// server does; synchronous=OFF, since a lost trail is rebuilt), times
// spread evenly over -span ending now, so decision ids and times rise
// together as in a real trail. Sessions are named trail-00000…; sixteen
// run at a time, each for a thousand events. The mix: 70% allow, 20%
// deny, 10% ask; sources level, rule, mode, grant (only ever allow),
// default and parent.
//
// lists asks GET /v1/decisions for every combination of session,
// decision, source, since and before, and for queries that match
// nothing, and prints p50 and p99 of each.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "generate":
		err = generate(os.Args[2:])
	case "lists":
		err = lists(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pdptrail:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pdptrail generate -db FILE -events N | pdptrail lists -url URL")
	os.Exit(2)
}
