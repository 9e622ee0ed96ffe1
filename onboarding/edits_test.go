package onboarding_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// formUseCases is every change the applicant's form makes, each called
// with answers that would succeed on a writable application with a
// person "p-1", an entity "ent-1", an ownership row "o-1", a collaborator
// "collab-colleague@example.com" and an accepted bank statement.
func formUseCases() map[string]func(*onboarding.Service, *onboarding.Visitor) error {
	ctx := context.Background()
	return map[string]func(*onboarding.Service, *onboarding.Visitor) error{
		"SaveStage": func(s *onboarding.Service, v *onboarding.Visitor) error {
			return s.SaveStage(ctx, v, "business", map[string]json.RawMessage{"tax_id": raw("FR1")}, nil)
		},
		"SavePerson": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.SavePerson(ctx, v, "", onboarding.PersonInput{Roles: []onboarding.PersonRole{onboarding.PersonDirector},
				Values: map[string]json.RawMessage{"person_full_name": raw("Ada Lovelace")}})
			return err
		},
		"RemovePerson": func(s *onboarding.Service, v *onboarding.Visitor) error { return s.RemovePerson(ctx, v, "p-1") },
		"SaveEntity": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.SaveEntity(ctx, v, "ent-1", onboarding.EntityInput{Name: "Holdco 2", Type: onboarding.EntityParent})
			return err
		},
		"RemoveEntity": func(s *onboarding.Service, v *onboarding.Visitor) error { return s.RemoveEntity(ctx, v, "ent-1") },
		"SaveOwnership": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.SaveOwnership(ctx, v, "", onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "10"})
			return err
		},
		"RemoveOwnership": func(s *onboarding.Service, v *onboarding.Visitor) error { return s.RemoveOwnership(ctx, v, "o-1") },
		"InviteCollaborator": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.InviteCollaborator(ctx, v, "new@example.com", "")
			return err
		},
		"RemoveCollaborator": func(s *onboarding.Service, v *onboarding.Visitor) error {
			return s.RemoveCollaborator(ctx, v, "collab-colleague@example.com")
		},
		"UploadDocument": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.UploadDocument(ctx, v, onboarding.Upload{FieldID: "proof_of_address", Body: strings.NewReader(pngFile)})
			return err
		},
		"RemoveDocument": func(s *onboarding.Service, v *onboarding.Visitor) error {
			return s.RemoveDocument(ctx, v, "bank_statement", "")
		},
		"SelectCompany": func(s *onboarding.Service, v *onboarding.Visitor) error {
			return s.SelectCompany(ctx, v, "123", "Acme SAS")
		},
		"SearchForVisitor": func(s *onboarding.Service, v *onboarding.Visitor) error {
			_, err := s.SearchForVisitor(ctx, v, "acme")
			return err
		},
		"Submit": func(s *onboarding.Service, v *onboarding.Visitor) error { return s.Submit(ctx, v) },
	}
}

// TestFormGuards checks that every change of the form refuses a visitor
// who is not signed in, and an application that is no longer writable,
// before it changes anything.
func TestFormGuards(t *testing.T) {
	guards := []struct {
		name    string
		status  onboarding.Status
		signIn  bool
		wantErr error
	}{
		{"not signed in", onboarding.StatusInProgress, false, onboarding.ErrNotSignedIn},
		{"submitted", onboarding.StatusSubmitted, true, onboarding.ErrApplicationFrozen},
		{"in review", onboarding.StatusReview, true, onboarding.ErrApplicationFrozen},
		{"approved", onboarding.StatusApproved, true, onboarding.ErrApplicationFrozen},
		{"rejected", onboarding.StatusRejected, true, onboarding.ErrApplicationFrozen},
	}
	for name, call := range formUseCases() {
		t.Run(name, func(t *testing.T) {
			e := newFormEnv(t)
			blob := e.putBlob("statement")
			for _, g := range guards {
				id := e.create()
				e.addCollaborator(id, "colleague@example.com")
				e.seed(id, func(a *onboarding.Application) {
					complete(a)
					a.ConfigID = configSelect // so that SelectCompany and SearchForVisitor get as far as the guard
					delete(a.Data.Fields, "company_number")
					a.Status = g.status
					a.Data.Entities = []onboarding.Entity{{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco", Type: onboarding.EntityHoldingCompany}}
					a.Data.People = append(a.Data.People, onboarding.Person{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Grace Hopper"})
					a.Data.Ownership = []onboarding.Ownership{{ID: "o-1", OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, Percentage: 5}}
					a.Data.Documents["bank_statement"] = onboarding.Document{FileID: "f", Status: onboarding.DocumentAccepted, BlobID: blob}
				})
				v := e.primary(id)
				v.SignedIn = g.signIn
				stored := e.app(id)
				before := len(e.activity(id))
				blobs := e.blobCount()
				err := call(e.svc, v)
				checkErr(t, err, g.wantErr)
				if diff := cmp.Diff(stored, e.app(id)); diff != "" {
					t.Errorf("%s: the application changed (-before +after):\n%s", g.name, diff)
				}
				if e.blobCount() != blobs {
					t.Errorf("%s: the blob store changed", g.name)
				}
				e.checkActivity(id, before, nil)
			}
		})
	}
}

// TestFormGuardsCheckTheStore checks that a change refuses an application
// submitted after the visitor read it, and a participant removed since.
func TestFormGuardsCheckTheStore(t *testing.T) {
	meanwhile := []struct {
		name    string
		change  func(a *onboarding.Application)
		wantErr error
	}{
		{"submitted meanwhile", func(a *onboarding.Application) { a.Status = onboarding.StatusSubmitted }, onboarding.ErrApplicationFrozen},
		{"signed out meanwhile", func(a *onboarding.Application) { a.Participants[0].ID = "someone-else" }, onboarding.ErrNotSignedIn},
	}
	for name, call := range formUseCases() {
		if name == "SelectCompany" || name == "SearchForVisitor" {
			continue // need a registry; see selectcompany_test.go
		}
		t.Run(name, func(t *testing.T) {
			e := newFormEnv(t)
			for _, m := range meanwhile {
				id := e.create()
				e.addCollaborator(id, "colleague@example.com")
				blob := e.putBlob("statement")
				e.seed(id, func(a *onboarding.Application) {
					complete(a)
					a.Data.Entities = []onboarding.Entity{{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco", Type: onboarding.EntityHoldingCompany}}
					a.Data.People = append(a.Data.People, onboarding.Person{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Grace Hopper"})
					a.Data.Ownership = []onboarding.Ownership{{ID: "o-1", OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, Percentage: 5}}
					a.Data.Documents["bank_statement"] = onboarding.Document{FileID: "f", Status: onboarding.DocumentAccepted, BlobID: blob}
				})
				v := e.primary(id)
				e.seed(id, m.change)
				stored := e.app(id)
				before := len(e.activity(id))
				blobs := e.blobCount()
				checkErr(t, call(e.svc, v), m.wantErr)
				if e.blobCount() != blobs {
					t.Errorf("%s: the blob store changed", m.name)
				}
				if diff := cmp.Diff(stored, e.app(id)); diff != "" {
					t.Errorf("%s: the application changed (-before +after):\n%s", m.name, diff)
				}
				if !e.blobExists(blob) {
					t.Errorf("%s: a file was deleted", m.name)
				}
				e.checkActivity(id, before, nil)
			}
		})
	}
}
