package onboarding

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// Errors of document uploads, shown to the applicant.
var (
	ErrNoSuchDocument = &Error{Kind: KindNotFound, Message: "This document is not part of the form."}
	ErrNoFileChosen   = &Error{Kind: KindInvalid, Message: "Choose a file to upload."}
	// ErrUploadIncomplete: the upload's body ended early, stopped arriving
	// or was not a well-formed multipart form, so no file was stored.
	ErrUploadIncomplete = &Error{Kind: KindInvalid, Message: "The file could not be uploaded in full. Check your connection and try again."}
	// ErrNoDocumentToRemove: the field has no upload of the applicant's.
	ErrNoDocumentToRemove = &Error{Kind: KindNotFound, Message: "There is no uploaded file to remove."}
	// ErrDocumentSettled: an operator forced or waived this document; the
	// applicant can replace it but not remove it.
	ErrDocumentSettled = &Error{Kind: KindInvalid, Message: "This document has been settled by the team reviewing your application, so it cannot be removed. You can still upload a new file."}
)

// ErrRejectedKeptSettled is the error for a file that failed validation
// where an operator had forced or waived the document: the rejected file
// does not replace it.
func ErrRejectedKeptSettled(reason string) *Error {
	return Errorf(KindInvalid, "%s The document already settled by the team reviewing your application has been kept.", reason)
}

// ErrUploadTooLarge is the 413 for an upload over the server's limit.
func ErrUploadTooLarge(limit int64) *Error {
	return Errorf(KindTooLarge, "The file is larger than %s. Upload a smaller file.", SizeText(limit))
}

// MaxUploadBytes is the server's limit on one uploaded file.
func (s *Service) MaxUploadBytes() int64 { return s.maxUpload }

// Upload is one file the applicant sends for a document field.
type Upload struct {
	FieldID  string
	PersonID string // the person a person-scoped document belongs to
	FileName string // as the browser named it
	Type     string // Content-Type the browser declared; not trusted
	Body     io.Reader
}

// DocumentSlot says where a document field's document is kept, checking
// that the field is a document field of the visitor's form and that a
// person-scoped field names a person of the application.
func (v *Visitor) documentSlot(fieldID, personID string) (*Field, error) {
	f, ok := v.Form().Field(fieldID)
	if !ok || f.Type != TypeDocument {
		return nil, ErrNoSuchDocument
	}
	if f.PersonScoped != (personID != "") {
		return nil, ErrNoSuchDocument
	}
	if personID != "" && v.App.Data.Person(personID) == nil {
		return nil, ErrPersonNotFound
	}
	return f, nil
}

// UploadDocument stores a file for a document field, validates it
// (docs/applicant-form.md) and records it as accepted or, with the reason, rejected. The file
// replaces the field's earlier document, except that a rejected file never
// replaces one an operator forced or skipped (ErrRejectedKeptSettled). A file over the server's limit is
// ErrUploadTooLarge and leaves nothing behind.
func (s *Service) UploadDocument(ctx context.Context, v *Visitor, up Upload) (*Document, error) {
	if err := editable(v); err != nil {
		return nil, err
	}
	f, err := v.documentSlot(up.FieldID, up.PersonID)
	if err != nil {
		return nil, err
	}
	doc, release, err := s.receiveUpload(ctx, f, up)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			release()
		}
	}()
	action := ActionDocumentUploaded
	if doc.Status == DocumentRejected {
		action = ActionDocumentRejected
	}
	var replaced string
	err = s.changeForm(ctx, v, doc.UploadedAt, func(a *Application) (Activity, error) {
		docs := a.Data.DocumentsOf(up.PersonID)
		if docs == nil {
			return Activity{}, ErrPersonNotFound
		}
		if *docs == nil {
			*docs = map[string]Document{}
		}
		if old, ok := (*docs)[up.FieldID]; ok && doc.Status == DocumentRejected && (old.Status == DocumentForced || old.Status == DocumentSkipped) {
			return Activity{}, ErrRejectedKeptSettled(doc.RejectReason)
		}
		replaced = (*docs)[up.FieldID].BlobID
		(*docs)[up.FieldID] = doc
		detail := up.FieldID
		if up.PersonID != "" {
			detail += " for person " + up.PersonID
		}
		if doc.RejectReason != "" {
			detail += ": " + doc.RejectReason
		}
		return Activity{Action: action, Detail: detail}, nil
	})
	if err != nil {
		return nil, err
	}
	keep = true
	if replaced != "" {
		s.deleteBlobs([]string{replaced})
	}
	return &doc, nil
}

// receiveUpload stores an uploaded file and validates it for field f
// (docs/applicant-form.md), the one implementation the form and the RFI page share: it
// returns the document, accepted or (with the reason) rejected, and release,
// which deletes the stored file when the caller does not keep it. A file
// over the server's limit is ErrUploadTooLarge and leaves nothing behind.
func (s *Service) receiveUpload(ctx context.Context, f *Field, up Upload) (doc Document, release func(), err error) {
	if s.blobs == nil {
		return Document{}, nil, ErrFormUnavailable
	}
	blobID, size, err := s.blobs.Put(ctx, up.Body, s.maxUpload)
	if errors.Is(err, ErrFileTooLarge) {
		return Document{}, nil, ErrUploadTooLarge(s.maxUpload)
	}
	if err != nil {
		return Document{}, nil, fmt.Errorf("store upload: %w", err)
	}
	release = func() { s.deleteBlobs([]string{blobID}) }
	file, err := s.blobs.Open(blobID)
	if err != nil {
		release()
		return Document{}, nil, fmt.Errorf("open upload: %w", err)
	}
	verdict := checkDocument(f, file, size, up.Type, s.maxUpload, s.pageCounter)
	file.Close()
	fileID, err := newUUID(s.random)
	if err != nil {
		release()
		return Document{}, nil, err
	}
	doc = Document{
		FileID: fileID, FileName: cleanFileName(up.FileName, verdict.FileType), FileType: verdict.FileType,
		UploadedAt: s.now().UTC(), BlobID: blobID, Size: size,
	}
	if verdict.Reject != "" {
		doc.Status, doc.RejectReason = DocumentRejected, verdict.Reject
	} else {
		doc.Status, doc.AcceptanceReason = DocumentAccepted, verdict.Reason
	}
	return doc, release, nil
}

// RemoveDocument removes the applicant's upload for a document field (and
// person, for a person-scoped field): an accepted or a rejected file. A
// document an operator forced or skipped stays. The file is deleted once
// no record refers to it.
func (s *Service) RemoveDocument(ctx context.Context, v *Visitor, fieldID, personID string) error {
	if err := editable(v); err != nil {
		return err
	}
	if _, err := v.documentSlot(fieldID, personID); err != nil {
		return err
	}
	var blob string
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		blob = ""
		docs := a.Data.DocumentsOf(personID)
		if docs == nil {
			return Activity{}, ErrPersonNotFound
		}
		d, ok := (*docs)[fieldID]
		switch {
		case !ok:
			return Activity{}, ErrNoDocumentToRemove
		case d.Status == DocumentForced || d.Status == DocumentSkipped:
			return Activity{}, ErrDocumentSettled
		}
		blob = d.BlobID
		delete(*docs, fieldID)
		detail := fieldID
		if personID != "" {
			detail += " for person " + personID
		}
		return Activity{Action: ActionDocumentRemoved, Detail: detail}, nil
	})
	if err == nil && blob != "" {
		s.deleteBlobs([]string{blob})
	}
	return err
}

// cleanFileName keeps the base name of what the browser sent, without
// control characters or bidirectional controls (which make
// "invoice\u202efdp.exe" read as "invoiceexe.pdf" on an operator's screen),
// at most 200 bytes; a missing name gets one from the type.
func cleanFileName(name, fileType string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(strings.TrimSpace(name))
	name = strings.Map(func(r rune) rune {
		if isControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" || name == ".." {
		name = ""
	}
	if len(name) > 200 {
		name = strings.ToValidUTF8(name[:200], "")
	}
	if name == "" {
		name = "document"
		switch fileType {
		case "application/pdf":
			name += ".pdf"
		case "image/png":
			name += ".png"
		case "image/jpeg":
			name += ".jpg"
		case "image/heic", "image/heif":
			name += ".heic"
		}
	}
	return name
}

// DocumentDownloadPath returns a short-lived signed path (relative to the
// server) for the applicant to view their own upload, or "" when there is
// no file.
func (s *Service) DocumentDownloadPath(d *Document) string {
	if s.links == nil || d.BlobID == "" {
		return ""
	}
	return s.links.SignedLink("", d.BlobID, Download{FileName: d.FileName, ContentType: d.FileType}, applicantLinkTTL)
}

// applicantLinkTTL is how long the form's links to the applicant's own
// files work.
const applicantLinkTTL = 10 * time.Minute
