package onboarding_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

var personFields = []string{"person_full_name", "person_date_of_birth", "person_nationality", "person_home_address", "person_email", "person_phone"}

// registryDirector is a person the company register gave.
func registryDirector() onboarding.Person {
	return onboarding.Person{ID: "reg-1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "ADA LOVELACE", FirstName: "ADA", LastName: "LOVELACE"}
}

// addedPerson is a person the applicant added.
func addedPerson() onboarding.Person {
	return onboarding.Person{ID: "added-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonShareholder},
		FullName: "Grace Hopper", FirstName: "Grace", LastName: "Hopper", Nationality: "US"}
}

func TestSavePerson(t *testing.T) {
	tests := []struct {
		name       string
		personID   string
		in         onboarding.PersonInput
		meanwhile  func(a *onboarding.Application)
		wantErr    error
		wantPerson *onboarding.Person // the stored person after the save (ID filled in for new ones)
		wantSaved  []string           // the activity's fields
	}{
		{
			name: "adds a person with normalized roles and name",
			in: onboarding.PersonInput{
				Roles: []onboarding.PersonRole{onboarding.PersonUBO, "astronaut", onboarding.PersonDirector},
				Values: map[string]json.RawMessage{
					"person_full_name":     raw("  Katherine   Johnson "),
					"person_date_of_birth": raw("1918-08-26"),
					"person_nationality":   raw("US"),
					"person_email":         raw("kj@example.com"),
				},
			},
			wantPerson: &onboarding.Person{Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonUBO},
				FullName: "Katherine Johnson", FirstName: "Katherine", LastName: "Johnson", DateOfBirth: "1918-08-26", Nationality: "US", Email: "kj@example.com"},
			wantSaved: personFields,
		},
		{
			name: "refuses every problem in form order, roles first",
			in: onboarding.PersonInput{Values: map[string]json.RawMessage{
				"person_email":       raw("not an address"),
				"person_nationality": raw("france"),
			}},
			wantErr: fieldErr("Invalid field values — roles: choose at least one role; person_full_name: is required: enter the person's full name; person_nationality: must be a two-letter country code in capitals, such as GB or IE; person_email: must be an email address such as name@example.com",
				map[string]string{
					"roles":              "choose at least one role",
					"person_full_name":   "is required: enter the person's full name",
					"person_nationality": "must be a two-letter country code in capitals, such as GB or IE",
					"person_email":       "must be an email address such as name@example.com",
				}),
		},
		{
			name:     "changes a person the applicant added",
			personID: "added-1",
			in: onboarding.PersonInput{
				Roles:  []onboarding.PersonRole{onboarding.PersonShareholder, onboarding.PersonUBO},
				Values: map[string]json.RawMessage{"person_full_name": raw("Grace Brewster Hopper"), "person_home_address": raw(frAddress)},
			},
			wantPerson: &onboarding.Person{ID: "added-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonUBO, onboarding.PersonShareholder},
				FullName: "Grace Brewster Hopper", FirstName: "Grace Brewster", LastName: "Hopper",
				HomeAddress: &onboarding.Address{Line1: "1 rue de la Paix", City: "Paris", Country: "FR", Postcode: "75002"}},
			wantSaved: personFields,
		},
		{
			name:     "a one-word name is a last name, and what is not posted is cleared",
			personID: "added-1",
			in: onboarding.PersonInput{
				Roles:  []onboarding.PersonRole{onboarding.PersonDirector},
				Values: map[string]json.RawMessage{"person_full_name": raw("Grace"), "person_phone": raw("+44 20 7946 0958")},
			},
			wantPerson: &onboarding.Person{ID: "added-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonDirector},
				FullName: "Grace", LastName: "Grace", PhoneNumber: "+442079460958"},
			wantSaved: personFields,
		},
		{
			name:     "a registry person keeps their name and roles",
			personID: "reg-1",
			in: onboarding.PersonInput{
				Values: map[string]json.RawMessage{"person_full_name": raw("Someone Else"), "person_nationality": raw("GB")},
				Shown:  map[string]string{"person_full_name": "", "person_nationality": ""},
			},
			wantPerson: func() *onboarding.Person { p := registryDirector(); p.Nationality = "GB"; return &p }(),
			wantSaved:  []string{"person_nationality"},
		},
		{
			name:     "keeps roles and a field changed meanwhile that the page left as shown",
			personID: "added-1",
			in: onboarding.PersonInput{
				Roles:  []onboarding.PersonRole{onboarding.PersonShareholder},
				Values: map[string]json.RawMessage{"person_full_name": raw("Grace Hopper"), "person_nationality": raw("US"), "person_phone": raw("+442079460958")},
				Shown: map[string]string{
					"roles":              onboarding.ValueFingerprint(onboarding.RolesValue([]onboarding.PersonRole{onboarding.PersonShareholder})),
					"person_full_name":   onboarding.ValueFingerprint(raw("Grace Hopper")),
					"person_nationality": onboarding.ValueFingerprint(raw("US")),
					"person_phone":       "",
				},
			},
			meanwhile: func(a *onboarding.Application) {
				p := &a.Data.People[1]
				p.Roles = []onboarding.PersonRole{onboarding.PersonDirector}
				p.Nationality = "GB"
			},
			wantPerson: &onboarding.Person{ID: "added-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonDirector},
				FullName: "Grace Hopper", FirstName: "Grace", LastName: "Hopper", Nationality: "GB", PhoneNumber: "+442079460958"},
			wantSaved: []string{"person_full_name", "person_phone"},
		},
		{
			name:     "an unknown person",
			personID: "nobody",
			in:       onboarding.PersonInput{Roles: []onboarding.PersonRole{onboarding.PersonDirector}},
			wantErr:  onboarding.ErrPersonNotFound,
		},
		{
			name:      "a person removed meanwhile",
			personID:  "added-1",
			in:        onboarding.PersonInput{Roles: []onboarding.PersonRole{onboarding.PersonDirector}, Values: map[string]json.RawMessage{"person_full_name": raw("Grace Hopper")}},
			meanwhile: func(a *onboarding.Application) { a.Data.People = a.Data.People[:1] },
			wantErr:   onboarding.ErrPersonNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{registryDirector(), addedPerson()}
			})
			v := e.primary(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			before := len(e.activity(id))
			pid, err := e.svc.SavePerson(context.Background(), v, tt.personID, tt.in)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				e.checkActivity(id, before, nil)
				if n := len(e.app(id).Data.People); tt.meanwhile == nil && n != 2 {
					t.Errorf("%d people stored after a refused save, want 2", n)
				}
				return
			}
			if tt.personID != "" && pid != tt.personID {
				t.Errorf("SavePerson returned id %q, want %q", pid, tt.personID)
			}
			want := *tt.wantPerson
			if want.ID == "" {
				want.ID = pid
			}
			got := e.app(id).Data.Person(pid)
			if diff := cmp.Diff(&want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored person (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionPersonSaved, pid, tt.wantSaved...)})
		})
	}
}

func TestRemovePerson(t *testing.T) {
	tests := []struct {
		name     string
		personID string
		wantErr  error
	}{
		{name: "removes a person the applicant added, their ownership and their files", personID: "added-1"},
		{name: "a registry person stays", personID: "reg-1", wantErr: onboarding.ErrRegistryRecord},
		{name: "an unknown person", personID: "nobody", wantErr: onboarding.ErrPersonNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			blobs := map[string]string{"reg-1": e.putBlob("registry id"), "added-1": e.putBlob("added id")}
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{registryDirector(), addedPerson()}
				for i := range a.Data.People {
					p := &a.Data.People[i]
					p.Documents = map[string]onboarding.Document{"person_id_document": {FileID: "f-" + p.ID, Status: onboarding.DocumentAccepted, BlobID: blobs[p.ID]}}
				}
				a.Data.Entities = []onboarding.Entity{{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco", Type: onboarding.EntityHoldingCompany}}
				a.Data.Ownership = []onboarding.Ownership{
					{ID: "o-1", OwnerType: onboarding.OwnerPerson, OwnerID: "added-1", OwnedType: onboarding.OwnedTarget, Percentage: 30, IsDirect: true},
					{ID: "o-2", OwnerType: onboarding.OwnerPerson, OwnerID: "reg-1", OwnedType: onboarding.OwnedTarget, Percentage: 30, IsDirect: true},
					{ID: "o-3", OwnerType: onboarding.OwnerPerson, OwnerID: "added-1", OwnedType: onboarding.OwnedEntity, OwnedID: "ent-1", Percentage: 100, IsDirect: true},
				}
			})
			v := e.primary(id)
			before := len(e.activity(id))
			err := e.svc.RemovePerson(context.Background(), v, tt.personID)
			checkErr(t, err, tt.wantErr)
			app := e.app(id)
			var people, rows []string
			for _, p := range app.Data.People {
				people = append(people, p.ID)
			}
			for _, o := range app.Data.Ownership {
				rows = append(rows, o.ID)
			}
			wantPeople, wantRows := []string{"reg-1", "added-1"}, []string{"o-1", "o-2", "o-3"}
			var wantLog []onboarding.Activity
			if tt.wantErr == nil {
				wantPeople, wantRows = []string{"reg-1"}, []string{"o-2"}
				wantLog = []onboarding.Activity{did(v, onboarding.ActionPersonRemoved, tt.personID)}
			}
			if diff := cmp.Diff(wantPeople, people); diff != "" {
				t.Errorf("people (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantRows, rows); diff != "" {
				t.Errorf("ownership rows (-want +got):\n%s", diff)
			}
			if got, want := e.blobExists(blobs["added-1"]), tt.wantErr != nil; got != want {
				t.Errorf("the removed person's file exists: %v, want %v", got, want)
			}
			if !e.blobExists(blobs["reg-1"]) {
				t.Errorf("another person's file was deleted")
			}
			e.checkActivity(id, before, wantLog)
		})
	}
}
