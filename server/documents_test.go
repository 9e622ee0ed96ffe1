package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/onboarding"
)

// Uploaded documents are written by the applicant's form; these tests seed
// them straight into the store and blob store, then read them through the
// API: get application (2.2, 2.5), list applications (4.3) and get
// document (4.7).

// Owners of a seeded document.
const (
	ownerCompany = iota
	ownerPerson
	ownerEntity
)

// seedDoc is one document to store: whose it is (owner, and index among
// the application's people or entities), its field, the record and the
// file's bytes (nil for a skipped requirement).
type seedDoc struct {
	owner   int
	index   int
	field   string
	doc     onboarding.Document
	content []byte
}

// bluebell creates an application for Bluebell Holdings PLC, which the
// registry pre-populates with two people and one entity.
func (e *env) bluebell(t testing.TB, key string) string {
	t.Helper()
	return e.create(t, key, `{"primary_contact":{"email":"jane@bluebell.example","name":"Jane Smith"},"country":"GB","company_number":"10000002","company_name":"Bluebell Holdings PLC"}`)
}

// seedDocuments stores each document's file as a blob and writes the
// documents into application id with the store's UpdateApplication, as the
// applicant's form will. It returns the documents as stored (FileID and
// BlobID filled in).
func (e *env) seedDocuments(t testing.TB, id string, docs []seedDoc) []seedDoc {
	t.Helper()
	ctx := context.Background()
	out := make([]seedDoc, len(docs))
	for i, sd := range docs {
		if sd.doc.FileID == "" {
			sd.doc.FileID = uuid.NewString()
		}
		if sd.content != nil {
			blobID, size, err := e.blobs.Put(ctx, bytes.NewReader(sd.content), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			sd.doc.BlobID, sd.doc.Size = blobID, size
		}
		out[i] = sd
	}
	_, err := e.store.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
		for _, sd := range out {
			var docs *map[string]onboarding.Document
			switch sd.owner {
			case ownerCompany:
				docs = &a.Data.Documents
			case ownerPerson:
				if sd.index >= len(a.Data.People) {
					return onboarding.Changes{}, fmt.Errorf("application has %d people; no person %d", len(a.Data.People), sd.index)
				}
				docs = &a.Data.People[sd.index].Documents
			case ownerEntity:
				if sd.index >= len(a.Data.Entities) {
					return onboarding.Changes{}, fmt.Errorf("application has %d entities; no entity %d", len(a.Data.Entities), sd.index)
				}
				docs = &a.Data.Entities[sd.index].Documents
			}
			if *docs == nil {
				*docs = map[string]onboarding.Document{}
			}
			(*docs)[sd.field] = sd.doc
		}
		return onboarding.Changes{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func at(d time.Duration) time.Time { return testNow.Add(d) }

func atPtr(d time.Duration) *time.Time { t := at(d); return &t }

// The documents of the tests: of every owner, every visible status, and
// rejected ones that the API must never show.
var (
	pdfBytes = []byte("%PDF-1.7\n% certificate of incorporation\n%%EOF\n")
	pngBytes = []byte("\x89PNG\r\n\x1a\n utility bill")
	jpgBytes = []byte("\xff\xd8\xff\xe0 passport scan")
	badBytes = []byte("MZ not a document")
)

func testDocuments() []seedDoc {
	return []seedDoc{
		{owner: ownerCompany, field: "certificate_of_incorporation", content: pdfBytes, doc: onboarding.Document{
			FileName: "certificate.pdf", FileType: "application/pdf", UploadedAt: at(time.Minute),
			Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed}},
		{owner: ownerCompany, field: "proof_of_address", content: pngBytes, doc: onboarding.Document{
			FileName: "utility bill.png", FileType: "image/png", UploadedAt: at(2 * time.Minute),
			Status: onboarding.DocumentForced, UserOverrideReason: "Checked against the lease by phone", OverriddenAt: atPtr(3 * time.Minute)}},
		{owner: ownerCompany, field: "bank_statement", doc: onboarding.Document{
			UploadedAt: at(4 * time.Minute), Status: onboarding.DocumentSkipped,
			UserOverrideReason: "Newly formed; no bank account yet", OverriddenAt: atPtr(4 * time.Minute)}},
		{owner: ownerCompany, field: "articles_of_association", content: badBytes, doc: onboarding.Document{
			FileName: "articles.exe", FileType: "application/octet-stream", UploadedAt: at(5 * time.Minute),
			Status: onboarding.DocumentRejected, RejectReason: "not a PDF or image"}},
		{owner: ownerPerson, index: 0, field: "person_id_document", content: jpgBytes, doc: onboarding.Document{
			FileName: "passport.jpg", FileType: "image/jpeg", UploadedAt: at(6 * time.Minute),
			Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonValidationPassed}},
		{owner: ownerPerson, index: 0, field: "person_proof_of_address", content: badBytes, doc: onboarding.Document{
			FileName: "bill.exe", FileType: "application/octet-stream", UploadedAt: at(7 * time.Minute),
			Status: onboarding.DocumentRejected, RejectReason: "not a PDF or image"}},
		{owner: ownerPerson, index: 1, field: "person_id_document", doc: onboarding.Document{
			UploadedAt: at(8 * time.Minute), Status: onboarding.DocumentSkipped,
			UserOverrideReason: "Not a director or UBO", OverriddenAt: atPtr(8 * time.Minute)}},
		{owner: ownerEntity, index: 0, field: "entity_certificate", content: pdfBytes, doc: onboarding.Document{
			FileName: "Bluebell Group – certificate.pdf", FileType: "application/pdf", UploadedAt: at(9 * time.Minute),
			Status: onboarding.DocumentForced, AcceptanceReason: onboarding.ReasonNoValidatorConfigured,
			UserOverrideReason: "Scanned copy accepted", OverriddenAt: atPtr(10 * time.Minute)}},
		// Skipped after a rejected upload: the file may linger, but a
		// skipped requirement never offers one.
		{owner: ownerEntity, index: 0, field: "entity_ownership_chart", content: badBytes, doc: onboarding.Document{
			FileName: "chart.exe", FileType: "application/octet-stream", UploadedAt: at(10 * time.Minute),
			Status: onboarding.DocumentSkipped, UserOverrideReason: "Structure confirmed on a call", OverriddenAt: atPtr(11 * time.Minute)}},
		{owner: ownerEntity, index: 0, field: "entity_register", content: badBytes, doc: onboarding.Document{
			FileName: "register.exe", FileType: "application/octet-stream", UploadedAt: at(11 * time.Minute),
			Status: onboarding.DocumentRejected, RejectReason: "not a PDF or image"}},
	}
}

// wantDocument is the 2.5 shape of d without download_url.
func wantDocument(d onboarding.Document) map[string]any {
	m := map[string]any{
		"file_id": d.FileID, "file_name": d.FileName, "file_type": d.FileType,
		"uploaded_at": onboarding.Timestamp(d.UploadedAt), "status": string(d.Status),
	}
	if d.AcceptanceReason != "" {
		m["acceptance_reason"] = d.AcceptanceReason
	}
	if d.UserOverrideReason != "" {
		m["user_override_reason"] = d.UserOverrideReason
	}
	if d.OverriddenAt != nil {
		m["overridden_at"] = onboarding.Timestamp(*d.OverriddenAt)
	}
	return m
}

// wantDisposition is the Content-Disposition of a download of name.
var wantDisposition = map[string]string{
	"certificate.pdf":                  `attachment; filename="certificate.pdf"; filename*=UTF-8''certificate.pdf`,
	"utility bill.png":                 `attachment; filename="utility bill.png"; filename*=UTF-8''utility%20bill.png`,
	"passport.jpg":                     `attachment; filename="passport.jpg"; filename*=UTF-8''passport.jpg`,
	"Bluebell Group – certificate.pdf": `attachment; filename="Bluebell Group _ certificate.pdf"; filename*=UTF-8''Bluebell%20Group%20%E2%80%93%20certificate.pdf`,
}

// wantDownload fetches link and checks it serves exactly sd's file, with
// its type, as an attachment under its name.
func (e *env) wantDownload(t *testing.T, link string, sd seedDoc) {
	t.Helper()
	w := e.download(t, link)
	if w.Code != http.StatusOK {
		t.Errorf("download %s = %d %s", sd.doc.FileName, w.Code, w.Body)
		return
	}
	if !bytes.Equal(w.Body.Bytes(), sd.content) {
		t.Errorf("download %s = %q, want %q", sd.doc.FileName, w.Body.Bytes(), sd.content)
	}
	for h, want := range map[string]string{
		"Content-Type":        sd.doc.FileType,
		"Content-Disposition": wantDisposition[sd.doc.FileName],
		"Cache-Control":       "private, no-store",
	} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("download %s: %s = %q, want %q", sd.doc.FileName, h, got, want)
		}
	}
}

// TestGetApplicationDocuments reads the company, person and entity
// documents of get application: the 2.5 shape, never a rejected document,
// and download links that serve the file for 60 seconds.
func TestGetApplicationDocuments(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.bluebell(t, "acme")
	docs := e.seedDocuments(t, id, testDocuments())

	w := e.do("GET", "/api/external/applications/"+id, "acme-read", "")
	if w.Code != http.StatusOK {
		t.Fatalf("get = %d %s", w.Code, w.Body)
	}
	data := decode(t, w)["data"].(map[string]any)
	people := data["people"].([]any)
	entities := data["entities"].([]any)
	if len(people) != 2 || len(entities) != 1 {
		t.Fatalf("Bluebell has %d people and %d entities, want 2 and 1", len(people), len(entities))
	}
	// Where each owner's documents are in the payload.
	payload := func(owner, index int) map[string]any {
		switch owner {
		case ownerPerson:
			return people[index].(map[string]any)["documents"].(map[string]any)
		case ownerEntity:
			return entities[index].(map[string]any)["documents"].(map[string]any)
		}
		return data["documents"].(map[string]any)
	}
	// Expected documents by owner, and the links to download.
	type key struct{ owner, index int }
	want := map[key]map[string]any{
		{ownerCompany, 0}: {}, {ownerPerson, 0}: {}, {ownerPerson, 1}: {}, {ownerEntity, 0}: {},
	}
	for _, sd := range docs {
		if sd.doc.Status != onboarding.DocumentRejected {
			want[key{sd.owner, sd.index}][sd.field] = wantDocument(sd.doc)
		}
	}
	links := map[string]string{} // file id → download_url
	for k, wantDocs := range want {
		got := payload(k.owner, k.index)
		for field, d := range got {
			d := d.(map[string]any)
			if link, ok := d["download_url"].(string); ok {
				links[d["file_id"].(string)] = link
				delete(d, "download_url")
			} else if _, present := d["download_url"]; present {
				t.Errorf("%v %s: download_url = %v, want a string or no member", k, field, d["download_url"])
			}
		}
		if diff := cmp.Diff(wantDocs, got); diff != "" {
			t.Errorf("documents of %v (-want +got):\n%s", k, diff)
		}
	}
	// Every document with a file has a link; skipped ones have none.
	for _, sd := range docs {
		link, ok := links[sd.doc.FileID]
		switch {
		case sd.doc.Status == onboarding.DocumentRejected:
		case sd.doc.Status == onboarding.DocumentSkipped:
			if ok {
				t.Errorf("skipped %s has download_url %s", sd.field, link)
			}
		case !ok:
			t.Errorf("%s %s has no download_url", sd.doc.Status, sd.field)
		case !strings.HasPrefix(link, "https://onboard.test/files/"):
			t.Errorf("%s download_url = %s, want a signed /files/ link on the public URL", sd.field, link)
		}
	}
	if len(links) != 4 {
		t.Errorf("%d download links, want 4", len(links))
	}
	// The links serve the files, for 60 seconds and not a second more.
	forbidden := errBody("Invalid or expired link")
	for _, sd := range docs {
		if link, ok := links[sd.doc.FileID]; ok {
			e.wantDownload(t, link, sd)
		}
	}
	e.clock.Advance(60 * time.Second)
	for _, sd := range docs {
		if link, ok := links[sd.doc.FileID]; ok {
			e.wantDownload(t, link, sd)
		}
	}
	e.clock.Advance(time.Second)
	for _, link := range links {
		wantError(t, e.download(t, link), http.StatusForbidden, forbidden)
	}
	// A new read signs fresh links.
	fresh := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
	link := fresh["data"].(map[string]any)["documents"].(map[string]any)["certificate_of_incorporation"].(map[string]any)["download_url"].(string)
	e.wantDownload(t, link, docs[0])
}

// TestListApplicationDocuments checks the flat document items of list
// applications: company, then people, then entities, each by field id,
// with person_id or entity_id, null download_url for skipped documents and
// no rejected ones.
func TestListApplicationDocuments(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.bluebell(t, "acme")
	docs := e.seedDocuments(t, id, testDocuments())
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	personID := func(i int) string { return app.Data.People[i].ID }
	entityID := app.Data.Entities[0].ID
	byField := func(owner, index int, field string) seedDoc {
		for _, sd := range docs {
			if sd.owner == owner && sd.index == index && sd.field == field {
				return sd
			}
		}
		t.Fatalf("no seeded document %d/%d/%s", owner, index, field)
		return seedDoc{}
	}
	item := func(sd seedDoc, extra map[string]any) map[string]any {
		m := map[string]any{"id": sd.doc.FileID, "field_id": sd.field, "file_name": sd.doc.FileName, "status": string(sd.doc.Status)}
		if sd.doc.UserOverrideReason != "" {
			m["user_override_reason"] = sd.doc.UserOverrideReason
		}
		if sd.doc.Status == onboarding.DocumentSkipped {
			m["download_url"] = nil
		} else {
			m["download_url"] = "<link>"
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	want := []any{
		item(byField(ownerCompany, 0, "bank_statement"), nil),
		item(byField(ownerCompany, 0, "certificate_of_incorporation"), nil),
		item(byField(ownerCompany, 0, "proof_of_address"), nil),
		item(byField(ownerPerson, 0, "person_id_document"), map[string]any{"person_id": personID(0)}),
		item(byField(ownerPerson, 1, "person_id_document"), map[string]any{"person_id": personID(1)}),
		item(byField(ownerEntity, 0, "entity_certificate"), map[string]any{"entity_id": entityID}),
		item(byField(ownerEntity, 0, "entity_ownership_chart"), map[string]any{"entity_id": entityID}),
	}

	w := e.do("GET", "/api/external/applications", "acme-read", "")
	if w.Code != http.StatusOK {
		t.Fatalf("list = %d %s", w.Code, w.Body)
	}
	apps := decode(t, w)["applications"].([]any)
	if len(apps) != 1 {
		t.Fatalf("%d applications listed, want 1", len(apps))
	}
	got := apps[0].(map[string]any)["documents"].([]any)
	links := map[string]string{} // file id → download_url
	for _, it := range got {
		it := it.(map[string]any)
		if link, ok := it["download_url"].(string); ok {
			links[it["id"].(string)] = link
			it["download_url"] = "<link>"
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list documents (-want +got):\n%s", diff)
	}
	for _, sd := range docs {
		if link, ok := links[sd.doc.FileID]; ok {
			e.wantDownload(t, link, sd)
		}
	}
	e.clock.Advance(61 * time.Second) // links last 60 seconds
	for _, link := range links {
		wantError(t, e.download(t, link), http.StatusForbidden, errBody("Invalid or expired link"))
	}
}

// TestGetDocument covers get document: a link valid one hour for each document
// with a file, whoever's it is.
func TestGetDocument(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.bluebell(t, "acme")
	docs := e.seedDocuments(t, id, testDocuments())
	links := map[string]string{} // file id → url
	for _, sd := range docs {
		if sd.content == nil || sd.doc.Status == onboarding.DocumentRejected || sd.doc.Status == onboarding.DocumentSkipped {
			continue
		}
		w := e.do("GET", "/api/external/applications/"+id+"/documents/"+sd.doc.FileID, "acme-read", "")
		if w.Code != http.StatusOK {
			t.Errorf("get document %s = %d %s", sd.field, w.Code, w.Body)
			continue
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", cc)
		}
		res := decode(t, w)
		link, _ := res["url"].(string)
		if !strings.HasPrefix(link, "https://onboard.test/files/") {
			t.Errorf("url = %v, want a signed /files/ link on the public URL", res["url"])
		}
		want := map[string]any{"url": link, "file_name": sd.doc.FileName, "file_type": sd.doc.FileType}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("get document %s (-want +got):\n%s", sd.field, diff)
		}
		links[sd.doc.FileID] = link
	}
	if len(links) != 4 {
		t.Fatalf("%d documents served, want 4", len(links))
	}
	// Valid for an hour, through its last second, and not after.
	e.clock.Advance(time.Hour)
	for _, sd := range docs {
		if link, ok := links[sd.doc.FileID]; ok {
			e.wantDownload(t, link, sd)
		}
	}
	e.clock.Advance(time.Second)
	for _, link := range links {
		wantError(t, e.download(t, link), http.StatusForbidden, errBody("Invalid or expired link"))
	}
}

func TestGetDocumentErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.bluebell(t, "acme")
	docs := e.seedDocuments(t, id, testDocuments())
	fileID := func(field string, status onboarding.DocumentStatus) string {
		for _, sd := range docs {
			if sd.field == field && sd.doc.Status == status {
				return sd.doc.FileID
			}
		}
		t.Fatalf("no seeded %s document %s", status, field)
		return ""
	}
	accepted := fileID("certificate_of_incorporation", onboarding.DocumentAccepted)

	// Another application of the same organization, with a document of its own.
	other := e.bluebell(t, "acme")
	otherDoc := e.seedDocuments(t, other, testDocuments()[:1])[0].doc.FileID
	if w := e.do("GET", "/api/external/applications/"+other+"/documents/"+otherDoc, "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("the other application's document = %d %s", w.Code, w.Body)
	}
	// An application of another organization.
	globex := e.create(t, "globex", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000008","company_name":"Bluebell Group Ltd"}`)
	globexDoc := e.seedDocuments(t, globex, testDocuments()[:1])[0].doc.FileID

	notFound := errBody("Document not found")
	path := func(app, doc string) string { return "/api/external/applications/" + app + "/documents/" + doc }
	tests := []struct {
		name, path, key string
		status          int
		want            map[string]any
	}{
		{"unknown document", path(id, uuid.NewString()), "acme", 404, notFound},
		{"rejected company document", path(id, fileID("articles_of_association", onboarding.DocumentRejected)), "acme", 404, notFound},
		{"rejected person document", path(id, fileID("person_proof_of_address", onboarding.DocumentRejected)), "acme", 404, notFound},
		{"rejected entity document", path(id, fileID("entity_register", onboarding.DocumentRejected)), "acme", 404, notFound},
		{"skipped company document", path(id, fileID("bank_statement", onboarding.DocumentSkipped)), "acme", 404, notFound},
		{"skipped person document", path(id, fileID("person_id_document", onboarding.DocumentSkipped)), "acme", 404, notFound},
		{"skipped entity document with a lingering file", path(id, fileID("entity_ownership_chart", onboarding.DocumentSkipped)), "acme", 404, notFound},
		{"not a UUID", path(id, "not-a-uuid"), "acme", 404, notFound},
		{"upper-case UUID", path(id, strings.ToUpper(accepted)), "acme", 404, notFound},
		{"UUID without hyphens", path(id, strings.ReplaceAll(accepted, "-", "")), "acme", 404, notFound},
		{"document of another application", path(id, otherDoc), "acme", 404, notFound},
		{"application of another organization", path(globex, globexDoc), "acme", 404, errBody("Application not found")},
		{"other organization asks for ours", path(id, accepted), "globex", 404, errBody("Application not found")},
		{"unknown application", path(uuid.NewString(), accepted), "acme", 404, errBody("Application not found")},
		{"application id not a UUID", path("nope", accepted), "acme", 404, errBody("Application not found")},
		{"key without applications:read", path(id, accepted), "acme-create", 401, errBody("API key missing required scopes: applications:read")},
		{"write-only key", path(id, accepted), "acme-write", 401, errBody("API key missing required scopes: applications:read")},
		{"revoked key", path(id, accepted), "revoked", 401, errBody("Invalid API key")},
		{"no key", path(id, accepted), "", 401, errBody("Missing API key")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("GET", tt.path, tt.key, ""), tt.status, tt.want)
		})
	}
	// The same document is served through its own application.
	if w := e.do("GET", path(id, accepted), "acme", ""); w.Code != http.StatusOK {
		t.Errorf("accepted document = %d %s", w.Code, w.Body)
	}
}
