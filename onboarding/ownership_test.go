package onboarding_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestSaveOwnership(t *testing.T) {
	ownerErr := fieldErr("Invalid field values — owner: choose who owns the shares", map[string]string{"owner": "choose who owns the shares"})
	tests := []struct {
		name        string
		ownershipID string
		in          onboarding.OwnershipInput
		meanwhile   func(a *onboarding.Application)
		wantErr     error
		wantRow     *onboarding.Ownership // ID filled in for new rows
	}{
		{
			name:    "a person owns part of the company",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: " 40% ", IsDirect: true, IsNominee: true},
			wantRow: &onboarding.Ownership{OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, Percentage: 40, IsDirect: true, IsNominee: true},
		},
		{
			name:    "a person owns an entity",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "entity:ent-1", Percentage: "100", IsDirect: true},
			wantRow: &onboarding.Ownership{OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedEntity, OwnedID: "ent-1", Percentage: 100, IsDirect: true},
		},
		{
			name:    "indirect holdings add up on their own",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "60"},
			wantRow: &onboarding.Ownership{OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, Percentage: 60},
		},
		{
			name:        "changing a row does not count its old percentage",
			ownershipID: "o-1",
			in:          onboarding.OwnershipInput{Owner: "entity:ent-1", Owned: "target", Percentage: "100", IsDirect: true},
			wantRow:     &onboarding.Ownership{ID: "o-1", OwnerType: onboarding.OwnerEntity, OwnerID: "ent-1", OwnedType: onboarding.OwnedTarget, Percentage: 100, IsDirect: true},
		},
		{
			name:    "direct holdings of the company over 100%",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "40.005", IsDirect: true},
			wantErr: onboarding.ErrOwnershipOver100("Acme SAS", 100.005, "Holdco holds 60%"),
		},
		{
			name: "holdings of an entity over 100% name the entity",
			in:   onboarding.OwnershipInput{Owner: "person:p-1", Owned: "entity:ent-1", Percentage: "50", IsDirect: true},
			meanwhile: func(a *onboarding.Application) {
				a.Data.Ownership[0].OwnedType, a.Data.Ownership[0].OwnedID, a.Data.Ownership[0].OwnerID = onboarding.OwnedEntity, "ent-1", "ent-2"
			},
			wantErr: onboarding.ErrOwnershipOver100("Holdco", 110, "REGISTERED PARENT LTD holds 60%"),
		},
		{
			name: "refuses every problem in form order",
			in:   onboarding.OwnershipInput{Owner: "person:nobody", Owned: "entity:nope", Percentage: "lots"},
			wantErr: fieldErr("Invalid field values — owner: choose who owns the shares; owned: choose which company is owned; percentage: must be a number from 0 to 100",
				map[string]string{"owner": "choose who owns the shares", "owned": "choose which company is owned", "percentage": "must be a number from 0 to 100"}),
		},
		{
			name:    "a company cannot own itself",
			in:      onboarding.OwnershipInput{Owner: "entity:ent-1", Owned: "entity:ent-1", Percentage: "10"},
			wantErr: fieldErr("Invalid field values — owned: a company cannot own itself", map[string]string{"owned": "a company cannot own itself"}),
		},
		{
			name:    "a percentage over 100",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "101"},
			wantErr: fieldErr("Invalid field values — percentage: must be a number from 0 to 100", map[string]string{"percentage": "must be a number from 0 to 100"}),
		},
		{
			name:    "a negative percentage",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "-1"},
			wantErr: fieldErr("Invalid field values — percentage: must be a number from 0 to 100", map[string]string{"percentage": "must be a number from 0 to 100"}),
		},
		{
			name:    "NaN is no percentage",
			in:      onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "NaN"},
			wantErr: fieldErr("Invalid field values — percentage: must be a number from 0 to 100", map[string]string{"percentage": "must be a number from 0 to 100"}),
		},
		{
			name:    "an owner that is not a party",
			in:      onboarding.OwnershipInput{Owner: "target", Owned: "target", Percentage: "1"},
			wantErr: ownerErr,
		},
		{
			name:      "an owner removed meanwhile",
			in:        onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "1"},
			meanwhile: func(a *onboarding.Application) { a.Data.People = nil },
			wantErr:   ownerErr,
		},
		{
			name:      "an owned entity removed meanwhile",
			in:        onboarding.OwnershipInput{Owner: "person:p-1", Owned: "entity:ent-1", Percentage: "1"},
			meanwhile: func(a *onboarding.Application) { a.Data.Entities = a.Data.Entities[1:] },
			wantErr:   fieldErr("Invalid field values — owned: choose which company is owned", map[string]string{"owned": "choose which company is owned"}),
		},
		{
			name:        "an unknown row",
			ownershipID: "nope",
			in:          onboarding.OwnershipInput{Owner: "person:p-1", Owned: "target", Percentage: "1"},
			wantErr:     onboarding.ErrOwnershipNotFound,
		},
		{
			name:        "a registry row cannot be changed",
			ownershipID: "o-band",
			in:          onboarding.OwnershipInput{Owner: "entity:ent-2", Owned: "target", Percentage: "1"},
			wantErr:     onboarding.ErrRegistryRecord,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{{ID: "p-1", Source: onboarding.SourceUserAdded, FullName: "Grace Hopper"}}
				a.Data.Entities = []onboarding.Entity{
					{ID: "ent-1", Source: onboarding.SourceUserAdded, Name: "Holdco", Type: onboarding.EntityHoldingCompany},
					{ID: "ent-2", Source: onboarding.SourceRegistry, Name: "REGISTERED PARENT LTD", Type: onboarding.EntityParent},
				}
				a.Data.Ownership = []onboarding.Ownership{
					{ID: "o-1", OwnerType: onboarding.OwnerEntity, OwnerID: "ent-1", OwnedType: onboarding.OwnedTarget, Percentage: 60, IsDirect: true},
					{ID: "o-band", OwnerType: onboarding.OwnerEntity, OwnerID: "ent-2", OwnedType: onboarding.OwnedTarget, PercentageBand: "25-50", IsDirect: false},
				}
			})
			v := e.primary(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			stored := e.app(id).Data.Ownership
			before := len(e.activity(id))
			oid, err := e.svc.SaveOwnership(context.Background(), v, tt.ownershipID, tt.in)
			if want, ok := errors.AsType[*onboarding.OwnershipTotalError](tt.wantErr); ok {
				got, ok := errors.AsType[*onboarding.OwnershipTotalError](err)
				if !ok {
					t.Fatalf("err = %v, want an *OwnershipTotalError", err)
				}
				if diff := cmp.Diff(want.Err, got.Err); diff != "" {
					t.Errorf("total error (-want +got):\n%s", diff)
				}
				if onboarding.AsError(err) == nil {
					t.Errorf("AsError does not see the total error's Error")
				}
			} else {
				checkErr(t, err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if diff := cmp.Diff(stored, e.app(id).Data.Ownership); diff != "" {
					t.Errorf("a refused save changed ownership (-before +after):\n%s", diff)
				}
				e.checkActivity(id, before, nil)
				return
			}
			want := *tt.wantRow
			if want.ID == "" {
				want.ID = oid
			}
			var got *onboarding.Ownership
			for _, o := range e.app(id).Data.Ownership {
				if o.ID == oid {
					got = &o
				}
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("stored row (-want +got):\n%s", diff)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionOwnershipSaved, oid)})
		})
	}
}

func TestOwnershipOver100Message(t *testing.T) {
	err := onboarding.ErrOwnershipOver100("Acme SAS", 100.005)
	want := &onboarding.Error{Kind: onboarding.KindInvalid,
		Message: "Ownership of Acme SAS would add up to 100.01%, more than 100%. Check the percentages.",
		Details: map[string]string{"percentage": "would bring the total for Acme SAS to 100.01%; the total cannot be more than 100%"}}
	if diff := cmp.Diff(want, err.Err); diff != "" {
		t.Errorf("ErrOwnershipOver100 (-want +got):\n%s", diff)
	}
	if err.Error() != want.Message {
		t.Errorf("Error() = %q, want %q", err.Error(), want.Message)
	}
	for p, want := range map[float64]string{75: "75", 2.5: "2.5", 100.0 / 3: "33.33", 0: "0"} {
		if got := onboarding.FormatPercent(p); got != want {
			t.Errorf("FormatPercent(%v) = %q, want %q", p, got, want)
		}
	}
}

func TestRemoveOwnership(t *testing.T) {
	tests := []struct {
		name     string
		rowID    string
		wantErr  error
		wantRows []string
	}{
		{name: "removes a row the applicant added", rowID: "o-1", wantRows: []string{"o-band"}},
		{name: "a registry row stays", rowID: "o-band", wantErr: onboarding.ErrRegistryRecord, wantRows: []string{"o-1", "o-band"}},
		{name: "an unknown row", rowID: "nope", wantErr: onboarding.ErrOwnershipNotFound, wantRows: []string{"o-1", "o-band"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.seed(id, func(a *onboarding.Application) {
				a.Data.People = []onboarding.Person{{ID: "p-1", Source: onboarding.SourceUserAdded}}
				a.Data.Ownership = []onboarding.Ownership{
					{ID: "o-1", OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, Percentage: 60, IsDirect: true},
					{ID: "o-band", OwnerType: onboarding.OwnerPerson, OwnerID: "p-1", OwnedType: onboarding.OwnedTarget, PercentageBand: "25-50"},
				}
			})
			v := e.primary(id)
			before := len(e.activity(id))
			err := e.svc.RemoveOwnership(context.Background(), v, tt.rowID)
			checkErr(t, err, tt.wantErr)
			var rows []string
			for _, o := range e.app(id).Data.Ownership {
				rows = append(rows, o.ID)
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("ownership rows (-want +got):\n%s", diff)
			}
			var wantLog []onboarding.Activity
			if tt.wantErr == nil {
				wantLog = []onboarding.Activity{did(v, onboarding.ActionOwnershipRemoved, tt.rowID)}
			}
			e.checkActivity(id, before, wantLog)
		})
	}
}
