package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

var apiKeyCases = []suiteCase{
	{"CreateReadList", testAPIKeys},
	{"ConcurrentUpdates", testAPIKeyConcurrentUpdates},
}

func newKey(id, org string, i int) *onboarding.APIKey {
	return &onboarding.APIKey{ClientID: id, OrgID: org, Name: "k" + id, Scopes: []onboarding.Scope{onboarding.ScopeApplicationsRead},
		SecretHash: bytes.Repeat([]byte{byte(i)}, 32), CreatedAt: t0.Add(time.Duration(i) * time.Minute)}
}

// testAPIKeys: keys read back as stored, list by organization oldest
// first, in client id order among keys of one time (every
// organization's with none named), update atomically; a duplicate
// client id and a change of a key's client id are refused; an unknown
// one is ErrNotFound.
func testAPIKeys(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	if got, err := s.APIKeys(ctx, ""); err != nil || len(got) != 0 {
		t.Errorf("APIKeys of an empty store = %v, %v; want none", got, err)
	}
	// bbb is created at the same time as aaa: client id order.
	keys := []*onboarding.APIKey{newKey("zzz", "acme", 1), newKey("aaa", "acme", 2), newKey("bbb", "acme", 2), newKey("mmm", "other", 3)}
	keys[3].AllScopes = true
	for _, k := range keys {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateAPIKey(ctx, newKey("zzz", "other", 4)); err == nil || errors.Is(err, onboarding.ErrNotFound) {
		t.Errorf("CreateAPIKey(duplicate) = %v, want an error", err)
	}
	if k, err := s.APIKey(ctx, "zzz"); err != nil || !cmp.Equal(keys[0], k) {
		t.Errorf("APIKey(zzz) after a refused duplicate = %+v, %v; want the first", k, err)
	}
	got, err := s.APIKeys(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys[:3], got); diff != "" {
		t.Errorf("APIKeys(acme), oldest first (-want +got):\n%s", diff)
	}
	all, err := s.APIKeys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys, all); diff != "" {
		t.Errorf("APIKeys(all) (-want +got):\n%s", diff)
	}
	if none, err := s.APIKeys(ctx, "acm"); err != nil || len(none) != 0 {
		t.Errorf("APIKeys(acm) = %v, %v; want none", none, err)
	}
	revoked := t0.Add(time.Hour)
	k, err := s.UpdateAPIKey(ctx, "aaa", func(k *onboarding.APIKey) error { k.RevokedAt = &revoked; return nil })
	if err != nil || k.RevokedAt == nil || !k.RevokedAt.Equal(revoked) {
		t.Fatalf("UpdateAPIKey = %+v, %v", k, err)
	}
	if stored, err := s.APIKey(ctx, "aaa"); err != nil || !cmp.Equal(k, stored) {
		t.Errorf("APIKey after update (-want +got):\n%s %v", cmp.Diff(k, stored), err)
	}
	if _, err := s.UpdateAPIKey(ctx, "aaa", func(k *onboarding.APIKey) error { k.Name = "changed"; return errBoom }); err != errBoom {
		t.Errorf("UpdateAPIKey(failing change) = %v, want boom unchanged", err)
	}
	if _, err := s.UpdateAPIKey(ctx, "aaa", func(k *onboarding.APIKey) error { k.ClientID = "ccc"; return nil }); err == nil {
		t.Error("UpdateAPIKey(changing the client id) succeeded")
	}
	if stored, _ := s.APIKey(ctx, "aaa"); !cmp.Equal(k, stored) {
		t.Errorf("refused updates changed the key (-before +after):\n%s", cmp.Diff(k, stored))
	}
	_, err = s.APIKey(ctx, "ccc")
	wantNotFound(t, "APIKey(the refused client id)", err)
	_, err = s.UpdateAPIKey(ctx, "nope", func(*onboarding.APIKey) error {
		t.Error("change called for an unknown key")
		return nil
	})
	wantNotFound(t, "UpdateAPIKey(unknown)", err)
	_, err = s.APIKey(ctx, "nope")
	wantNotFound(t, "APIKey(unknown)", err)
	_, err = s.APIKey(ctx, "\xffx")
	wantNotFound(t, "APIKey(not UTF-8)", err)
}

// testAPIKeyConcurrentUpdates: concurrent changes of one key all apply.
func testAPIKeyConcurrentUpdates(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	if err := s.CreateAPIKey(ctx, newKey("abc", "acme", 1)); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := s.UpdateAPIKey(ctx, "abc", func(k *onboarding.APIKey) error {
					k.Name += fmt.Sprintf(",%d", i)
					return nil
				})
				if errors.Is(err, onboarding.ErrWriteConflict) {
					continue
				}
				if err != nil {
					t.Error(err)
				}
				return
			}
		}()
	}
	wg.Wait()
	k, err := s.APIKey(ctx, "abc")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !bytes.Contains([]byte(k.Name+","), []byte(fmt.Sprintf(",%d,", i))) {
			t.Errorf("name %q lost update %d", k.Name, i)
		}
	}
}
