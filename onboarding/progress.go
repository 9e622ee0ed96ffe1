package onboarding

import (
	"context"
	"slices"
	"time"
)

// Progress through the form: which stages the applicant has been through,
// so that the overview calls a section "Completed" only when they have
// seen it and nothing required is missing, never because the partner or
// the registry filled it in.

// visit records that the applicant has been through stage; it reports
// whether that is new.
func (a *Application) visit(stage string) bool {
	if slices.Contains(a.Visited, stage) {
		return false
	}
	a.Visited = append(a.Visited, stage)
	return true
}

// Visited reports whether the applicant has been through stage.
func (v *Visitor) Visited(stage string) bool { return slices.Contains(v.App.Visited, stage) }

// MarkVisited records that the applicant opened the page of stage (the
// people and documents pages, which need no save to be complete). It
// writes only the first time, and never after submission; it changes
// neither the data, the updated time, the activity log nor the events.
func (s *Service) MarkVisited(ctx context.Context, v *Visitor, stage string) error {
	if v.Visited(stage) || !v.Writable() {
		return nil
	}
	app, err := s.updateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
		if !a.Status.Writable() {
			return nil, ErrApplicationFrozen
		}
		a.visit(stage)
		return nil, nil
	})
	if err != nil {
		return s.formError("mark visited", err)
	}
	v.refresh(app)
	return nil
}

// SignOut ends every session of the visitor's participant, on every
// device (their session epoch moves on), and revokes their pre-auth code:
// signing in again takes a new email code or a refreshed pre-auth code. It
// changes nothing else and works after submission too.
func (s *Service) SignOut(ctx context.Context, v *Visitor) error {
	pid := v.Participant.ID
	app, err := s.updateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
		p := a.participant(pid)
		if p == nil {
			return nil, ErrNotSignedIn
		}
		p.signOut()
		return nil, nil
	})
	if err != nil {
		return s.formError("sign out", err)
	}
	v.refresh(app)
	return nil
}

// signOut ends every session of p (the epoch moves on) and revokes p's
// pre-auth code: the link carrying it stays in the browser's history, and
// would sign the next user of a shared computer in. A new one comes from a
// refresh.
func (p *Participant) signOut() {
	p.SessionEpoch++
	p.PreAuthHash, p.PreAuthExpires = nil, time.Time{}
}

// RegistrySupplied returns the registry document that already supplies
// company document field fieldID, or nil: a stored filing whose document
// type is the field's id (Companies House's incorporation filing is the
// certificate_of_incorporation). Such a field is not asked for again: it
// does not count as missing, though the applicant may still upload their
// own copy.
func (a *Application) RegistrySupplied(fieldID string) *RegistryDocument {
	for i := range a.RegistryDocuments {
		if d := &a.RegistryDocuments[i]; d.DocumentType == fieldID && d.BlobID != "" {
			return d
		}
	}
	return nil
}

// RegistryDocumentPath returns a short-lived signed path (relative to the
// server) for the applicant to view registry document d, or "".
func (s *Service) RegistryDocumentPath(d *RegistryDocument) string {
	if s.links == nil || d.BlobID == "" {
		return ""
	}
	return s.links.SignedLink("", d.BlobID, Download{FileName: d.FileName, ContentType: "application/pdf"}, applicantLinkTTL)
}
