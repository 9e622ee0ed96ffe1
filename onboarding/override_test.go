package onboarding_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// overrideNow is the clock of the override tests.
var overrideNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// watchedBlobs is a blob store that records, at each Delete, what the
// stored application said then, to prove a skip deletes the file only
// after its change committed.
type watchedBlobs struct {
	*blobs.Store
	onDelete func(id string)
}

func (b *watchedBlobs) Delete(id string) error {
	if b.onDelete != nil {
		b.onDelete(id)
	}
	return b.Store.Delete(id)
}

type overrideEnv struct {
	svc   *onboarding.Service
	store storetest.Store
	blobs *watchedBlobs
}

// newOverrideEnv builds a Service on a real store and blob directory, with
// two organizations on the standard form.
func newOverrideEnv(t *testing.T) *overrideEnv {
	t.Helper()
	dir := t.TempDir()
	store := storetest.Open(t)
	files, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	wb := &watchedBlobs{Store: files}
	form := onboarding.StandardForm()
	svc, err := onboarding.New(onboarding.Options{
		Store: store, Blobs: wb, Now: func() time.Time { return overrideNow }, PageCounter: pdf.PageCount,
		Organizations: []*onboarding.Organization{
			{ID: "acme", Configs: []*onboarding.Configuration{{ID: "acme-std", Form: form, Countries: []string{"GB"}}}},
			{ID: "other", Configs: []*onboarding.Configuration{{ID: "other-std", Form: form, Countries: []string{"GB"}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &overrideEnv{svc: svc, store: store, blobs: wb}
}

// putBlob stores content as a blob and returns its id.
func (e *overrideEnv) putBlob(t *testing.T, content string) string {
	t.Helper()
	id, _, err := e.blobs.Put(context.Background(), strings.NewReader(content), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// blobContent returns a blob's content, or "" with ok false when it is gone.
func (e *overrideEnv) blobContent(t *testing.T, id string) (string, bool) {
	t.Helper()
	f, err := e.blobs.Open(id)
	if errors.Is(err, onboarding.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// seedApp stores an application of org with the given status and data.
func (e *overrideEnv) seedApp(t *testing.T, org string, status onboarding.Status, data onboarding.Data) *onboarding.Application {
	t.Helper()
	created := overrideNow.Add(-time.Hour)
	app := &onboarding.Application{
		ID: uuid.NewString(), Seq: ulid.Make(), OrgID: org, ConfigID: org + "-std", Country: "GB",
		Status: status, Data: data, CreatedAt: created, UpdatedAt: created,
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: uuid.NewString(), Email: "a@example.com", Role: onboarding.RolePrimary}},
	}
	if err := e.store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
		t.Fatal(err)
	}
	return app
}

func (e *overrideEnv) app(t *testing.T, id string) *onboarding.Application {
	t.Helper()
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func (e *overrideEnv) activity(t *testing.T, id string) []onboarding.Activity {
	t.Helper()
	log, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// uploaded is a document as an upload stores it.
func uploaded(blobID string, status onboarding.DocumentStatus) onboarding.Document {
	d := onboarding.Document{
		FileID: uuid.NewString(), FileName: "certificate.pdf", FileType: "application/pdf",
		UploadedAt: overrideNow.Add(-30 * time.Minute), Status: status, BlobID: blobID, Size: 12,
	}
	switch status {
	case onboarding.DocumentRejected:
		d.RejectReason = "The file is not a PDF, PNG, JPEG or HEIC image."
	case onboarding.DocumentAccepted:
		d.AcceptanceReason = onboarding.ReasonBaselinePassed
	}
	return d
}

func TestOverrideDocumentSkipCompany(t *testing.T) {
	ctx := context.Background()
	e := newOverrideEnv(t)
	blob := e.putBlob(t, "%PDF-1.7 old")
	old := uploaded(blob, onboarding.DocumentAccepted)
	// An application of another organization than the first: the operator
	// needs no key and sees every organization.
	app := e.seedApp(t, "other", onboarding.StatusInProgress, onboarding.Data{
		Documents: map[string]onboarding.Document{"certificate_of_incorporation": old},
	})
	var statusAtDelete onboarding.DocumentStatus
	e.blobs.onDelete = func(id string) {
		if id != blob {
			t.Errorf("deleted blob %s, want %s", id, blob)
		}
		statusAtDelete = e.app(t, app.ID).Data.Documents["certificate_of_incorporation"].Status
	}

	d, err := e.svc.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: app.ID, FieldID: "certificate_of_incorporation", Reason: "  Registry extract checked by phone  ", Skip: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(d.FileID); err != nil || d.FileID == old.FileID {
		t.Errorf("file id %q: want a new UUID", d.FileID)
	}
	at := overrideNow
	want := onboarding.Document{
		FileID: d.FileID, UploadedAt: overrideNow, Status: onboarding.DocumentSkipped,
		UserOverrideReason: "Registry extract checked by phone", OverriddenAt: &at,
	}
	if diff := cmp.Diff(want, *d); diff != "" {
		t.Errorf("returned document (-want +got):\n%s", diff)
	}
	stored := e.app(t, app.ID)
	if diff := cmp.Diff(want, stored.Data.Documents["certificate_of_incorporation"]); diff != "" {
		t.Errorf("stored document (-want +got):\n%s", diff)
	}
	if !stored.UpdatedAt.Equal(overrideNow) {
		t.Errorf("updated at %v, want %v", stored.UpdatedAt, overrideNow)
	}
	if statusAtDelete != onboarding.DocumentSkipped {
		t.Errorf("when the old file was deleted the stored document was %q; want the skip committed first", statusAtDelete)
	}
	if _, ok := e.blobContent(t, blob); ok {
		t.Errorf("the skipped document's file %s is still stored", blob)
	}
	wantLog := []onboarding.Activity{{
		At: overrideNow, Action: onboarding.ActionDocumentSkipped, Actor: onboarding.Actor{Type: onboarding.ActorOperator},
		Detail: "certificate_of_incorporation: Registry extract checked by phone",
	}}
	if diff := cmp.Diff(wantLog, e.activity(t, app.ID)); diff != "" {
		t.Errorf("activity (-want +got):\n%s", diff)
	}

	// Skipping again replaces the reason; there is no file left to delete.
	e.blobs.onDelete = func(id string) { t.Errorf("second skip deleted blob %s", id) }
	again, err := e.svc.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: app.ID, FieldID: "certificate_of_incorporation", Reason: "second thoughts", Skip: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != onboarding.DocumentSkipped || again.UserOverrideReason != "second thoughts" {
		t.Errorf("second skip = %+v", again)
	}
}

func TestOverrideDocumentSkipWithoutUpload(t *testing.T) {
	ctx := context.Background()
	e := newOverrideEnv(t)
	// No documents map at all, and a person without one.
	app := e.seedApp(t, "acme", onboarding.StatusSubmitted, onboarding.Data{
		People: []onboarding.Person{{ID: "p1", FullName: "Ann Example"}, {ID: "p2", FullName: "Bob Example"}},
	})
	e.blobs.onDelete = func(id string) { t.Errorf("deleted blob %s with no file to delete", id) }
	if _, err := e.svc.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: app.ID, FieldID: "bank_statement", Reason: "Not applicable", Skip: true,
	}); err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.OverrideDocument(ctx, onboarding.DocumentOverride{
		AppID: app.ID, FieldID: "person_id_document", PersonID: "p2", Reason: "Passport seen in person", Skip: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	stored := e.app(t, app.ID)
	if got := stored.Data.Documents["bank_statement"]; got.Status != onboarding.DocumentSkipped || got.UserOverrideReason != "Not applicable" {
		t.Errorf("bank_statement = %+v, want skipped", got)
	}
	if got := stored.Data.People[1].Documents["person_id_document"]; got.Status != onboarding.DocumentSkipped || got.FileID != d.FileID ||
		got.UserOverrideReason != "Passport seen in person" || got.BlobID != "" {
		t.Errorf("p2's person_id_document = %+v, want skipped", got)
	}
	if docs := stored.Data.People[0].Documents; len(docs) != 0 {
		t.Errorf("p1's documents = %+v, want none", docs)
	}
	log := e.activity(t, app.ID)
	if len(log) != 2 || log[1].Detail != "person_id_document of person p2: Passport seen in person" || log[1].Action != onboarding.ActionDocumentSkipped {
		t.Errorf("activity = %+v", log)
	}
	if stored.Status != onboarding.StatusSubmitted {
		t.Errorf("status %s; an override does not change the application's status", stored.Status)
	}
}

func TestOverrideDocumentForce(t *testing.T) {
	ctx := context.Background()
	e := newOverrideEnv(t)
	e.blobs.onDelete = func(id string) { t.Errorf("force deleted blob %s", id) }
	companyBlob := e.putBlob(t, "company file")
	personBlob := e.putBlob(t, "person file")
	acceptedBlob := e.putBlob(t, "accepted file")
	company := uploaded(companyBlob, onboarding.DocumentRejected)
	person := uploaded(personBlob, onboarding.DocumentRejected)
	accepted := uploaded(acceptedBlob, onboarding.DocumentAccepted)
	app := e.seedApp(t, "acme", onboarding.StatusReview, onboarding.Data{
		Documents: map[string]onboarding.Document{"certificate_of_incorporation": company, "proof_of_address": accepted},
		People:    []onboarding.Person{{ID: "p1", Documents: map[string]onboarding.Document{"person_id_document": person}}},
	})

	for _, tt := range []struct {
		field, person, blob, content string
		before                       onboarding.Document
		detail                       string
	}{
		{"certificate_of_incorporation", "", companyBlob, "company file", company, "certificate_of_incorporation: Scan is legible"},
		{"person_id_document", "p1", personBlob, "person file", person, "person_id_document of person p1: Scan is legible"},
		{"proof_of_address", "", acceptedBlob, "accepted file", accepted, "proof_of_address: Scan is legible"},
	} {
		d, err := e.svc.OverrideDocument(ctx, onboarding.DocumentOverride{
			AppID: app.ID, FieldID: tt.field, PersonID: tt.person, Reason: "Scan is legible",
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.field, err)
		}
		at := overrideNow
		want := tt.before
		want.Status = onboarding.DocumentForced
		want.RejectReason, want.AcceptanceReason = "", ""
		want.UserOverrideReason = "Scan is legible"
		want.OverriddenAt = &at
		if diff := cmp.Diff(want, *d); diff != "" {
			t.Errorf("%s: returned document (-want +got):\n%s", tt.field, diff)
		}
		stored := e.app(t, app.ID)
		got := stored.Data.Documents[tt.field]
		if tt.person != "" {
			got = stored.Data.People[0].Documents[tt.field]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: stored document (-want +got):\n%s", tt.field, diff)
		}
		if content, ok := e.blobContent(t, tt.blob); !ok || content != tt.content {
			t.Errorf("%s: file after force = %q, %v; want it kept", tt.field, content, ok)
		}
		log := e.activity(t, app.ID)
		last := log[len(log)-1]
		if last.Action != onboarding.ActionDocumentForced || last.Actor.Type != onboarding.ActorOperator || last.Detail != tt.detail || !last.At.Equal(overrideNow) {
			t.Errorf("%s: last activity = %+v", tt.field, last)
		}
	}
}

func TestOverrideDocumentErrors(t *testing.T) {
	ctx := context.Background()
	e := newOverrideEnv(t)
	e.blobs.onDelete = func(id string) { t.Errorf("a refused override deleted blob %s", id) }
	blob := e.putBlob(t, "file")
	docs := func() map[string]onboarding.Document {
		return map[string]onboarding.Document{"certificate_of_incorporation": uploaded(blob, onboarding.DocumentRejected)}
	}
	open := e.seedApp(t, "acme", onboarding.StatusInProgress, onboarding.Data{
		Documents: map[string]onboarding.Document{
			"certificate_of_incorporation": uploaded(blob, onboarding.DocumentRejected),
			"proof_of_address":             {FileID: uuid.NewString(), Status: onboarding.DocumentSkipped, UserOverrideReason: "n/a"},
		},
		People: []onboarding.Person{{ID: "p1"}},
	})
	approved := e.seedApp(t, "acme", onboarding.StatusApproved, onboarding.Data{Documents: docs()})
	rejected := e.seedApp(t, "acme", onboarding.StatusRejected, onboarding.Data{Documents: docs()})
	unknown := uuid.NewString()
	long := strings.Repeat("é", onboarding.MaxOverrideReasonLength)

	type override = onboarding.DocumentOverride
	const coi = "certificate_of_incorporation"
	tests := []struct {
		name string
		o    override
		kind onboarding.Kind
		msg  string
	}{
		{"no reason", override{AppID: open.ID, FieldID: coi}, onboarding.KindInvalid, "A reason is required"},
		{"blank reason", override{AppID: open.ID, FieldID: coi, Reason: " \t\n", Skip: true}, onboarding.KindInvalid, "A reason is required"},
		{"reason too long", override{AppID: open.ID, FieldID: coi, Reason: long + "x"}, onboarding.KindInvalid, "The reason must be at most 500 characters"},
		{"reason with an escape sequence", override{AppID: open.ID, FieldID: coi, Reason: "checked by phone \x1b[31m"}, onboarding.KindInvalid, "The reason must not contain control characters other than line breaks and tabs"},
		{"malformed app id", override{AppID: "nope", FieldID: coi, Reason: "r"}, onboarding.KindNotFound, "Application nope not found"},
		{"non-canonical app id", override{AppID: strings.ToUpper(open.ID), FieldID: coi, Reason: "r"}, onboarding.KindNotFound,
			"Application " + strings.ToUpper(open.ID) + " not found"},
		{"empty app id", override{FieldID: coi, Reason: "r", Skip: true}, onboarding.KindNotFound, "Application  not found"},
		{"unknown app", override{AppID: unknown, FieldID: coi, Reason: "r", Skip: true}, onboarding.KindNotFound, "Application " + unknown + " not found"},
		{"unknown field", override{AppID: open.ID, FieldID: "bogus", Reason: "r"}, onboarding.KindInvalid,
			"Field 'bogus' is not a document field of this application's form"},
		{"not a document field", override{AppID: open.ID, FieldID: "company_name", Reason: "r", Skip: true}, onboarding.KindInvalid,
			"Field 'company_name' is not a document field of this application's form"},
		{"person field without person", override{AppID: open.ID, FieldID: "person_id_document", Reason: "r", Skip: true}, onboarding.KindInvalid,
			"Field 'person_id_document' is collected per person: give --person"},
		{"company field with person", override{AppID: open.ID, FieldID: coi, PersonID: "p1", Reason: "r"}, onboarding.KindInvalid,
			"Field 'certificate_of_incorporation' is a company document: --person does not apply"},
		{"unknown person", override{AppID: open.ID, FieldID: "person_id_document", PersonID: "p9", Reason: "r", Skip: true}, onboarding.KindNotFound,
			"Person p9 not found in application " + open.ID},
		{"force approved", override{AppID: approved.ID, FieldID: coi, Reason: "r"}, onboarding.KindInvalid,
			"Application " + approved.ID + " is approved; its documents can no longer change"},
		{"skip rejected", override{AppID: rejected.ID, FieldID: coi, Reason: "r", Skip: true}, onboarding.KindInvalid,
			"Application " + rejected.ID + " is rejected; its documents can no longer change"},
		{"force with nothing uploaded", override{AppID: open.ID, FieldID: "bank_statement", Reason: "r"}, onboarding.KindInvalid,
			"No file has been uploaded for 'bank_statement'; use docs skip to waive the requirement"},
		{"force a skipped requirement", override{AppID: open.ID, FieldID: "proof_of_address", Reason: "r"}, onboarding.KindInvalid,
			"No file has been uploaded for 'proof_of_address'; use docs skip to waive the requirement"},
		{"force a person with nothing uploaded", override{AppID: open.ID, FieldID: "person_id_document", PersonID: "p1", Reason: "r"}, onboarding.KindInvalid,
			"No file has been uploaded for 'person_id_document'; use docs skip to waive the requirement"},
	}
	before := map[string]*onboarding.Application{}
	for _, a := range []*onboarding.Application{open, approved, rejected} {
		before[a.ID] = e.app(t, a.ID)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := e.svc.OverrideDocument(ctx, tt.o)
			if d != nil {
				t.Errorf("returned a document: %+v", d)
			}
			de := onboarding.AsError(err)
			if de == nil {
				t.Fatalf("err = %v, want a domain error", err)
			}
			if de.Kind != tt.kind || de.Message != tt.msg {
				t.Errorf("err = kind %d %q, want kind %d %q", de.Kind, de.Message, tt.kind, tt.msg)
			}
		})
	}
	// Nothing changed, nothing was logged, the file is still there.
	for id, want := range before {
		if diff := cmp.Diff(want, e.app(t, id)); diff != "" {
			t.Errorf("application %s changed (-before +after):\n%s", id, diff)
		}
		if log := e.activity(t, id); len(log) != 0 {
			t.Errorf("application %s: activity %+v after refused overrides", id, log)
		}
	}
	if _, ok := e.blobContent(t, blob); !ok {
		t.Errorf("the uploaded file was deleted")
	}

	// The longest reason allowed is 500 characters, not bytes.
	if _, err := e.svc.OverrideDocument(ctx, override{AppID: open.ID, FieldID: coi, Reason: long}); err != nil {
		t.Errorf("a reason of 500 characters: %v", err)
	}
}

func TestOverrideDocumentRemovedConfiguration(t *testing.T) {
	e := newOverrideEnv(t)
	app := e.seedApp(t, "acme", onboarding.StatusInProgress, onboarding.Data{})
	if _, err := e.store.UpdateApplication(context.Background(), app.ID, func(a *onboarding.Application) (onboarding.Changes, error) {
		a.ConfigID = "gone"
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.OverrideDocument(context.Background(), onboarding.DocumentOverride{AppID: app.ID, FieldID: "bank_statement", Reason: "r", Skip: true})
	if err == nil || onboarding.AsError(err) != nil || !strings.Contains(err.Error(), `configuration "gone"`) {
		t.Errorf("err = %v, want an internal error naming the configuration", err)
	}
}
