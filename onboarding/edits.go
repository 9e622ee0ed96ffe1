package onboarding

import (
	"context"
	"slices"
	"time"
)

// Errors of the form's pages.
var (
	ErrStageNotFound     = &Error{Kind: KindNotFound, Message: "This page does not exist."}
	ErrPrimaryOnly       = &Error{Kind: KindForbidden, Message: "Only the primary contact can do this."}
	ErrPersonNotFound    = &Error{Kind: KindNotFound, Message: "This person is no longer on the application."}
	ErrEntityNotFound    = &Error{Kind: KindNotFound, Message: "This company is no longer on the application."}
	ErrOwnershipNotFound = &Error{Kind: KindNotFound, Message: "This ownership is no longer on the application."}
	ErrRegistryRecord    = &Error{Kind: KindInvalid, Message: "Details from the company register cannot be removed or renamed here. If they are wrong, tell us in the business description."}
)

// CompanyFieldLocked reports whether the applicant may not change field f
// of application a: the company's name and number once the registry
// verified them, and, with company selection, before: they come only from
// choosing the company on the register.
func (v *Visitor) CompanyFieldLocked(a *Application, f *Field) bool {
	return (f.ID == "company_name" || f.ID == "company_number") && (a.RegistryNumber != "" || v.Config.CompanySelection)
}

// editable returns an error unless the visitor may change the application.
func editable(v *Visitor) error {
	if !v.SignedIn {
		return ErrNotSignedIn
	}
	if !v.App.Status.Writable() {
		return ErrApplicationFrozen
	}
	return nil
}

// changeForm applies an applicant's change to the stored application,
// checking again that it may change, and refreshes v.
func (s *Service) changeForm(ctx context.Context, v *Visitor, now time.Time, change func(*Application) (Activity, error)) error {
	pid := v.Participant.ID
	app, err := s.updateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
		p := a.participant(pid)
		if p == nil {
			return nil, ErrNotSignedIn
		}
		if !a.Status.Writable() {
			return nil, ErrApplicationFrozen
		}
		act, err := change(a)
		if err != nil {
			return nil, err
		}
		a.UpdatedAt = now
		act.At, act.Actor = now, v.actor(p)
		return []Activity{act}, nil
	})
	if err != nil {
		return s.formError("save form", err)
	}
	v.refresh(app)
	return nil
}

// deleteBlobs removes files no record refers to any more; a failure leaves
// an orphan file, which is logged.
func (s *Service) deleteBlobs(ids []string) {
	if s.blobs == nil {
		return
	}
	for _, id := range ids {
		if err := s.blobs.Delete(id); err != nil {
			s.log.Warn("delete unreferenced file", "blob_id", id, "err", err)
		}
	}
}

// addedParty is a person or an entity found for removal: where it came
// from, its documents, and how to take it off the application.
type addedParty struct {
	source    Source
	documents map[string]Document
	drop      func()
}

// removeParty removes the person or entity (partyType OwnerPerson or
// OwnerEntity) with id, as find locates it in the application's data: only
// one the applicant added, never one from the registry. Every ownership
// row it is part of goes with it, and the files of its documents are
// deleted once the change is stored.
func (s *Service) removeParty(ctx context.Context, v *Visitor, partyType PartyType, id string, find func(*Data) *addedParty) error {
	if err := editable(v); err != nil {
		return err
	}
	notFound, action := ErrPersonNotFound, ActionPersonRemoved
	if partyType == OwnerEntity {
		notFound, action = ErrEntityNotFound, ActionEntityRemoved
	}
	var blobs []string
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		blobs = nil
		party := find(&a.Data)
		if party == nil {
			return Activity{}, notFound
		}
		if party.source == SourceRegistry {
			return Activity{}, ErrRegistryRecord
		}
		for _, d := range party.documents {
			if d.BlobID != "" {
				blobs = append(blobs, d.BlobID)
			}
		}
		party.drop()
		a.Data.Ownership = slices.DeleteFunc(a.Data.Ownership, func(o Ownership) bool { return o.Involves(partyType, id) })
		return Activity{Action: action, Detail: id}, nil
	})
	if err == nil {
		s.deleteBlobs(blobs)
	}
	return err
}
