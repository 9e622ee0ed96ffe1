package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/storage"
)

// seededPDF is the content of the upload the docs tests seed.
const seededPDF = "%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"

// docsSeed is what seedDocs stored in a data directory.
type docsSeed struct {
	open     string // in_progress: a rejected certificate_of_incorporation upload, person personID with no documents
	approved string
	rejected string
	personID string
	blobID   string // the file of open's rejected upload
	fileID   string
}

// withStore opens a data directory's store and blobs in-process, as the
// binary lays them out, runs fn and closes them. No onboard process may
// hold the directory.
func withStore(t *testing.T, data string, fn func(*storage.Store, *blobs.Store)) {
	t.Helper()
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(data, "badger"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	}()
	files, err := blobs.Open(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	fn(store, files)
}

// seedDocs stores, before any binary runs, three applications of the
// sandbox's default organization and configuration: one in progress with a
// rejected upload (a real file in the blob store), one approved and one
// rejected.
func seedDocs(t *testing.T, data string) docsSeed {
	t.Helper()
	s := docsSeed{open: uuid.NewString(), approved: uuid.NewString(), rejected: uuid.NewString(), personID: uuid.NewString(), fileID: uuid.NewString()}
	withStore(t, data, func(store *storage.Store, files *blobs.Store) {
		ctx := context.Background()
		id, size, err := files.Put(ctx, strings.NewReader(seededPDF), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		s.blobID = id
		now := time.Now().UTC().Add(-time.Hour)
		for _, a := range []struct {
			id     string
			status onboarding.Status
		}{{s.open, onboarding.StatusInProgress}, {s.approved, onboarding.StatusApproved}, {s.rejected, onboarding.StatusRejected}} {
			app := &onboarding.Application{
				ID: a.id, Seq: ulid.Make(), OrgID: "default", ConfigID: "default", Country: "GB", Status: a.status,
				Data: onboarding.Data{
					Fields: map[string]json.RawMessage{"company_name": json.RawMessage(`"SEEDED LIMITED"`)},
					People: []onboarding.Person{{ID: s.personID, Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{"director"},
						FullName: "Ann Example", FirstName: "Ann", LastName: "Example"}},
				},
				Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: strings.ReplaceAll(uuid.NewString(), "-", ""),
					Email: "applicant@example.com", Role: onboarding.RolePrimary}},
				CreatedAt: now, UpdatedAt: now,
			}
			if a.id == s.open {
				app.Data.Documents = map[string]onboarding.Document{"certificate_of_incorporation": {
					FileID: s.fileID, FileName: "certificate.pdf", FileType: "application/pdf", UploadedAt: now,
					Status: onboarding.DocumentRejected, RejectReason: "The file could not be read as a PDF.", BlobID: id, Size: size,
				}}
			}
			if err := store.CreateApplication(ctx, app, onboarding.Changes{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	return s
}

// docsErrorCases are refused overrides and the exact stderr of each, the
// same whether the command opens the store or goes through admin.sock.
func docsErrorCases(s docsSeed) []struct {
	name string
	args []string
	want string
} {
	unknown := "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90"
	coi := []string{"--field", "certificate_of_incorporation"}
	args := func(cmd, app string, rest ...string) []string {
		return append([]string{"docs", cmd, "--app", app}, rest...)
	}
	return []struct {
		name string
		args []string
		want string
	}{
		{"unknown application", args("force", unknown, append(coi, "--reason", "r")...), "onboard: Application " + unknown + " not found\n"},
		{"malformed application id", args("skip", "nope", append(coi, "--reason", "r")...), "onboard: Application nope not found\n"},
		{"non-canonical application id", args("skip", strings.ToUpper(s.open), append(coi, "--reason", "r")...),
			"onboard: Application " + strings.ToUpper(s.open) + " not found\n"},
		{"not a document field", args("skip", s.open, "--field", "company_name", "--reason", "r"),
			"onboard: Field 'company_name' is not a document field of this application's form\n"},
		{"unknown field", args("force", s.open, "--field", "passport", "--reason", "r"),
			"onboard: Field 'passport' is not a document field of this application's form\n"},
		{"person document without --person", args("skip", s.open, "--field", "person_id_document", "--reason", "r"),
			"onboard: Field 'person_id_document' is collected per person: give --person\n"},
		{"company document with --person", args("skip", s.open, append(coi, "--person", s.personID, "--reason", "r")...),
			"onboard: Field 'certificate_of_incorporation' is a company document: --person does not apply\n"},
		{"unknown person", args("skip", s.open, "--field", "person_id_document", "--person", "p9", "--reason", "r"),
			"onboard: Person p9 not found in application " + s.open + "\n"},
		{"blank reason", args("force", s.open, append(coi, "--reason", "   ")...), "onboard: A reason is required\n"},
		{"reason too long", args("skip", s.open, append(coi, "--reason", strings.Repeat("x", 501))...),
			"onboard: The reason must be at most 500 characters\n"},
		{"approved application", args("force", s.approved, append(coi, "--reason", "r")...),
			"onboard: Application " + s.approved + " is approved; its documents can no longer change\n"},
		{"rejected application", args("skip", s.rejected, append(coi, "--reason", "r")...),
			"onboard: Application " + s.rejected + " is rejected; its documents can no longer change\n"},
		{"force with no upload", args("force", s.open, "--field", "bank_statement", "--reason", "r"),
			"onboard: No file has been uploaded for 'bank_statement'; use docs skip to waive the requirement\n"},
		{"force a person's document with no upload", args("force", s.open, "--field", "person_id_document", "--person", s.personID, "--reason", "r"),
			"onboard: No file has been uploaded for 'person_id_document'; use docs skip to waive the requirement\n"},
	}
}

// checkDocsErrors runs every error case against data: exit status 1, the
// message alone on stderr, nothing on stdout.
func checkDocsErrors(t *testing.T, s docsSeed, data string) {
	t.Helper()
	for _, tt := range docsErrorCases(s) {
		t.Run(tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append(tt.args, "--data-dir", data)...), tt.want)
		})
	}
}

func TestDocsUsage(t *testing.T) {
	t.Parallel()
	r := runBinary(t, "docs", "skip", "--app", "x", "--field", "f")
	if r.code != 2 || !strings.Contains(r.stderr, "onboard: missing flags: --reason=TEXT") || r.stdout != "" {
		t.Errorf("docs skip without --reason: exit %d, stdout %q, stderr %q; want 2 naming --reason", r.code, r.stdout, r.stderr)
	}
	help := mustRun(t, "docs", "force", "--help").stdout
	for _, flag := range []string{"--app=ID", "--field=FIELD", "--person=PERSON_ID", "--reason=TEXT", "--config=FILE", "--data-dir=DIR"} {
		if !strings.Contains(help, flag) {
			t.Errorf("docs force --help does not show %s:\n%s", flag, help)
		}
	}
}

// TestDocsDirect runs docs force|skip with no server: the commands open the
// data directory themselves.
func TestDocsDirect(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	s := seedDocs(t, data)
	checkDocsErrors(t, s, data)

	start := time.Now().UTC().Truncate(time.Second)
	r := mustRun(t, "docs", "skip", "--data-dir", data, "--app", s.open, "--field", "certificate_of_incorporation",
		"--reason", "  Certificate checked against the registry by phone ")
	if want := "skipped certificate_of_incorporation on application " + s.open + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("docs skip: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}
	r = mustRun(t, "docs", "skip", "--data-dir", data, "--app", s.open, "--field", "person_id_document",
		"--person", s.personID, "--reason", "Passport seen in person")
	if want := "skipped person_id_document for person " + s.personID + " on application " + s.open + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("docs skip --person: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}

	withStore(t, data, func(store *storage.Store, files *blobs.Store) {
		ctx := context.Background()
		app, err := store.Application(ctx, s.open)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []struct {
			name   string
			d      onboarding.Document
			reason string
		}{
			{"certificate_of_incorporation", app.Data.Documents["certificate_of_incorporation"], "Certificate checked against the registry by phone"},
			{"person_id_document", app.Data.People[0].Documents["person_id_document"], "Passport seen in person"},
		} {
			d := got.d
			if d.Status != onboarding.DocumentSkipped || d.UserOverrideReason != got.reason || d.BlobID != "" || d.FileName != "" ||
				d.FileType != "" || d.Size != 0 || d.RejectReason != "" || d.OverriddenAt == nil || d.OverriddenAt.Before(start) {
				t.Errorf("%s after skip = %+v; want skipped, no file, reason %q, overridden now", got.name, d, got.reason)
			}
			if _, err := uuid.Parse(d.FileID); err != nil || d.FileID == s.fileID {
				t.Errorf("%s: file id %q, want a new UUID", got.name, d.FileID)
			}
		}
		if _, err := files.Open(s.blobID); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("the skipped upload's file: %v; want it deleted", err)
		}
		log, err := store.Activity(ctx, s.open)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"document.skipped operator certificate_of_incorporation: Certificate checked against the registry by phone",
			"document.skipped operator person_id_document of person " + s.personID + ": Passport seen in person",
		}
		var got []string
		for _, a := range log {
			got = append(got, a.Action+" "+a.Actor.Type+" "+a.Detail)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("activity (-want +got):\n%s", diff)
		}
		for _, id := range []string{s.approved, s.rejected} {
			if log, _ := store.Activity(ctx, id); len(log) != 0 {
				t.Errorf("application %s: activity %+v; want none", id, log)
			}
		}
	})
}

// TestDocsWhileServing runs docs force|skip while serve holds the data
// directory: they go through admin.sock, and the API shows the change at
// once.
func TestDocsWhileServing(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	s := seedDocs(t, data)
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)

	// The store is locked by serve: these answers come through the socket.
	checkDocsErrors(t, s, data)

	// An application created through the API, with people from the registry.
	var created struct {
		ApplicationID string `json:"application_id"`
	}
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
		t.Fatal(err)
	}
	id := created.ApplicationID
	people := getApp(t, p, key, id).Data.People
	if len(people) == 0 {
		t.Fatalf("application %s has no people from the registry", id)
	}
	start := time.Now().UTC().Truncate(time.Second)

	r := mustRun(t, "docs", "skip", "--data-dir", data, "--app", id, "--field", "certificate_of_incorporation", "--reason", "Registry extract is enough")
	if want := "skipped certificate_of_incorporation on application " + id + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("docs skip: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}
	pid := people[0].ID
	r = mustRun(t, "docs", "skip", "--data-dir", data, "--app", id, "--field", "person_id_document", "--person", pid, "--reason", "Known to us")
	if want := "skipped person_id_document for person " + pid + " on application " + id + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("docs skip --person: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}

	app := getApp(t, p, key, id)
	checkAPIDocument(t, "certificate_of_incorporation", app.Data.Documents["certificate_of_incorporation"], "skipped", "Registry extract is enough", start)
	var personDoc map[string]any
	for _, person := range app.Data.People {
		if person.ID == pid {
			personDoc = person.Documents["person_id_document"]
		}
	}
	checkAPIDocument(t, "person_id_document", personDoc, "skipped", "Known to us", start)

	// Force the seeded rejected upload: forced, the file kept.
	r = mustRun(t, "docs", "force", "--data-dir", data, "--app", s.open, "--field", "certificate_of_incorporation", "--reason", "Scan is legible")
	if want := "forced certificate_of_incorporation on application " + s.open + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("docs force: stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}
	forced := getApp(t, p, key, s.open).Data.Documents["certificate_of_incorporation"]
	checkAPIDocument(t, "forced certificate_of_incorporation", forced, "forced", "Scan is legible", start)
	if forced["file_id"] != s.fileID || forced["file_name"] != "certificate.pdf" || forced["file_type"] != "application/pdf" {
		t.Errorf("forced document = %v; want the seeded upload %s, certificate.pdf, application/pdf", forced, s.fileID)
	}
	if _, ok := forced["acceptance_reason"]; ok {
		t.Errorf("forced document has an acceptance_reason: %v", forced)
	}
	// The forced file downloads through the API: from the document's
	// download_url when get-application gives one, else from get
	// document (docs/api.md).
	link, _ := forced["download_url"].(string)
	if link == "" {
		status, body := p.call(t, http.MethodGet, "/api/external/applications/"+s.open+"/documents/"+s.fileID, key, "")
		if status != http.StatusOK {
			t.Fatalf("get document of the forced upload: %d %s", status, body)
		}
		link, _ = decodeJSON(t, body)["url"].(string)
	}
	if status, body := p.call(t, http.MethodGet, strings.TrimPrefix(link, "http://127.0.0.1:1"), "", ""); status != http.StatusOK || body != seededPDF {
		t.Errorf("download of the forced file %s = %d %.40q; want 200 and the uploaded content", link, status, body)
	}

	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d, want 0\nstderr:\n%s", code, p.stderr.String())
	}
	withStore(t, data, func(store *storage.Store, files *blobs.Store) {
		app, err := store.Application(context.Background(), s.open)
		if err != nil {
			t.Fatal(err)
		}
		if d := app.Data.Documents["certificate_of_incorporation"]; d.BlobID != s.blobID || d.RejectReason != "" {
			t.Errorf("forced document = %+v; want the seeded file %s and no reject reason", d, s.blobID)
		}
		f, err := files.Open(s.blobID)
		if err != nil {
			t.Fatalf("the forced document's file: %v", err)
		}
		defer f.Close()
		if b, _ := io.ReadAll(f); string(b) != seededPDF {
			t.Errorf("the forced document's file holds %q", b)
		}
	})
}

// apiApp is the part of get-application the docs tests read.
type apiApp struct {
	Data struct {
		Documents map[string]map[string]any `json:"documents"`
		People    []struct {
			ID        string                    `json:"id"`
			Documents map[string]map[string]any `json:"documents"`
		} `json:"people"`
	} `json:"data"`
}

func getApp(t *testing.T, p *serveProc, key, id string) apiApp {
	t.Helper()
	var app apiApp
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, "")), &app); err != nil {
		t.Fatal(err)
	}
	return app
}

// checkAPIDocument checks a document of get-application after an override
// (docs/api.md): its status and reason, overridden_at since start, and for a
// skipped requirement no file and no download_url.
func checkAPIDocument(t *testing.T, name string, d map[string]any, status, reason string, start time.Time) {
	t.Helper()
	if d == nil {
		t.Errorf("%s: not in get-application", name)
		return
	}
	if d["status"] != status || d["user_override_reason"] != reason {
		t.Errorf("%s = %v; want status %s and user_override_reason %q", name, d, status, reason)
	}
	at, _ := d["overridden_at"].(string)
	if ts, err := time.Parse(time.RFC3339, at); err != nil || ts.Before(start) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("%s: overridden_at %q, want a timestamp of now", name, at)
	}
	if fileID, _ := d["file_id"].(string); uuid.Validate(fileID) != nil {
		t.Errorf("%s: file_id %q is not a UUID", name, fileID)
	}
	if status == string(onboarding.DocumentSkipped) {
		if u, ok := d["download_url"]; ok && u != nil {
			t.Errorf("%s: a skipped requirement has a download_url: %v", name, d)
		}
		if d["file_name"] != nil && d["file_name"] != "" {
			t.Errorf("%s: a skipped requirement has a file name: %v", name, d)
		}
	}
}
