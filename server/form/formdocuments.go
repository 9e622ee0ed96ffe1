package form

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The documents stage: one upload per document field of the company, and
// per person-scoped document field for each person. Its page is served as
// the stage /s/documents (see stagePage).

// registerDocumentRoutes registers the upload and removal of documents.
func (s *Server) registerDocumentRoutes(in []echo.MiddlewareFunc) {
	s.e.POST(uploadRoute, s.uploadDocument, in...)
	s.e.POST("/a/:slug/documents/remove", s.removeDocument, in...)
}

// documentsPage draws the documents stage, with errMsg at the slot errKey
// (or above them all when errKey is none of them).
func (s *Server) documentsPage(c echo.Context, v *onboarding.Visitor, status int, errKey, errMsg string) error {
	up := s.uploadControls(c, formBase(v), v.Writable())
	p := &documentsView{layout: newLayout(v, "Documents"), Slots: s.docSlots(v), Next: nextStage(v, onboarding.StageDocuments)}
	for i := range p.Slots {
		p.Slots[i].uploadControls = up
	}
	if c.QueryParam("done") != "rejected" { // a rejection is an error, in the summary
		p.Notice = notice(c)
	}
	p.Errors = append(slotError(p.Slots, errKey, errMsg), rejectedErrors(p.Slots, errKey)...)
	p.MaxUpload = onboarding.SizeText(up.MaxUploadBytes)
	return s.render(c, status, "documents", p)
}

// slotError puts errMsg at the slot errKey of slots and returns the error
// summary's item for it (linked to the slot's file input, or above them
// all when errKey is none of them); nil without errMsg.
func slotError(slots []docSlot, errKey, errMsg string) []errorItem {
	if errMsg == "" {
		return nil
	}
	for i := range slots {
		if slots[i].Key == errKey {
			slots[i].Error = errMsg
			return []errorItem{{Anchor: "file-" + errKey, Message: slots[i].Label + ": " + errMsg}}
		}
	}
	return []errorItem{{Message: errMsg}}
}

// rejectedErrors are the error summary's items for the rejected files of
// slots (but errKey's, which has its own error): each names the document,
// the file and why, linked to the document's file input.
func rejectedErrors(slots []docSlot, errKey string) []errorItem {
	var out []errorItem
	for _, slot := range slots {
		if slot.Key == errKey || slot.Doc == nil || slot.Doc.Status != onboarding.DocumentRejected {
			continue
		}
		out = append(out, errorItem{Anchor: "file-" + slot.Key, Message: slot.Named() + ": " + slot.Doc.FileName + " was not accepted. " + slot.Doc.RejectReason})
	}
	return out
}

// uploadControls are what the upload and remove controls of a documents
// page need, for each of its slots.
func (s *Server) uploadControls(c echo.Context, base string, writable bool) *uploadControls {
	max := s.svc.MaxUploadBytes()
	return &uploadControls{Base: base, CSRF: csrfOf(c), Writable: writable,
		MaxUploadBytes: max, MaxUploadMessage: onboarding.ErrUploadTooLarge(max).Message}
}

// docSlots are the documents the applicant can upload, in form order and,
// within a person-scoped field, in the order of people.
func (s *Server) docSlots(v *onboarding.Visitor) []docSlot {
	var out []docSlot
	d := &v.App.Data
	for i := range v.Form().Fields() {
		f := &v.Form().Fields()[i]
		if f.Type != onboarding.TypeDocument {
			continue
		}
		add := func(personID, whose string, required bool) {
			doc, ok := d.Document(f.ID, personID)
			out = append(out, s.docSlot(f, personID, whose, required, doc, ok))
		}
		if !f.PersonScoped {
			add("", "", f.Required)
			if rd := v.App.RegistrySupplied(f.ID); rd != nil {
				slot := &out[len(out)-1]
				slot.Required = false
				slot.Registry = &registrySlot{FileName: rd.FileName, Href: s.svc.RegistryDocumentPath(rd), Filed: dateText(rd.FilingDate)}
			}
			continue
		}
		for j := range d.People {
			pp := &d.People[j]
			add(pp.ID, onboarding.PersonName(pp), onboarding.PersonNeedsDocument(f, pp))
		}
	}
	return out
}

// docSlot is the slot of document field f (for person personID, whose
// name is whose), holding doc when has; its page sets its controls.
func (s *Server) docSlot(f *onboarding.Field, personID, whose string, required bool, doc onboarding.Document, has bool) docSlot {
	slot := docSlot{Key: docKey(f.ID, personID), FieldID: f.ID, PersonID: personID,
		Label: f.Label, Description: f.Description, Whose: whose, Required: required}
	if has {
		slot.Doc = &doc
		if doc.Status != onboarding.DocumentRejected {
			slot.ViewHref = s.svc.DocumentDownloadPath(&doc)
		}
	}
	return slot
}

// uploadDocument streams a multipart upload into the blob store (see
// receiveUpload) for a document of the application.
func (s *Server) uploadDocument(c echo.Context) error {
	v := visitorOf(c)
	return s.receiveUpload(c, uploadTarget{
		page: func(status int, key, msg string) error { return s.documentsPage(c, v, status, key, msg) },
		store: func(ctx context.Context, up onboarding.Upload) (*onboarding.Document, error) {
			return s.svc.UploadDocument(ctx, v, up)
		},
		done: func(key, notice string) string { return formBase(v) + "/s/documents?done=" + notice + "#doc-" + key },
	})
}

// uploadTarget is where receiveUpload puts a file: a document of the
// application form or of an RFI request.
type uploadTarget struct {
	// page redraws the documents page with msg at the slot key (or above
	// them all when key is none of them).
	page func(status int, key, msg string) error
	// store validates and records the upload.
	store func(ctx context.Context, up onboarding.Upload) (*onboarding.Document, error)
	// done is where the browser goes once the file is stored, with the
	// notice "uploaded" or "rejected".
	done func(key, notice string) string
}

// receiveUpload streams a multipart upload into the blob store: the small
// parts (csrf, field, person) come first, as the page's form orders them,
// their CSRF token is checked before the file part, and the file part is
// read straight into storage without buffering.
func (s *Server) receiveUpload(c echo.Context, t uploadTarget) error {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.svc.MaxUploadBytes()+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return t.page(http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
	}
	small := map[string]string{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.uploadFailed(c, t, "", bodyError(err))
		}
		name := part.FormName()
		if name != "file" {
			b, err := io.ReadAll(io.LimitReader(part, 1024))
			if err != nil {
				return s.uploadFailed(c, t, "", bodyError(err))
			}
			small[name] = string(b)
			continue
		}
		if !validCSRF(csrfOf(c), small["csrf"]) {
			return onboarding.ErrCSRF
		}
		key := docKey(small["field"], small["person"])
		if part.FileName() == "" {
			return t.page(http.StatusBadRequest, key, onboarding.ErrNoFileChosen.Message)
		}
		body := &partReader{part: part}
		doc, err := t.store(r.Context(), onboarding.Upload{
			FieldID: small["field"], PersonID: small["person"], FileName: part.FileName(),
			Type: part.Header.Get("Content-Type"), Body: body,
		})
		if err != nil && body.err != nil {
			// The store failed because the file did not arrive, not
			// because of the store.
			err = bodyError(body.err)
		}
		if err != nil {
			return s.uploadFailed(c, t, key, err)
		}
		done := "uploaded"
		if doc.Status == onboarding.DocumentRejected {
			done = "rejected"
		}
		return c.Redirect(http.StatusSeeOther, t.done(key, done))
	}
	if !validCSRF(csrfOf(c), small["csrf"]) {
		return onboarding.ErrCSRF
	}
	return t.page(http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
}

// partReader is the file part of an upload, keeping the first error its
// reads met other than its end: the request body ending early, stalling
// past the server's read timeout or going over its limit, or a malformed
// multipart body.
type partReader struct {
	part io.Reader
	err  error
}

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.part.Read(b)
	if err != nil && err != io.EOF && p.err == nil {
		p.err = err
	}
	return n, err
}

// bodyError is the error of an upload whose body could not be read (err):
// over the request's limit it stays what it is (413), otherwise it is
// onboarding.ErrUploadIncomplete (400), never a 500.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return onboarding.ErrUploadIncomplete
}

// uploadFailed shows the documents page with the error at the upload it
// concerns. The rest of an oversized body is read (up to the request
// limit) so that the browser gets the page rather than a reset connection.
func (s *Server) uploadFailed(c echo.Context, t uploadTarget, key string, err error) error {
	f := web.FailureOf(err)
	switch f.Status {
	case http.StatusInternalServerError, http.StatusForbidden, http.StatusConflict:
		return err
	case http.StatusRequestEntityTooLarge:
		f.Body.Error = onboarding.ErrUploadTooLarge(s.svc.MaxUploadBytes()).Message
		_, _ = io.Copy(io.Discard, c.Request().Body)
	}
	return t.page(f.Status, key, f.Body.Error)
}

// removeDocument takes away the applicant's upload for one document.
func (s *Server) removeDocument(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	field, person := form.Get("field"), form.Get("person")
	err := s.svc.RemoveDocument(c.Request().Context(), v, field, person)
	if e := onboarding.AsError(err); e != nil && e.Kind == onboarding.KindInvalid {
		return s.documentsPage(c, v, http.StatusBadRequest, docKey(field, person), e.Message)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, formBase(v)+"/s/documents?done=doc-removed#doc-"+docKey(field, person))
}

// docKey names one document slot on the documents page.
func docKey(field, person string) string {
	if person != "" {
		return field + "-" + person
	}
	return field
}

// documentsView is the documents stage's data.
type documentsView struct {
	layout
	Slots     []docSlot
	MaxUpload string // the upload limit, for people
	Next      string // where Continue goes
}

// uploadControls are what each slot's upload and remove forms need of
// their page.
type uploadControls struct {
	Base, CSRF       string
	Writable         bool
	MaxUploadBytes   int64
	MaxUploadMessage string // form.js's message for a file over the limit
}

// docSlot is one document the applicant can upload: a company document
// field, or a person-scoped field for one person (templates/base.tmpl
// draws it).
type docSlot struct {
	*uploadControls
	Key, FieldID, PersonID string
	Label, Description     string
	Whose                  string
	Required               bool
	Doc                    *onboarding.Document
	ViewHref               string
	Error                  string
	// Registry, when set, is the registry's filing that already supplies
	// the document: it is not asked for again.
	Registry *registrySlot
}

// Named is how the slot's controls name their document to screen
// readers, so that every one is distinct: "Identity document for Samuel
// Lee".
func (d docSlot) Named() string {
	if d.Whose == "" {
		return d.Label
	}
	return d.Label + " for " + d.Whose
}

// registrySlot is a registry filing shown in the slot it supplies.
type registrySlot struct{ FileName, Href, Filed string }
