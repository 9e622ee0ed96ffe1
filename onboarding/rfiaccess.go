package onboarding

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The RFI page (docs/api.md): the contact opens the request's link,
// verifies by email code or with the partner's auth_code exactly as on the
// application form (the door of applicant.go), uploads each requested
// document (validated by the form's upload step) and completes the request.

// Errors of the RFI page, shown to the contact.
var (
	ErrRFIClosedExpired   = &Error{Kind: KindConflict, Message: "This request has expired, so documents can no longer be sent with this link. Contact the company that asked you for them to get a new link."}
	ErrRFIClosedCompleted = &Error{Kind: KindConflict, Message: "These documents have been sent. Nothing more can be changed with this link."}
)

// ErrRFIIncomplete is the error for completing a request that still lacks
// documents; Items names each.
func ErrRFIIncomplete(missing []string) *Error {
	e := Errorf(KindInvalid, "Upload every requested document before you send them: %d %s missing.", len(missing), plural(len(missing), "is", "are"))
	for _, m := range missing {
		e.Items = append(e.Items, "Upload the "+m)
	}
	return e
}

// RFIVisitor is someone at an RFI request's link.
type RFIVisitor struct {
	Request     *RFIRequest
	Participant *Participant
	Org         *Organization
	// SignedIn and SignedInNow are as for Visitor.
	SignedIn    bool
	SignedInNow bool
	now         time.Time
	// acting, as for Visitor, is the API key of a test helper acting for
	// the contact.
	acting *Actor
	// idem, when set, is the Idempotency-Key of the test helper's
	// request, whose outcome the completion commits.
	idem *Idempotency
}

// actor is who the activity log names for what v does.
func (v *RFIVisitor) actor() Actor {
	if v.acting != nil {
		return *v.acting
	}
	return participantActor(v.Participant)
}

// OrgName is the requesting organization's display name.
func (v *RFIVisitor) OrgName() string { return v.Org.DisplayName() }

// Expired reports whether the request no longer takes documents because it
// expired: the sweep marked it, or its expires_at has passed already.
func (v *RFIVisitor) Expired() bool {
	return v.Request.Status == RFIExpired || (v.Request.Status == RFIActive && !v.now.Before(v.Request.ExpiresAt))
}

// Completed reports whether the contact has sent the documents.
func (v *RFIVisitor) Completed() bool { return v.Request.Status == RFICompleted }

// open returns nil while the request takes documents, else why not.
func (v *RFIVisitor) open() error {
	switch {
	case v.Completed():
		return ErrRFIClosedCompleted
	case v.Expired():
		return ErrRFIClosedExpired
	}
	return nil
}

// VisitRFI identifies who is at an RFI link slug, as Visit does for the
// application form: a valid auth_code or a held sign-in of this link's
// participant signs them in, and the first signed-in visit records the
// request as opened (rfi_request.opened). An expired or completed request
// is still found, so that its page can say so; nobody signs in to it.
func (s *Service) VisitRFI(ctx context.Context, host, slug, authCode string, held *SignIn) (*RFIVisitor, error) {
	if len(s.sessionKey) < minSessionKey {
		return nil, ErrFormUnavailable
	}
	if len(slug) < 16 || len(slug) > 64 {
		return nil, ErrFormNotFound
	}
	r, err := s.store.RFIRequestBySlug(ctx, slug)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrFormNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load rfi request by link: %w", err)
	}
	var p *Participant
	for i := range r.Participants {
		if r.Participants[i].LinkSlug == slug {
			p = &r.Participants[i]
		}
	}
	org := s.orgs[r.OrgID]
	if p == nil || org == nil || !s.servesOrg(host, org) {
		return nil, ErrFormNotFound
	}
	now := s.now().UTC()
	v := &RFIVisitor{Request: r, Participant: p, Org: org, now: now}
	if v.open() != nil {
		return v, nil
	}
	switch {
	case authCode != "" && s.preAuthValid(p, authCode, now):
		v.SignedIn, v.SignedInNow = true, true
		return v, s.markRFIOpened(ctx, v, now, Activity{At: now, Action: ActionPreAuthUsed, Actor: participantActor(p)})
	case held != nil && held.AppID == r.ID && held.ParticipantID == p.ID && held.Epoch == p.SessionEpoch:
		v.SignedIn = true
		if r.OpenedAt == nil {
			return v, s.markRFIOpened(ctx, v, now)
		}
	}
	return v, nil
}

// servesOrg reports whether a request to host may show org's pages: an
// organization's active custom domain serves only its own links, however
// the host is written (hostName).
func (s *Service) servesOrg(host string, org *Organization) bool {
	h := hostName(host)
	if h == "" {
		return true
	}
	for _, o := range s.orgs {
		if o.CustomDomainActive && o.ID != org.ID && hostName(o.CustomDomain) == h {
			return false
		}
	}
	return true
}

// markRFIOpened records the first signed-in open of the request, with
// extra activity.
func (s *Service) markRFIOpened(ctx context.Context, v *RFIVisitor, now time.Time, extra ...Activity) error {
	r, err := s.updateRFIRequest(ctx, v.Request.ID, func(r *RFIRequest) ([]Activity, error) {
		if r.OpenedAt == nil {
			r.OpenedAt, r.UpdatedAt = &now, now
		}
		return extra, nil
	})
	if err != nil {
		return s.formError("record rfi request opened", err)
	}
	v.refresh(r)
	return nil
}

// refresh points v at a newer copy of its request.
func (v *RFIVisitor) refresh(r *RFIRequest) {
	if p := r.participant(v.Participant.ID); p != nil {
		v.Request, v.Participant = r, p
	}
}

// rfiDoor is v's request as a door of applicant access.
func (s *Service) rfiDoor(v *RFIVisitor) door {
	return door{kind: "rfi_request", id: v.Request.ID, orgName: v.OrgName(), participant: v.Participant,
		update: func(ctx context.Context, change func(*Participant) ([]Activity, error)) error {
			pid := v.Participant.ID
			r, err := s.updateRFIRequest(ctx, v.Request.ID, func(r *RFIRequest) ([]Activity, error) {
				p := r.participant(pid)
				if p == nil {
					return nil, ErrFormNotFound
				}
				return change(p)
			})
			if err != nil {
				return err
			}
			v.refresh(r)
			return nil
		}}
}

// SignOutRFI ends every session of the visitor's participant, on every
// device, and revokes their pre-auth code, as SignOut does at an
// application's link. It works after the request closed too.
func (s *Service) SignOutRFI(ctx context.Context, v *RFIVisitor) error {
	err := s.rfiDoor(v).update(ctx, func(p *Participant) ([]Activity, error) {
		p.signOut()
		return nil, nil
	})
	if err != nil {
		return s.formError("sign out", err)
	}
	return nil
}

// SendRFICode emails the visitor a new verification code.
func (s *Service) SendRFICode(ctx context.Context, v *RFIVisitor) error {
	if err := v.open(); err != nil {
		return err
	}
	return s.sendCode(ctx, s.rfiDoor(v))
}

// VerifyRFICode checks a verification code; the right one signs the
// visitor in and records the request as opened.
func (s *Service) VerifyRFICode(ctx context.Context, v *RFIVisitor, code string) error {
	if err := v.open(); err != nil {
		return err
	}
	now := s.now().UTC()
	if err := s.checkCode(ctx, s.rfiDoor(v), code, now); err != nil {
		return err
	}
	v.SignedIn, v.SignedInNow = true, true
	return s.markRFIOpened(ctx, v, now)
}

// RFIDocumentFieldsOf returns the document fields v's request asks for.
func (s *Service) RFIDocumentFieldsOf(v *RFIVisitor) []*Field { return s.RFIDocumentFields(v.Request) }

// requestedField returns the requested document field id of v's request.
func (s *Service) requestedField(v *RFIVisitor, id string) (*Field, error) {
	for _, f := range s.RFIDocumentFields(v.Request) {
		if f.ID == id {
			return f, nil
		}
	}
	return nil, ErrNoSuchDocument
}

// UploadRFIDocument stores and validates a file for a requested document
// (the form's upload step) and records it, accepted or
// rejected with the reason, replacing the document's earlier file.
func (s *Service) UploadRFIDocument(ctx context.Context, v *RFIVisitor, up Upload) (*Document, error) {
	if err := v.open(); err != nil {
		return nil, err
	}
	f, err := s.requestedField(v, up.FieldID)
	if err != nil || up.PersonID != "" {
		return nil, ErrNoSuchDocument
	}
	doc, release, err := s.receiveUpload(ctx, f, up)
	if err != nil {
		return nil, err
	}
	action, detail := ActionDocumentUploaded, f.ID
	if doc.Status == DocumentRejected {
		action, detail = ActionDocumentRejected, f.ID+": "+doc.RejectReason
	}
	var replaced string
	r, err := s.updateRFIRequest(ctx, v.Request.ID, func(r *RFIRequest) ([]Activity, error) {
		if err := s.stillOpen(r); err != nil {
			return nil, err
		}
		if r.Documents == nil {
			r.Documents = make(map[string]Document)
		}
		replaced = r.Documents[f.ID].BlobID
		r.Documents[f.ID] = doc
		r.UpdatedAt = doc.UploadedAt
		return []Activity{{At: doc.UploadedAt, Action: action, Actor: v.actor(), Detail: detail}}, nil
	})
	if err != nil {
		release()
		return nil, s.formError("record rfi upload", err)
	}
	v.refresh(r)
	if replaced != "" {
		s.deleteBlobs([]string{replaced})
	}
	return &doc, nil
}

// stillOpen re-checks, inside an update, that r takes documents.
func (s *Service) stillOpen(r *RFIRequest) error {
	v := RFIVisitor{Request: r, now: s.now().UTC()}
	return v.open()
}

// RemoveRFIDocument removes the contact's file for a requested document.
func (s *Service) RemoveRFIDocument(ctx context.Context, v *RFIVisitor, fieldID string) error {
	if err := v.open(); err != nil {
		return err
	}
	if _, err := s.requestedField(v, fieldID); err != nil {
		return err
	}
	var blob string
	r, err := s.updateRFIRequest(ctx, v.Request.ID, func(r *RFIRequest) ([]Activity, error) {
		if err := s.stillOpen(r); err != nil {
			return nil, err
		}
		d, ok := r.Documents[fieldID]
		if !ok {
			return nil, ErrNoDocumentToRemove
		}
		blob = d.BlobID
		delete(r.Documents, fieldID)
		now := s.now().UTC()
		r.UpdatedAt = now
		return []Activity{{At: now, Action: ActionDocumentRemoved, Actor: v.actor(), Detail: fieldID}}, nil
	})
	if err != nil {
		return s.formError("record rfi removal", err)
	}
	v.refresh(r)
	if blob != "" {
		s.deleteBlobs([]string{blob})
	}
	return nil
}

// RFIMissing lists the labels of the requested documents v's request still
// lacks (none accepted), in the agent's order.
func (s *Service) RFIMissing(v *RFIVisitor) []string {
	return s.rfiMissing(v.Request)
}

func (s *Service) rfiMissing(r *RFIRequest) []string {
	var out []string
	for _, f := range s.RFIDocumentFields(r) {
		if d, ok := r.Documents[f.ID]; !ok || d.Status != DocumentAccepted {
			out = append(out, f.Label)
		}
	}
	return out
}

// CompleteRFI sends the documents: the request moves to completed
// (rfi_request.completed) once every requested document is accepted.
func (s *Service) CompleteRFI(ctx context.Context, v *RFIVisitor) error {
	if err := v.open(); err != nil {
		return err
	}
	r, err := s.completeRFI(ctx, v.Request.ID, v.actor(), v.idem.rfiOutcome())
	if err != nil {
		return s.formError("complete rfi request", err)
	}
	v.refresh(r)
	return nil
}

// completeRFI moves an open request whose documents are all accepted to
// completed.
func (s *Service) completeRFI(ctx context.Context, id string, by Actor, done func(*RFIRequest) *IdempotentOutcome) (*RFIRequest, error) {
	return s.updateRFIRequestFor(ctx, id, done, func(r *RFIRequest) ([]Activity, error) {
		if err := s.stillOpen(r); err != nil {
			return nil, err
		}
		if missing := s.rfiMissing(r); len(missing) > 0 {
			return nil, ErrRFIIncomplete(missing)
		}
		now := s.now().UTC()
		r.Status, r.CompletedAt, r.UpdatedAt = RFICompleted, &now, now
		return []Activity{{At: now, Action: ActionRFICompleted, Actor: by}}, nil
	})
}
