package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
)

// TestApplicationJSONRenderedOnce holds get-application's answer, which is
// rendered once per version of an application with holes for its links
// (viewMemo), to the view of the stored application encoded afresh: on the
// first get, on a later get whose links must be signed anew, and after the
// application changes.
func TestApplicationJSONRenderedOnce(t *testing.T) {
	var now atomic.Int64
	now.Store(onboardingtest.ViewNow().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	svc, store := onboardingtest.NewViewService(t, clock)
	memo := newViewMemo(renderedViewsBytes)
	ctx := context.Background()
	key := &onboarding.APIKey{OrgID: "acme", Scopes: []onboarding.Scope{onboarding.ScopeApplicationsRead}}

	custom := onboardingtest.FullApplication(onboardingtest.CustomConfig) // sensitive values are the partner's to read
	custom.ID = "7a1c2a9e-5d7b-4c3a-9e8f-0a1b2c3d4e5f"
	for i := range custom.Participants {
		custom.Participants[i].LinkSlug += "-custom"
	}
	apps := []*onboarding.Application{onboardingtest.FullApplication(onboardingtest.StdConfig), custom, onboardingtest.BareApplication()}
	for _, app := range apps {
		app.Seq = ulid.Make()
		if err := store.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	}

	// want is the view of the stored application, encoded now.
	want := func(t *testing.T, id string) string {
		t.Helper()
		app, err := store.Application(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		view, err := svc.View(app, onboarding.ViewOptions{Links: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	get := func(t *testing.T, id string) string {
		t.Helper()
		b, err := memo.applicationJSON(ctx, svc, key, id, []byte("before:"))
		if err != nil {
			t.Fatal(err)
		}
		s, ok := strings.CutPrefix(string(b), "before:")
		if !ok {
			t.Fatalf("ApplicationJSON did not append to dst: %.40s", b)
		}
		return s
	}

	for _, app := range apps {
		t.Run(app.ID, func(t *testing.T) {
			now.Store(onboardingtest.ViewNow().UnixNano())
			first := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), first); diff != "" {
				t.Errorf("first get (-fresh view +answer):\n%s", diff)
			}
			now.Store(onboardingtest.ViewNow().Add(90 * time.Second).UnixNano())
			later := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), later); diff != "" {
				t.Errorf("get 90 s later (-fresh view +answer):\n%s", diff)
			}
			if strings.Contains(first, "download_url") && first == later {
				t.Errorf("get 90 s later answered the links of the first get")
			}
			if again := get(t, app.ID); again != later {
				t.Errorf("a second get at the same instant differs:\n%s\n%s", later, again)
			}

			if _, err := store.UpdateApplication(ctx, app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
				if a.Data.Fields == nil {
					a.Data.Fields = map[string]json.RawMessage{}
				}
				a.Data.Fields["company_name"] = json.RawMessage(`"Renamed <Ltd>"`)
				a.Data.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {
					FileID: "d-new", FileName: "new.pdf", FileType: "application/pdf", UploadedAt: onboardingtest.ViewNow(),
					Status: onboarding.DocumentAccepted, BlobID: "blob-new",
				}}
				a.UpdatedAt = clock()
				return onboarding.Changes{}, nil
			}); err != nil {
				t.Fatal(err)
			}
			changed := get(t, app.ID)
			if diff := cmp.Diff(want(t, app.ID), changed); diff != "" {
				t.Errorf("get after an update (-fresh view +answer):\n%s", diff)
			}
			for _, s := range []string{`"company_name":"Renamed \u003cLtd\u003e"`, `/files/blob-new?`} {
				if !strings.Contains(changed, s) {
					t.Errorf("get after an update lacks %s:\n%s", s, changed)
				}
			}
		})
	}
}
