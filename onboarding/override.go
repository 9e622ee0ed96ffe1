package onboarding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// DocumentOverride is an operator's decision on a document requirement (docs/applicant-form.md).
type DocumentOverride struct {
	AppID, FieldID, PersonID, Reason string
	Skip                             bool // skip waives the requirement (no file); otherwise force accepts the uploaded file
}

// ActorOperator is the operator at the command line (onboard docs force|skip).
const ActorOperator = "operator"

// Actions of the operator's document overrides.
const (
	ActionDocumentForced  = "document.forced"
	ActionDocumentSkipped = "document.skipped"
)

// MaxOverrideReasonLength bounds the reason of a force or skip, in characters.
const MaxOverrideReasonLength = 500

// Errors of OverrideDocument.
var (
	ErrOverrideReasonRequired = &Error{Kind: KindInvalid, Message: "A reason is required"}
	ErrOverrideReasonTooLong  = Errorf(KindInvalid, "The reason must be at most %d characters", MaxOverrideReasonLength)
	// ErrOverrideReasonControl refuses escape sequences and other control
	// characters: the reason is shown in the API, the export and the
	// activity log, and echoed to operators' terminals.
	ErrOverrideReasonControl = &Error{Kind: KindInvalid, Message: "The reason " + msgControlMultiline}
)

// ErrOverrideAppNotFound is the operator's error for an application id that
// names no application.
func ErrOverrideAppNotFound(id string) *Error {
	return Errorf(KindNotFound, "Application %s not found", id)
}

// ErrNotDocumentField is the error for a field the application's form does
// not have, or has with another type than document.
func ErrNotDocumentField(field string) *Error {
	return Errorf(KindInvalid, "Field '%s' is not a document field of this application's form", field)
}

// ErrPersonRequired is the error for a person-scoped document named without
// a person.
func ErrPersonRequired(field string) *Error {
	return Errorf(KindInvalid, "Field '%s' is collected per person: give --person", field)
}

// ErrPersonNotApplicable is the error for a company document named with a
// person.
func ErrPersonNotApplicable(field string) *Error {
	return Errorf(KindInvalid, "Field '%s' is a company document: --person does not apply", field)
}

// ErrOverridePersonNotFound is the error for a person id that is not one of
// the application's people.
func ErrOverridePersonNotFound(person, app string) *Error {
	return Errorf(KindNotFound, "Person %s not found in application %s", person, app)
}

// ErrDocumentsClosed is the error for an override on an approved or
// rejected application.
func ErrDocumentsClosed(app string, status Status) *Error {
	return Errorf(KindInvalid, "Application %s is %s; its documents can no longer change", app, status)
}

// ErrNothingToForce is the error for forcing a requirement with no uploaded file.
func ErrNothingToForce(field string) *Error {
	return Errorf(KindInvalid, "No file has been uploaded for '%s'; use docs skip to waive the requirement", field)
}

// OverrideDocument records an operator's force or skip of a document
// requirement of any organization's application (docs/applicant-form.md) and returns
// the document as stored. Force accepts the file already uploaded (even a
// rejected one) as `forced`; skip waives the requirement: the document
// becomes `skipped` with no file, and the file it had is deleted once the
// change has committed. The reason becomes the document's
// user_override_reason. Approved and rejected applications cannot change.
func (s *Service) OverrideDocument(ctx context.Context, o DocumentOverride) (*Document, error) {
	reason := strings.TrimSpace(o.Reason)
	switch {
	case reason == "":
		return nil, ErrOverrideReasonRequired
	case utf8.RuneCountInString(reason) > MaxOverrideReasonLength:
		return nil, ErrOverrideReasonTooLong
	case hasControl(reason, true):
		return nil, ErrOverrideReasonControl
	}
	// Only the canonical form the API hands out names an application.
	if u, err := uuid.Parse(o.AppID); err != nil || u.String() != o.AppID {
		return nil, ErrOverrideAppNotFound(o.AppID)
	}
	var fileID string
	if o.Skip {
		id, err := newUUID(s.random)
		if err != nil {
			return nil, err
		}
		fileID = id
	}
	now := s.now().UTC()
	var (
		result  Document
		oldBlob string // the file a skip leaves unreferenced
	)
	_, err := s.updateApplication(ctx, o.AppID, func(a *Application) ([]Activity, error) {
		oldBlob = ""
		form, err := s.formOf(a)
		if err != nil {
			return nil, err
		}
		f, ok := form.Field(o.FieldID)
		if !ok || f.Type != TypeDocument {
			return nil, ErrNotDocumentField(o.FieldID)
		}
		switch {
		case f.PersonScoped && o.PersonID == "":
			return nil, ErrPersonRequired(o.FieldID)
		case !f.PersonScoped && o.PersonID != "":
			return nil, ErrPersonNotApplicable(o.FieldID)
		}
		docs := a.Data.DocumentsOf(o.PersonID)
		if docs == nil {
			return nil, ErrOverridePersonNotFound(o.PersonID, a.ID)
		}
		if a.Status.Terminal() {
			return nil, ErrDocumentsClosed(a.ID, a.Status)
		}
		d, had := (*docs)[o.FieldID]
		action := ActionDocumentForced
		if o.Skip {
			action = ActionDocumentSkipped
			oldBlob = d.BlobID
			d = Document{FileID: fileID, UploadedAt: now, Status: DocumentSkipped}
		} else {
			if !had || d.BlobID == "" {
				return nil, ErrNothingToForce(o.FieldID)
			}
			d.Status = DocumentForced
			d.RejectReason = ""
			d.AcceptanceReason = ""
		}
		d.UserOverrideReason = reason
		at := now
		d.OverriddenAt = &at
		if *docs == nil {
			*docs = make(map[string]Document)
		}
		(*docs)[o.FieldID] = d
		a.UpdatedAt = now
		result = d
		detail := o.FieldID
		if o.PersonID != "" {
			detail += " of person " + o.PersonID
		}
		return []Activity{{At: now, Action: action, Actor: Actor{Type: ActorOperator}, Detail: detail + ": " + reason}}, nil
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, ErrOverrideAppNotFound(o.AppID)
	case AsError(err) != nil:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("override document: %w", err)
	}
	// Only now that no record refers to it may the skipped file go; a
	// failure leaves an orphan file, which is logged.
	if oldBlob != "" && s.blobs != nil {
		if err := s.blobs.Delete(oldBlob); err != nil {
			s.log.Warn("delete the file of a skipped document", "blob_id", oldBlob, "err", err)
		}
	}
	return &result, nil
}
