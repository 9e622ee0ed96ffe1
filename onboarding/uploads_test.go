package onboarding_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

const (
	pngFile    = "\x89PNG\r\n\x1a\n an image"
	rejectType = "This type of file cannot be accepted. Upload a PDF, or a photo as JPEG, PNG or HEIC."
)

// blobText returns the content of blob id.
func (e *formEnv) blobText(id string) string {
	e.t.Helper()
	f, err := e.files.Open(id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func TestUploadDocument(t *testing.T) {
	tests := []struct {
		name       string
		opts       formOptions
		earlier    onboarding.DocumentStatus // the status of a document stored before; "" for none
		up         onboarding.Upload
		meanwhile  func(a *onboarding.Application)
		wantErr    error
		wantDoc    *onboarding.Document // FileID, BlobID and UploadedAt are checked apart
		wantAction string
		wantDetail string
	}{
		{
			name: "an accepted image",
			up:   onboarding.Upload{FieldID: "certificate_of_incorporation", FileName: `C:\fakepath\cert.png`, Type: "text/html", Body: strings.NewReader(pngFile)},
			wantDoc: &onboarding.Document{FileName: "cert.png", FileType: "image/png", Status: onboarding.DocumentAccepted,
				AcceptanceReason: onboarding.ReasonBaselinePassed, Size: int64(len(pngFile))},
			wantAction: onboarding.ActionDocumentUploaded, wantDetail: "certificate_of_incorporation",
		},
		{
			name:    "a new file replaces the earlier one",
			earlier: onboarding.DocumentAccepted,
			up:      onboarding.Upload{FieldID: "certificate_of_incorporation", Body: strings.NewReader("%PDF-1.4 a pdf\n%%EOF\n")},
			wantDoc: &onboarding.Document{FileName: "document.pdf", FileType: "application/pdf", Status: onboarding.DocumentAccepted,
				AcceptanceReason: onboarding.ReasonBaselinePassed, Size: 21},
			wantAction: onboarding.ActionDocumentUploaded, wantDetail: "certificate_of_incorporation",
		},
		{
			name:       "a file that fails validation is kept as rejected",
			earlier:    onboarding.DocumentAccepted,
			up:         onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.txt", Body: strings.NewReader("just words")},
			wantDoc:    &onboarding.Document{FileName: "bill.txt", Status: onboarding.DocumentRejected, RejectReason: rejectType, Size: 10},
			wantAction: onboarding.ActionDocumentRejected, wantDetail: "proof_of_address: " + rejectType,
		},
		{
			name:       "an empty file",
			up:         onboarding.Upload{FieldID: "bank_statement", FileName: "statement.pdf", Body: strings.NewReader("")},
			wantDoc:    &onboarding.Document{FileName: "statement.pdf", Status: onboarding.DocumentRejected, RejectReason: "The file is empty. Choose the file again, or try another copy."},
			wantAction: onboarding.ActionDocumentRejected, wantDetail: "bank_statement: The file is empty. Choose the file again, or try another copy.",
		},
		{
			name:    "an accepted file replaces a forced document",
			earlier: onboarding.DocumentForced,
			up:      onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.png", Body: strings.NewReader(pngFile)},
			wantDoc: &onboarding.Document{FileName: "bill.png", FileType: "image/png", Status: onboarding.DocumentAccepted,
				AcceptanceReason: onboarding.ReasonBaselinePassed, Size: int64(len(pngFile))},
			wantAction: onboarding.ActionDocumentUploaded, wantDetail: "proof_of_address",
		},
		{
			name:    "a rejected file does not replace a forced document",
			earlier: onboarding.DocumentForced,
			up:      onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.txt", Body: strings.NewReader("just words")},
			wantErr: onboarding.ErrRejectedKeptSettled(rejectType),
		},
		{
			name:    "a rejected file does not replace a skipped document",
			earlier: onboarding.DocumentSkipped,
			up:      onboarding.Upload{FieldID: "proof_of_address", FileName: "bill.txt", Body: strings.NewReader("just words")},
			wantErr: onboarding.ErrRejectedKeptSettled(rejectType),
		},
		{
			name: "a person's identity document",
			up:   onboarding.Upload{FieldID: "person_id_document", PersonID: "p-1", FileName: "passport.png", Body: strings.NewReader(pngFile)},
			wantDoc: &onboarding.Document{FileName: "passport.png", FileType: "image/png", Status: onboarding.DocumentAccepted,
				AcceptanceReason: onboarding.ReasonBaselinePassed, Size: int64(len(pngFile))},
			wantAction: onboarding.ActionDocumentUploaded, wantDetail: "person_id_document for person p-1",
		},
		{
			name:    "a file over the server's limit leaves nothing behind",
			opts:    formOptions{maxUpload: 8},
			up:      onboarding.Upload{FieldID: "certificate_of_incorporation", Body: strings.NewReader(pngFile)},
			wantErr: onboarding.ErrUploadTooLarge(8),
		},
		{name: "a field the form does not have", up: onboarding.Upload{FieldID: "nope", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrNoSuchDocument},
		{name: "a field that is not a document", up: onboarding.Upload{FieldID: "industry", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrNoSuchDocument},
		{name: "a person's document without the person", up: onboarding.Upload{FieldID: "person_id_document", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrNoSuchDocument},
		{name: "a company document for a person", up: onboarding.Upload{FieldID: "bank_statement", PersonID: "p-1", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrNoSuchDocument},
		{name: "an unknown person", up: onboarding.Upload{FieldID: "person_id_document", PersonID: "nobody", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrPersonNotFound},
		{
			name:      "a person removed meanwhile",
			up:        onboarding.Upload{FieldID: "person_id_document", PersonID: "p-1", Body: strings.NewReader(pngFile)},
			meanwhile: func(a *onboarding.Application) { a.Data.People = nil },
			wantErr:   onboarding.ErrPersonNotFound,
		},
		{name: "no blob store", opts: formOptions{noBlobs: true}, up: onboarding.Upload{FieldID: "bank_statement", Body: strings.NewReader(pngFile)}, wantErr: onboarding.ErrFormUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t, tt.opts)
			id := e.create()
			var earlierBlob string
			if tt.earlier != "" {
				earlierBlob = e.putBlob("earlier file")
			}
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Ada Lovelace"}}
				if tt.earlier != "" {
					a.Data.Documents = map[string]onboarding.Document{tt.up.FieldID: {FileID: "earlier", Status: tt.earlier, BlobID: earlierBlob}}
				}
			})
			v := e.primary(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			stored := e.app(id).Data
			blobsBefore := 0
			if !tt.opts.noBlobs {
				blobsBefore = e.blobCount()
			}
			before := len(e.activity(id))
			doc, err := e.svc.UploadDocument(context.Background(), v, tt.up)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				if diff := cmp.Diff(stored, e.app(id).Data); diff != "" {
					t.Errorf("a refused upload changed the application (-before +after):\n%s", diff)
				}
				if !tt.opts.noBlobs && e.blobCount() != blobsBefore {
					t.Errorf("a refused upload left %d files behind", e.blobCount()-blobsBefore)
				}
				e.checkActivity(id, before, nil)
				return
			}
			got := (*e.app(id).Data.DocumentsOf(tt.up.PersonID))[tt.up.FieldID]
			if diff := cmp.Diff(*doc, got); diff != "" {
				t.Errorf("stored document differs from the one returned (-returned +stored):\n%s", diff)
			}
			if diff := cmp.Diff(*tt.wantDoc, got, cmpopts.IgnoreFields(onboarding.Document{}, "FileID", "BlobID", "UploadedAt")); diff != "" {
				t.Errorf("stored document (-want +got):\n%s", diff)
			}
			if got.FileID == "" || got.FileID == "earlier" || !got.UploadedAt.Equal(formNow) {
				t.Errorf("file id %q, uploaded at %v; want a new id, now", got.FileID, got.UploadedAt)
			}
			if text := e.blobText(got.BlobID); text != string(mustRead(t, tt.up)) {
				t.Errorf("stored file = %q", text)
			}
			if earlierBlob != "" && e.blobExists(earlierBlob) {
				t.Errorf("the replaced file was not deleted")
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, tt.wantAction, tt.wantDetail)})
		})
	}
}

// mustRead returns what an upload's body held: tests use strings.Reader
// bodies, which can be rewound.
func mustRead(t *testing.T, up onboarding.Upload) []byte {
	t.Helper()
	r := up.Body.(*strings.Reader)
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRemoveDocument(t *testing.T) {
	tests := []struct {
		name       string
		status     onboarding.DocumentStatus // of the stored document; "" for none
		fieldID    string
		personID   string
		wantErr    error
		wantDetail string
	}{
		{name: "removes an accepted upload and its file", status: onboarding.DocumentAccepted, fieldID: "proof_of_address", wantDetail: "proof_of_address"},
		{name: "removes a rejected upload", status: onboarding.DocumentRejected, fieldID: "bank_statement", wantDetail: "bank_statement"},
		{name: "removes a person's document", status: onboarding.DocumentAccepted, fieldID: "person_id_document", personID: "p-1", wantDetail: "person_id_document for person p-1"},
		{name: "a forced document stays", status: onboarding.DocumentForced, fieldID: "proof_of_address", wantErr: onboarding.ErrDocumentSettled},
		{name: "a skipped document stays", status: onboarding.DocumentSkipped, fieldID: "proof_of_address", wantErr: onboarding.ErrDocumentSettled},
		{name: "nothing to remove", fieldID: "proof_of_address", wantErr: onboarding.ErrNoDocumentToRemove},
		{name: "a field that is not a document", fieldID: "industry", wantErr: onboarding.ErrNoSuchDocument},
		{name: "a person's document without the person", fieldID: "person_id_document", wantErr: onboarding.ErrNoSuchDocument},
		{name: "an unknown person", fieldID: "person_id_document", personID: "nobody", wantErr: onboarding.ErrPersonNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			blob := e.putBlob("the file")
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Ada Lovelace"}}
				if tt.status != "" {
					docs := a.Data.DocumentsOf(tt.personID)
					*docs = map[string]onboarding.Document{tt.fieldID: {FileID: "f", Status: tt.status, BlobID: blob}}
				}
			})
			v := e.primary(id)
			stored := e.app(id).Data
			before := len(e.activity(id))
			err := e.svc.RemoveDocument(context.Background(), v, tt.fieldID, tt.personID)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				if diff := cmp.Diff(stored, e.app(id).Data); diff != "" {
					t.Errorf("a refused removal changed the application (-before +after):\n%s", diff)
				}
				if !e.blobExists(blob) {
					t.Errorf("a refused removal deleted the file")
				}
				e.checkActivity(id, before, nil)
				return
			}
			if _, ok := (*e.app(id).Data.DocumentsOf(tt.personID))[tt.fieldID]; ok {
				t.Errorf("the document is still stored")
			}
			if e.blobExists(blob) {
				t.Errorf("the document's file was not deleted")
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionDocumentRemoved, tt.wantDetail)})
		})
	}
}
