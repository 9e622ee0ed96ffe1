package onboarding_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// This file builds the world of the applicant form's use-case tests: a
// Service over real Badger and a real blob directory, a fixed clock, a
// recording mailer, and visitors built directly from stored applications.

// cmpEmpty makes cmp.Diff treat nil and empty slices and maps alike.
var cmpEmpty = cmpopts.EquateEmpty()

// formNow is where the form tests' clock starts.
var formNow = time.Date(2026, 5, 6, 9, 0, 0, 0, time.UTC)

// formClock is a clock that moves only when a test advances it.
type formClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *formClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *formClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recordingMailer keeps every message it is asked to send; with fail set
// it refuses them instead.
type recordingMailer struct {
	mu   sync.Mutex
	sent []onboarding.Message
	fail error
}

func (m *recordingMailer) Send(_ context.Context, msg onboarding.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.sent = append(m.sent, msg)
	return nil
}

func (m *recordingMailer) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// messages returns the messages sent so far.
func (m *recordingMailer) messages() []onboarding.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]onboarding.Message(nil), m.sent...)
}

// lastCode returns the code of the last verification email.
func (m *recordingMailer) lastCode(t *testing.T) string {
	t.Helper()
	msgs := m.messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if c, ok := msgs[i].(onboarding.VerificationCode); ok {
			return c.Code
		}
	}
	t.Fatal("no verification code was sent")
	return ""
}

// formOptions changes what newFormEnv builds.
type formOptions struct {
	noBlobs   bool  // build the Service without a blob store
	noMailer  bool  // build the Service without a Mailer
	maxUpload int64 // Options.MaxUploadBytes
	registry  onboarding.Registry
	noTerms   bool // the organization publishes no terms_url
}

// formEnv is a Service with everything a form test reads behind it.
type formEnv struct {
	t     *testing.T
	svc   *onboarding.Service
	store storetest.Store
	files *blobs.Store
	dir   string // the blob store's directory
	mail  *recordingMailer
	clock *formClock
	org   *onboarding.Organization
	key   *onboarding.APIKey
}

// Configurations of the form tests' organization.
const (
	configStd    = "std"    // the standard form, company number given at create
	configSelect = "select" // the standard form with company selection
)

// newFormEnv builds a Service with one organization, "acme", whose
// configurations use the standard form for FR and GB applications.
func newFormEnv(t *testing.T, opts ...formOptions) *formEnv {
	t.Helper()
	var o formOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	dir := t.TempDir()
	store := storetest.Open(t)
	var err error
	e := &formEnv{t: t, store: store, mail: &recordingMailer{}, clock: &formClock{now: formNow}}
	e.org = &onboarding.Organization{ID: "acme", Name: "Acme Payments", DefaultConfig: configStd, Configs: []*onboarding.Configuration{
		{ID: configStd, Form: onboarding.StandardForm(), Countries: []string{"FR", "GB"}},
		{ID: configSelect, Form: onboarding.StandardForm(), Countries: []string{"GB"}, CompanySelection: true},
	}}
	if !o.noTerms {
		e.org.TermsURL = "https://acme.example/terms"
	}
	sopts := onboarding.Options{
		Store: store, Registry: o.registry, Now: e.clock.Now, PageCounter: pdf.PageCount,
		PublicURL: "https://onboard.example", SessionKey: []byte(strings.Repeat("k", 32)),
		MaxUploadBytes: o.maxUpload, Organizations: []*onboarding.Organization{e.org},
	}
	if !o.noMailer {
		sopts.Mailer = e.mail
	}
	if !o.noBlobs {
		e.dir = filepath.Join(dir, "blobs")
		if e.files, err = blobs.Open(e.dir); err != nil {
			t.Fatal(err)
		}
		sopts.Blobs = e.files
	}
	if e.svc, err = onboarding.New(sopts); err != nil {
		t.Fatal(err)
	}
	full, _, err := e.svc.CreateAPIKey(context.Background(), onboarding.KeySpec{OrgID: "acme", Name: "form tests"})
	if err != nil {
		t.Fatal(err)
	}
	if e.key, err = e.svc.Authenticate(context.Background(), full); err != nil {
		t.Fatal(err)
	}
	return e
}

// create makes an FR application for Acme SAS through CreateApplication
// (its primary contact is primary@example.com, its status sent) and
// returns its id.
func (e *formEnv) create() string {
	e.t.Helper()
	res, err := e.svc.CreateApplication(context.Background(), e.key, onboarding.CreateRequest{
		PrimaryContact: &onboarding.ContactInput{Email: "primary@example.com", Name: "Pat Primary"},
		Country:        "FR", CompanyNumber: "123456789", CompanyName: "Acme SAS",
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Application.ID
}

// seed changes the stored application directly, as the partner or another
// browser would meanwhile, without recording activity.
func (e *formEnv) seed(id string, change func(a *onboarding.Application)) {
	e.t.Helper()
	_, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
		change(a)
		return onboarding.Changes{}, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// app reads the application back from the store.
func (e *formEnv) app(id string) *onboarding.Application {
	e.t.Helper()
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return app
}

// activity returns the application's activity log.
func (e *formEnv) activity(id string) []onboarding.Activity {
	e.t.Helper()
	log, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return log
}

// visitor returns a signed-in visitor for the participant of application
// id with email address email, built from the stored application.
func (e *formEnv) visitor(id, email string) *onboarding.Visitor {
	e.t.Helper()
	app := e.app(id)
	for i := range app.Participants {
		if app.Participants[i].Email == email {
			cfg := e.org.Configs[0]
			for _, c := range e.org.Configs {
				if c.ID == app.ConfigID {
					cfg = c
				}
			}
			return &onboarding.Visitor{App: app, Participant: &app.Participants[i], Org: e.org, Config: cfg, SignedIn: true}
		}
	}
	e.t.Fatalf("application %s has no participant %s", id, email)
	return nil
}

// primary returns a signed-in visitor for the primary participant.
func (e *formEnv) primary(id string) *onboarding.Visitor {
	e.t.Helper()
	return e.visitor(id, "primary@example.com")
}

// addCollaborator stores a collaborator with address email directly, with
// a link slug no other application has: a slug two applications share is
// refused by one backend and moved by the other.
func (e *formEnv) addCollaborator(id, email string) {
	e.t.Helper()
	e.seed(id, func(a *onboarding.Application) {
		a.Participants = append(a.Participants, onboarding.Participant{
			ID: "collab-" + email, LinkSlug: "slug-of-" + email + "-" + id, Email: email, Role: onboarding.RoleCollaborator, InvitedBy: a.Participants[0].ID,
		})
	})
}

// putBlob stores content as a blob and returns its id.
func (e *formEnv) putBlob(content string) string {
	e.t.Helper()
	id, _, err := e.files.Put(context.Background(), strings.NewReader(content), 1<<20)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// blobExists reports whether blob id is still stored.
func (e *formEnv) blobExists(id string) bool {
	e.t.Helper()
	f, err := e.files.Open(id)
	if errors.Is(err, onboarding.ErrNotFound) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	f.Close()
	return true
}

// blobCount returns how many files the blob directory holds.
func (e *formEnv) blobCount() int {
	e.t.Helper()
	n := 0
	err := filepath.WalkDir(e.dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// did is the activity entry the visitor's participant records for action.
func did(v *onboarding.Visitor, action, detail string, fields ...string) onboarding.Activity {
	return onboarding.Activity{
		At: formNow, Action: action, Detail: detail, Fields: fields,
		Actor: onboarding.Actor{Type: onboarding.ActorParticipant, ID: v.Participant.ID, Name: v.Participant.Email},
	}
}

// checkActivity compares the entries recorded since the log had before
// entries with want.
func (e *formEnv) checkActivity(id string, before int, want []onboarding.Activity) {
	e.t.Helper()
	got := e.activity(id)[before:]
	if diff := cmp.Diff(want, got, cmpEmpty, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		e.t.Errorf("activity recorded (-want +got):\n%s", diff)
	}
}

// fieldErr is the field error with the exact message and details a
// use-case must return.
func fieldErr(message string, details map[string]string) *onboarding.Error {
	return &onboarding.Error{Kind: onboarding.KindInvalid, Message: message, Details: details}
}

// checkErr fails unless err is want: nil, or an error errors.Is accepts
// whose details, when want has some, are the same.
func checkErr(t *testing.T, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	if w := onboarding.AsError(want); w != nil && w.Details != nil {
		if diff := cmp.Diff(w.Details, onboarding.AsError(err).Details); diff != "" {
			t.Errorf("error details (-want +got):\n%s", diff)
		}
	}
}

// checkJSON fails unless got is the JSON value want (nil: unset), whatever
// the order of object members.
func checkJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if onboarding.ValueFingerprint(got) != onboarding.ValueFingerprint(want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// raw is a JSON value for a form answer.
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// frAddress is a valid address answer.
var frAddress = map[string]string{"line1": "1 rue de la Paix", "city": "Paris", "country": "FR", "postcode": "75002"}
