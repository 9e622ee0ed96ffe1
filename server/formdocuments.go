package server

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
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
	p := &documentsView{layout: newLayout(v, "Documents"), Slots: s.docSlots(v), Writable: v.Writable(), Next: nextStage(v, onboarding.StageDocuments)}
	p.Notice = notice(c)
	p.NoticeWarn = c.QueryParam("done") == "rejected"
	for i := range p.Slots {
		if p.Slots[i].Key == errKey {
			p.Slots[i].Error = errMsg
			p.Errors = []errorItem{{Anchor: "file-" + errKey, Message: p.Slots[i].Label + ": " + errMsg}}
		}
	}
	if p.Errors == nil && errMsg != "" {
		p.Errors = []errorItem{{Message: errMsg}}
	}
	p.MaxUploadBytes = s.svc.MaxUploadBytes()
	p.MaxUpload = onboarding.SizeText(p.MaxUploadBytes)
	p.MaxUploadMessage = onboarding.ErrUploadTooLarge(p.MaxUploadBytes).Message
	return s.render(c, status, "documents", p)
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
			slot := docSlot{Key: docKey(f.ID, personID), FieldID: f.ID, PersonID: personID, Label: f.Label, Description: f.Description, Whose: whose, Required: required}
			if doc, ok := d.Document(f.ID, personID); ok {
				slot.Doc = &doc
				if doc.Status != onboarding.DocumentRejected {
					slot.ViewHref = s.svc.DocumentDownloadPath(&doc)
				}
			}
			out = append(out, slot)
		}
		if !f.PersonScoped {
			add("", "", f.Required)
			continue
		}
		for j := range d.People {
			pp := &d.People[j]
			add(pp.ID, onboarding.PersonName(pp), onboarding.PersonNeedsDocument(f, pp))
		}
	}
	return out
}

// uploadDocument streams a multipart upload into the blob store: the small
// parts (csrf, field, person) come first, as the page's form orders them,
// and the file part is read straight into storage without buffering.
func (s *Server) uploadDocument(c echo.Context) error {
	v := visitorOf(c)
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.svc.MaxUploadBytes()+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return s.documentsPage(c, v, http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
	}
	small := map[string]string{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.uploadFailed(c, v, "", err)
		}
		name := part.FormName()
		if name != "file" {
			b, err := io.ReadAll(io.LimitReader(part, 1024))
			if err != nil {
				return s.uploadFailed(c, v, "", err)
			}
			small[name] = string(b)
			continue
		}
		if !validCSRF(csrfOf(c), small["csrf"]) {
			return onboarding.ErrCSRF
		}
		key := docKey(small["field"], small["person"])
		if part.FileName() == "" {
			return s.documentsPage(c, v, http.StatusBadRequest, key, onboarding.ErrNoFileChosen.Message)
		}
		doc, err := s.svc.UploadDocument(r.Context(), v, onboarding.Upload{
			FieldID: small["field"], PersonID: small["person"], FileName: part.FileName(),
			Type: part.Header.Get("Content-Type"), Body: part,
		})
		if err != nil {
			return s.uploadFailed(c, v, key, err)
		}
		done := "uploaded"
		if doc.Status == onboarding.DocumentRejected {
			done = "rejected"
		}
		return c.Redirect(http.StatusSeeOther, formBase(v)+"/s/documents?done="+done+"#doc-"+key)
	}
	if !validCSRF(csrfOf(c), small["csrf"]) {
		return onboarding.ErrCSRF
	}
	return s.documentsPage(c, v, http.StatusBadRequest, "", onboarding.ErrNoFileChosen.Message)
}

// uploadFailed shows the documents page with the error at the upload it
// concerns. The rest of an oversized body is read (up to the request
// limit) so that the browser gets the page rather than a reset connection.
func (s *Server) uploadFailed(c echo.Context, v *onboarding.Visitor, key string, err error) error {
	f := failureOf(err)
	switch f.status {
	case http.StatusInternalServerError, http.StatusForbidden, http.StatusConflict:
		return err
	case http.StatusRequestEntityTooLarge:
		f.body.Error = onboarding.ErrUploadTooLarge(s.svc.MaxUploadBytes()).Message
		_, _ = io.Copy(io.Discard, c.Request().Body)
	}
	return s.documentsPage(c, v, f.status, key, f.body.Error)
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
	Slots            []docSlot
	MaxUpload        string // the upload limit, for people
	MaxUploadBytes   int64
	MaxUploadMessage string // form.js's message for a file over the limit
	Writable         bool
	Next             string // where Continue goes
}

// docSlot is one document the applicant can upload: a company document
// field, or a person-scoped field for one person.
type docSlot struct {
	Key, FieldID, PersonID string
	Label, Description     string
	Whose                  string
	Required               bool
	Doc                    *onboarding.Document
	ViewHref               string
	Error                  string
}
