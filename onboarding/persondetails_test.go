package onboarding_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// detailsForm is a form that requires a person's date of birth, home
// address, email address and tax number (whose label starts with an
// abbreviation), but not their nationality or phone number.
func detailsForm(t *testing.T) *onboarding.Form {
	t.Helper()
	form, err := onboarding.NewForm("details", []onboarding.Field{
		{ID: "company_name", Label: "Registered company name", Type: onboarding.TypeText, Category: "company", Required: true},
		{ID: "person_full_name", Label: "Full legal name", Type: onboarding.TypeText, Category: "people", PersonScoped: true},
		{ID: "person_date_of_birth", Label: "Date of birth", Type: onboarding.TypeDate, Category: "people", PersonScoped: true, Required: true, Rule: "not_future"},
		{ID: "person_nationality", Label: "Nationality", Type: onboarding.TypeText, Category: "people", PersonScoped: true},
		{ID: "person_home_address", Label: "Home address", Type: onboarding.TypeAddress, Category: "people", PersonScoped: true, Required: true},
		{ID: "person_email", Label: "Email address", Type: onboarding.TypeText, Category: "people", PersonScoped: true, Required: true},
		{ID: "person_phone", Label: "Phone number", Type: onboarding.TypePhone, Category: "people", PersonScoped: true},
		{ID: "person_tin", Label: "TIN (tax identification number)", Type: onboarding.TypeText, Category: "people", PersonScoped: true, Required: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return form
}

// detail is a MissingDetail as the tests compare it.
type detail struct {
	FieldID, Label string
	Partial        bool
}

// TestMissingDetails: what the form still needs about a person, by the
// rule the submission checks: required details with no value, and a
// register's partial date of birth where a full one is required.
func TestMissingDetails(t *testing.T) {
	home := &onboarding.Address{Line1: "1 High Street", City: "Leeds", Country: "GB"}
	complete := func(p onboarding.Person) onboarding.Person {
		p.DateOfBirth, p.HomeAddress, p.Email = "1979-03-14", home, "eleanor@example.com"
		p.Fields = map[string]json.RawMessage{"person_tin": json.RawMessage(`"123-45"`)}
		return p
	}
	registry := onboarding.Person{ID: "reg-1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "Eleanor Mary Hargreaves", DateOfBirth: "1979-03", Nationality: "GB"}
	tests := []struct {
		name   string
		form   *onboarding.Form
		person onboarding.Person
		want   []detail
	}{
		{
			name:   "a registry person: partial date of birth, no address, email or tax number",
			form:   detailsForm(t),
			person: registry,
			want: []detail{
				{"person_date_of_birth", "full date of birth", true},
				{"person_home_address", "home address", false},
				{"person_email", "email address", false},
				{"person_tin", "TIN (tax identification number)", false},
			},
		},
		{
			name: "an added person with nothing: optional details are not needed",
			form: detailsForm(t),
			person: onboarding.Person{ID: "u-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonShareholder},
				FullName: "Samuel Lee"},
			want: []detail{
				{"person_date_of_birth", "date of birth", false},
				{"person_home_address", "home address", false},
				{"person_email", "email address", false},
				{"person_tin", "TIN (tax identification number)", false},
			},
		},
		{name: "a registry person completed", form: detailsForm(t), person: complete(registry)},
		{
			name: "a completed person whose date is only a year",
			form: detailsForm(t),
			person: func() onboarding.Person {
				p := complete(registry)
				p.DateOfBirth = "1979"
				return p
			}(),
			want: []detail{{"person_date_of_birth", "full date of birth", true}},
		},
		{name: "the standard form requires no detail", form: onboarding.StandardForm(), person: registry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []detail
			for _, d := range tt.form.MissingDetails(&tt.person) {
				got = append(got, detail{d.Field.ID, d.Label(), d.Partial})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MissingDetails (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingPeopleDetails: the submission lacks exactly the details
// MissingDetails lists, field by field in form order, each naming its
// person.
func TestMissingPeopleDetails(t *testing.T) {
	form := detailsForm(t)
	eleanor := onboarding.Person{ID: "reg-1", Source: onboarding.SourceRegistry, Roles: []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "Eleanor Mary Hargreaves", DateOfBirth: "1979-03", Email: "eleanor@example.com",
		Fields: map[string]json.RawMessage{"person_tin": []byte(`"123-45"`)}}
	samuel := onboarding.Person{ID: "u-1", Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{onboarding.PersonShareholder},
		FullName: "Samuel Lee", DateOfBirth: "1990-01-02", HomeAddress: &onboarding.Address{Line1: "2 Low Road", City: "York", Country: "GB"},
		Fields: map[string]json.RawMessage{"person_tin": []byte(`"678-90"`)}}
	app := &onboarding.Application{Data: onboarding.Data{
		Fields: map[string]json.RawMessage{"company_name": []byte(`"Northwind Trading Limited"`)},
		People: []onboarding.Person{eleanor, samuel},
	}}
	v := &onboarding.Visitor{App: app, Config: &onboarding.Configuration{Form: form}}
	want := []onboarding.Missing{
		{Stage: "people", FieldID: "person_date_of_birth", PersonID: "reg-1", Message: "Date of birth of Eleanor Mary Hargreaves is incomplete: give the full date"},
		{Stage: "people", FieldID: "person_home_address", PersonID: "reg-1", Message: "Home address of Eleanor Mary Hargreaves is missing"},
		{Stage: "people", FieldID: "person_email", PersonID: "u-1", Message: "Email address of Samuel Lee is missing"},
	}
	if diff := cmp.Diff(want, v.Missing()); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	for _, p := range app.Data.People {
		var fromMissing, fromDetails []string
		for _, m := range want {
			if m.PersonID == p.ID {
				fromMissing = append(fromMissing, m.FieldID)
			}
		}
		for _, d := range form.MissingDetails(&p) {
			fromDetails = append(fromDetails, d.Field.ID)
		}
		if diff := cmp.Diff(fromMissing, fromDetails); diff != "" {
			t.Errorf("%s: MissingDetails and Missing disagree (-Missing +MissingDetails):\n%s", p.FullName, diff)
		}
	}
}
