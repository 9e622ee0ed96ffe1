package onboarding_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

// seedEntities stores a registry entity "reg-ent", an entity the applicant
// added "ent-1" and a person "p-1", with ownership rows between them.
func seedEntities(e *formEnv, id string, blob string) {
	e.t.Helper()
	e.seed(id, func(a *onboarding.Application) {
		a.Data.People = []onboarding.Person{{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Grace Hopper", Roles: []onboarding.PersonRole{onboarding.PersonUBO}}}
		a.Data.Entities = []onboarding.Entity{
			{ID: "reg-ent", Source: onboarding.SourceRegistry, Name: "REGISTERED PARENT LTD", Type: onboarding.EntityParent, Country: "GB"},
			{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco", Type: onboarding.EntityHoldingCompany, Country: "FR",
				Documents: map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f-1", Status: onboarding.DocumentAccepted, BlobID: blob}}},
		}
		a.Data.Ownership = []onboarding.Ownership{
			{ID: "o-owner", OwnerType: onboarding.OwnerEntity, OwnerID: "ent-1", OwnedType: onboarding.OwnedTarget, Percentage: 60, IsDirect: true},
			{ID: "o-owned", OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedEntity, OwnedID: "ent-1", Percentage: 100, IsDirect: true},
			{ID: "o-other", OwnerType: onboarding.OwnerEntity, OwnerID: "reg-ent", OwnedType: onboarding.OwnedTarget, PercentageBand: "25-50"},
		}
	})
}

func TestSaveEntity(t *testing.T) {
	tests := []struct {
		name       string
		entityID   string
		in         onboarding.EntityInput
		meanwhile  func(a *onboarding.Application)
		wantErr    error
		wantEntity *onboarding.Entity // ID filled in for new ones
	}{
		{
			name:       "adds an entity with a tidy name and country",
			in:         onboarding.EntityInput{Name: "  Acme   Holdings  ", Type: onboarding.EntitySubsidiary, Country: " gb "},
			wantEntity: &onboarding.Entity{Source: onboarding.SourceUserAdded, Name: "Acme Holdings", Type: onboarding.EntitySubsidiary, Country: "GB"},
		},
		{
			name:       "the country is optional",
			in:         onboarding.EntityInput{Name: "Nowhere Ltd", Type: onboarding.EntityOther},
			wantEntity: &onboarding.Entity{Source: onboarding.SourceUserAdded, Name: "Nowhere Ltd", Type: onboarding.EntityOther},
		},
		{
			name:     "changes an entity the applicant added and keeps its documents",
			entityID: "ent-1",
			in:       onboarding.EntityInput{Name: "Holdco SA", Type: onboarding.EntityParent, Country: "BE"},
			wantEntity: &onboarding.Entity{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco SA", Type: onboarding.EntityParent, Country: "BE",
				Documents: map[string]onboarding.Document{"certificate_of_incorporation": {FileID: "f-1", Status: onboarding.DocumentAccepted}}},
		},
		{
			name: "refuses every problem in form order",
			in:   onboarding.EntityInput{Name: "   ", Type: "cousin", Country: "France"},
			wantErr: fieldErr("Invalid field values — name: is required: enter the company's legal name; type: must be one of holding_company, subsidiary, parent, other; country: must be a two-letter country code such as GB or IE",
				map[string]string{
					"name":    "is required: enter the company's legal name",
					"type":    "must be one of holding_company, subsidiary, parent, other",
					"country": "must be a two-letter country code such as GB or IE",
				}),
		},
		{
			name:    "a country code that is not assigned",
			in:      onboarding.EntityInput{Name: "Nowhere Ltd", Type: onboarding.EntityOther, Country: "zz"},
			wantErr: fieldErr("Invalid field values — country: must be a two-letter country code such as GB or IE", map[string]string{"country": "must be a two-letter country code such as GB or IE"}),
		},
		{
			name:    "a name over 300 characters",
			in:      onboarding.EntityInput{Name: strings.Repeat("n", 301), Type: onboarding.EntityOther},
			wantErr: fieldErr("Invalid field values — name: must be at most 300 characters", map[string]string{"name": "must be at most 300 characters"}),
		},
		{name: "an unknown entity", entityID: "nope", in: onboarding.EntityInput{Name: "X", Type: onboarding.EntityOther}, wantErr: onboarding.ErrEntityNotFound},
		{name: "a registry entity cannot be renamed", entityID: "reg-ent", in: onboarding.EntityInput{Name: "X", Type: onboarding.EntityOther}, wantErr: onboarding.ErrRegistryRecord},
		{
			name: "an entity removed meanwhile", entityID: "ent-1", in: onboarding.EntityInput{Name: "X", Type: onboarding.EntityOther},
			meanwhile: func(a *onboarding.Application) { a.Data.Entities = a.Data.Entities[:1] },
			wantErr:   onboarding.ErrEntityNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			seedEntities(e, id, "")
			v := e.primary(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			before := len(e.activity(id))
			eid, err := e.svc.SaveEntity(context.Background(), v, tt.entityID, tt.in)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				e.checkActivity(id, before, nil)
				if tt.meanwhile == nil {
					if diff := cmp.Diff(e.app(id).Data.Entities, v.App.Data.Entities); diff != "" {
						t.Errorf("a refused save changed the entities (-before +after):\n%s", diff)
					}
				}
				return
			}
			want := *tt.wantEntity
			if want.ID == "" {
				want.ID = eid
			}
			if diff := cmp.Diff(&want, e.app(id).Data.Entity(eid), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored entity (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionEntitySaved, eid)})
		})
	}
}

func TestRemoveEntity(t *testing.T) {
	tests := []struct {
		name     string
		entityID string
		wantErr  error
	}{
		{name: "removes an entity the applicant added, every ownership row it is in and its files", entityID: "ent-1"},
		{name: "a registry entity stays", entityID: "reg-ent", wantErr: onboarding.ErrRegistryRecord},
		{name: "an unknown entity", entityID: "nope", wantErr: onboarding.ErrEntityNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			blob := e.putBlob("certificate")
			seedEntities(e, id, blob)
			v := e.primary(id)
			before := len(e.activity(id))
			err := e.svc.RemoveEntity(context.Background(), v, tt.entityID)
			checkErr(t, err, tt.wantErr)
			app := e.app(id)
			var entities, rows []string
			for _, en := range app.Data.Entities {
				entities = append(entities, en.ID)
			}
			for _, o := range app.Data.Ownership {
				rows = append(rows, o.ID)
			}
			wantEntities, wantRows := []string{"reg-ent", "ent-1"}, []string{"o-owner", "o-owned", "o-other"}
			var wantLog []onboarding.Activity
			if tt.wantErr == nil {
				wantEntities, wantRows = []string{"reg-ent"}, []string{"o-other"}
				wantLog = []onboarding.Activity{did(v, onboarding.ActionEntityRemoved, tt.entityID)}
			}
			if diff := cmp.Diff(wantEntities, entities); diff != "" {
				t.Errorf("entities (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantRows, rows); diff != "" {
				t.Errorf("ownership rows (-want +got):\n%s", diff)
			}
			if got, want := e.blobExists(blob), tt.wantErr != nil; got != want {
				t.Errorf("the entity's file exists: %v, want %v", got, want)
			}
			e.checkActivity(id, before, wantLog)
		})
	}
}
