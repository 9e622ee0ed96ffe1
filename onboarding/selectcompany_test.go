package onboarding_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// selectingApp stores a GB application on company selection whose
// applicant has not chosen the company yet.
func selectingApp(e *formEnv) string {
	e.t.Helper()
	id := e.create()
	e.seed(id, func(a *onboarding.Application) {
		a.ConfigID, a.Country = configSelect, "GB"
		a.Data.Fields = map[string]json.RawMessage{"company_country": raw("GB")}
	})
	return id
}

func TestSelectCompany(t *testing.T) {
	director := onboarding.RegistryPerson{Roles: []onboarding.PersonRole{onboarding.PersonDirector}, FullName: "Jane Alexandra Smith",
		FirstName: "Jane Alexandra", LastName: "Smith", DateOfBirth: "1970-03", Nationality: "GB", Shares: &onboarding.ShareBand{Lower: 50, Upper: 75}}
	tests := []struct {
		name         string
		number, as   string
		verify       func(ctx context.Context) (onboarding.Company, error)
		before       func(a *onboarding.Application)
		meanwhile    func(a *onboarding.Application)
		wantErr      error
		wantRegistry string // the application's RegistryNumber after the call
	}{
		{name: "chooses the company and takes the register's details", number: " 10000001 ", as: "NORTHWIND TRADING LIMITED", wantRegistry: "10000001"},
		{name: "the number and name are required", number: " ", as: "NORTHWIND TRADING LIMITED", wantErr: onboarding.ErrCompanyNumberRequired},
		{
			name: "the register refuses the company", number: "10000001", as: "NORTHWIND",
			verify: func(context.Context) (onboarding.Company, error) {
				return onboarding.Company{}, onboarding.ErrCompanyNotActive("10000001", "dissolved")
			},
			wantErr: onboarding.ErrCompanyNotActive("10000001", "dissolved"),
		},
		{
			name: "the register is down", number: "10000001", as: "NORTHWIND",
			verify:  func(context.Context) (onboarding.Company, error) { return onboarding.Company{}, unavailable },
			wantErr: unavailable,
		},
		{
			name: "a company already chosen", number: "10000001", as: "NORTHWIND TRADING LIMITED",
			before:  func(a *onboarding.Application) { a.RegistryNumber = "09999999" },
			wantErr: onboarding.ErrCompanyAlreadyChosen, wantRegistry: "09999999",
		},
		{
			name: "a company chosen meanwhile in another browser", number: "10000001", as: "NORTHWIND TRADING LIMITED",
			meanwhile: func(a *onboarding.Application) { a.Data.Fields["company_number"] = raw("09999999") },
			wantErr:   onboarding.ErrCompanyAlreadyChosen,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := &fakeRegistry{verify: tt.verify, parties: func(context.Context) (onboarding.Parties, error) {
				return onboarding.Parties{People: []onboarding.RegistryPerson{director}}, nil
			}}
			e := newFormEnv(t, formOptions{registry: reg})
			id := selectingApp(e)
			if tt.before != nil {
				e.seed(id, tt.before)
			}
			v := e.primary(id)
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			stored := e.app(id)
			before := len(e.activity(id))
			err := e.svc.SelectCompany(context.Background(), v, tt.number, tt.as)
			checkErr(t, err, tt.wantErr)
			app := e.app(id)
			if app.RegistryNumber != tt.wantRegistry {
				t.Errorf("RegistryNumber = %q, want %q", app.RegistryNumber, tt.wantRegistry)
			}
			if tt.wantErr != nil {
				if diff := cmp.Diff(stored, app); diff != "" {
					t.Errorf("a refused choice changed the application (-before +after):\n%s", diff)
				}
				e.checkActivity(id, before, nil)
				return
			}
			for fid, want := range map[string]any{"company_number": "10000001", "company_name": "NORTHWIND TRADING LIMITED", "company_country": "GB"} {
				checkJSON(t, "field "+fid, app.Data.Fields[fid], raw(want))
			}
			if len(app.Data.People) != 1 || app.Data.People[0].Source != onboarding.SourceRegistry || app.Data.People[0].FullName != director.FullName ||
				len(app.Data.Ownership) != 1 || app.Data.Ownership[0].PercentageBand != "50-75" {
				t.Errorf("registry parties not applied: people %+v, ownership %+v", app.Data.People, app.Data.Ownership)
			}
			if diff := cmp.Diff([]onboarding.RegistrySource{"uk_registry"}, app.Data.Meta.RegistrySources); diff != "" {
				t.Errorf("registry sources (-want +got):\n%s", diff)
			}
			if v.NeedsCompany() || len(v.Missing()) > 0 && v.Missing()[0].Message == "Choose your company from the register" {
				t.Errorf("the visitor still needs to choose the company")
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionCompanySelected, "10000001")})
		})
	}
}

func TestSearchForVisitor(t *testing.T) {
	e := newFormEnv(t, formOptions{registry: &fakeRegistry{}})
	id := selectingApp(e)
	v := e.primary(id)
	ctx := context.Background()
	// The fake registry searches no country: the search gets as far as asking it.
	_, err := e.svc.SearchForVisitor(ctx, v, "northwind")
	checkErr(t, err, onboarding.ErrSearchNotAvailable("GB"))
	_, err = e.svc.SearchForVisitor(ctx, v, "no")
	checkErr(t, err, onboarding.ErrSearchQueryTooShort)

	e.seed(id, func(a *onboarding.Application) { a.RegistryNumber = "10000001" })
	_, err = e.svc.SearchForVisitor(ctx, e.primary(id), "northwind")
	checkErr(t, err, onboarding.ErrCompanyAlreadyChosen)
}
