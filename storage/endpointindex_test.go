package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// endpointIDs lists the ids of eps.
func endpointIDs(eps []*onboarding.Endpoint) []string {
	ids := []string{}
	for _, ep := range eps {
		ids = append(ids, ep.ID)
	}
	return ids
}

// TestEndpointIndex: the endpoint ids kept in memory follow creates and
// deletes, are what a reopened store loads from the database, and give
// each organization its own endpoints, oldest first.
func TestEndpointIndex(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	a1, g1, a2, a3 := h.Endpoint("acme"), h.Endpoint("globex"), h.Endpoint("acme"), h.Endpoint("acme")
	if err := h.S.DeleteEndpoint(ctx, a2.ID); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"acme": {a1.ID, a3.ID}, "globex": {g1.ID}, "initech": {}}
	check := func(when string) {
		t.Helper()
		for org, ids := range want {
			got, err := h.S.Endpoints(ctx, org)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(ids, endpointIDs(got)); d != "" {
				t.Errorf("%s: %s's endpoints (-want +got):\n%s", when, org, d)
			}
		}
	}
	check("serving")
	if d := cmp.Diff(map[string][]string{"acme": {a1.ID, a3.ID}, "globex": {g1.ID}}, h.S.endpoints.byOrg); d != "" {
		t.Errorf("ids in memory (-want +got):\n%s", d)
	}
	h.S.Close()
	h.open()
	check("reopened")
	if d := cmp.Diff(map[string][]string{"acme": {a1.ID, a3.ID}, "globex": {g1.ID}}, h.S.endpoints.byOrg); d != "" {
		t.Errorf("ids loaded (-want +got):\n%s", d)
	}
}

// TestEndpointIndexUncommitted: an id known before its endpoint's create
// commits is skipped by a transaction that does not see the record, and
// reading it puts the record's key in that transaction's reads, so the
// transaction conflicts once the create commits instead of committing
// events that miss the new endpoint.
func TestEndpointIndexUncommitted(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	old := h.Endpoint("acme")
	ep := &onboarding.Endpoint{ID: old.ID + "Z", OrgID: "acme", URL: "https://hooks.example.com/new", Enabled: true, CreatedAt: h.Now}
	h.S.endpoints.add("acme", ep.ID) // as CreateEndpoint does before committing

	txn := h.S.db.NewTransaction(true)
	defer txn.Discard()
	got, err := h.S.orgEndpoints(txn, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{old.ID}, endpointIDs(got)); d != "" {
		t.Errorf("endpoints before the create commits (-want +got):\n%s", d)
	}

	if err := h.S.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if err := txn.Set([]byte("test/written"), nil); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); !errors.Is(err, badger.ErrConflict) {
		t.Errorf("commit of a transaction that read the endpoints before the create = %v, want a conflict", err)
	}
	var after []*onboarding.Endpoint
	if err := h.S.view(func(txn *badger.Txn) error {
		after, err = h.S.orgEndpoints(txn, "acme")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{old.ID, ep.ID}, endpointIDs(after)); d != "" {
		t.Errorf("endpoints after the create (-want +got):\n%s", d)
	}
}

// TestEndpointDecodedOnce: the endpoints that events are queued for are
// decoded once per version of their record, and shared; a changed
// record, even one changed only by the reading transaction, is decoded
// again; Endpoints hands out copies, and a deleted endpoint's decoded
// record is dropped.
func TestEndpointDecodedOnce(t *testing.T) {
	ctx := context.Background()
	h := newHooks(t)
	ep := h.Endpoint("acme")
	read := func(txn *badger.Txn) *onboarding.Endpoint {
		t.Helper()
		got, err := h.S.orgEndpoints(txn, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("acme's endpoints: %d, want 1", len(got))
		}
		return got[0]
	}
	view := func() *onboarding.Endpoint {
		t.Helper()
		var got *onboarding.Endpoint
		if err := h.S.view(func(txn *badger.Txn) error { got = read(txn); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}

	first := view()
	if second := view(); second != first {
		t.Error("an unchanged endpoint was decoded again")
	}
	copies, err := h.S.Endpoints(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if copies[0] == first {
		t.Error("Endpoints handed out the shared endpoint")
	}

	if _, err := h.S.UpdateEndpoint(ctx, ep.ID, func(ep *onboarding.Endpoint) error {
		ep.Description = "changed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := view(); got.Description != "changed" {
		t.Errorf("after an update: description %q, want %q", got.Description, "changed")
	}

	txn := h.S.db.NewTransaction(true)
	defer txn.Discard()
	own := *ep
	own.Enabled = false
	if err := setRecord(txn, endpointKey(ep.ID), &own); err != nil {
		t.Fatal(err)
	}
	if read(txn).Enabled {
		t.Error("a transaction's own change to an endpoint was not seen")
	}
	txn.Discard()
	if got := view(); !got.Enabled || got.Description != "changed" {
		t.Errorf("after the discarded change: enabled %v, description %q; want true, %q", got.Enabled, got.Description, "changed")
	}

	if err := h.S.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, kept := h.S.endpoints.decoded[ep.ID]; kept {
		t.Error("a deleted endpoint's decoded record is still kept")
	}
}
