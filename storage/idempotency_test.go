package storage

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestIdempotencyTTL: the outcome a write stores with its work expires,
// by Badger's TTL, IdempotencyTTL after the write, and a saved response
// its ttl after the save. (What the records hold is the Store suite's.)
func TestIdempotencyTTL(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	app := fixture.App("acme", 1, onboarding.StatusSent)
	outcome := &onboarding.IdempotentOutcome{ClientID: "client", Key: "create", Fingerprint: []byte("create"), CreatedAt: t0, ID: app.ID}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{Idempotent: outcome}); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	s.SaveResponse("client", "save", json.RawMessage(`{"Status":201}`), time.Hour, func(err error) { saved <- err })
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	for key, ttl := range map[string]time.Duration{"create": onboarding.IdempotencyTTL, "save": time.Hour} {
		var expires uint64
		if err := s.db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(idempotencyKey("client", key))
			if err == nil {
				expires = item.ExpiresAt()
			}
			return err
		}); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if left := time.Until(time.Unix(int64(expires), 0)); left <= 0 || left > ttl {
			t.Errorf("%s: expires in %v, want within %v", key, left, ttl)
		}
	}
}
