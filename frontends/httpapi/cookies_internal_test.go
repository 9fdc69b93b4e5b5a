package httpapi

import (
	"testing"
	"time"
)

// TestACookieIsReadOnlyForItsPurpose: a value sealed for one cookie (a
// sign-in's flow) is not read as another (a person's session), though
// both are signed with one key.
func TestACookieIsReadOnlyForItsPurpose(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Now()
	flow, err := seal(key, flowCookie, signInFlow{State: "s", Expires: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	var f signInFlow
	if err := unseal(key, flowCookie, flow, &f, func() time.Time { return f.Expires }, now); err != nil || f.State != "s" {
		t.Fatalf("the flow cookie as a flow cookie: %v %+v", err, f)
	}
	var sess personSession
	if err := unseal(key, sessionCookie, flow, &sess, func() time.Time { return sess.Expires }, now); err == nil {
		t.Fatalf("a flow cookie was read as a session: %+v", sess)
	}
}
