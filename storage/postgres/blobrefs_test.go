package postgres

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/storage/storetest/fixture"
)

// TestBlobReferences: the set is every blob id any application or RFI
// request names now (BlobIDs), as records are created and updated.
func TestBlobReferences(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	docs := func(prefix string) map[string]onboarding.Document {
		return map[string]onboarding.Document{
			"a": {FileID: prefix + "-a", BlobID: "blob-" + prefix + "-a"},
			"b": {FileID: prefix + "-b", BlobID: "blob-" + prefix + "-b"},
			"c": {FileID: prefix + "-c"},
		}
	}
	refs := func() map[string]bool {
		t.Helper()
		got, err := s.BlobReferences(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := refs(); len(got) != 0 {
		t.Errorf("an empty store refers to %v", got)
	}
	app := fixture.App("acme", 1, onboarding.StatusSent)
	app.Data.Documents = docs("company")
	app.Data.People = []onboarding.Person{{ID: "p1", Documents: docs("p1")}, {ID: "p2"}}
	app.Data.Entities = []onboarding.Entity{{ID: "e1", Documents: docs("e1")}}
	app.RegistryDocuments = []onboarding.RegistryDocument{{ID: "r1", BlobID: "blob-r1"}, {ID: "r2"}, {ID: "r3", BlobID: "blob-company-a"}}
	if err := s.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	fixture.StoredApp(t, s, "acme", 2, onboarding.StatusSent) // refers to none
	r := fixture.RFI("acme", 1, onboarding.RFIActive)
	r.Documents = docs("rfi")
	fixture.CreateRFIs(t, s, r)
	want := map[string]bool{}
	for _, id := range append(app.BlobIDs(), r.BlobIDs()...) {
		want[id] = true
	}
	if diff := cmp.Diff(want, refs()); diff != "" {
		t.Errorf("after create (-want +got):\n%s", diff)
	}
	if _, err := s.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.Data.People = nil
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	fixture.UpdateRFI(t, s, r.ID, func(r *onboarding.RFIRequest) { r.Documents = nil })
	want = map[string]bool{"blob-company-a": true, "blob-company-b": true, "blob-e1-a": true, "blob-e1-b": true, "blob-r1": true}
	if diff := cmp.Diff(want, refs()); diff != "" {
		t.Errorf("after updates (-want +got):\n%s", diff)
	}
}
