package onboarding_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// accepted is an accepted upload without a file behind it.
var accepted = onboarding.Document{FileID: "f", FileName: "doc.pdf", FileType: "application/pdf", Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed}

// complete fills in everything the standard form requires.
func complete(a *onboarding.Application) {
	a.Status = onboarding.StatusInProgress
	a.Data.Fields["registered_address"] = raw(frAddress)
	a.Data.Fields["industry"] = raw("software")
	a.Data.Fields["business_description"] = raw("We sell software")
	a.Data.Fields["confirm_accuracy"] = raw(true)
	a.Data.Fields["confirm_terms"] = raw(true)
	a.Data.Documents = map[string]onboarding.Document{"certificate_of_incorporation": accepted, "proof_of_address": accepted}
	a.Data.People = []onboarding.Person{{ID: "d-1", Source: onboarding.SourceUserAdded, FullName: "Ada Lovelace", Roles: []onboarding.PersonRole{onboarding.PersonDirector},
		Documents: map[string]onboarding.Document{"person_id_document": accepted}}}
}

func TestMissing(t *testing.T) {
	const (
		company, business, people, documents, confirmation = "company", "business", "people", "documents", "confirmation"
	)
	declarations := []onboarding.Missing{
		{Stage: confirmation, FieldID: "confirm_accuracy", Message: "Confirm: I confirm that the information I have given is accurate and complete"},
		{Stage: confirmation, FieldID: "confirm_terms", Message: "Confirm: I accept the terms and conditions"},
	}
	tests := []struct {
		name   string
		change func(a *onboarding.Application)
		want   []onboarding.Missing
	}{
		{
			name: "a new application lacks everything, in form order",
			want: append([]onboarding.Missing{
				{Stage: company, FieldID: "registered_address", Message: "Registered office address is missing"},
				{Stage: company, FieldID: "industry", Message: "Industry is missing"},
				{Stage: business, FieldID: "business_description", Message: "What the business does is missing"},
				{Stage: people, Message: "Add at least one director"},
				{Stage: documents, FieldID: "certificate_of_incorporation", Message: "Certificate of incorporation is missing"},
				{Stage: documents, FieldID: "proof_of_address", Message: "Proof of business address is missing"},
			}, declarations...),
		},
		{name: "a complete application lacks nothing", change: complete},
		{
			name: "documents per person, rejected uploads and unticked declarations",
			change: func(a *onboarding.Application) {
				complete(a)
				delete(a.Data.Fields, "confirm_terms")
				rejected := accepted
				rejected.Status = onboarding.DocumentRejected
				forced := accepted
				forced.Status = onboarding.DocumentForced
				a.Data.Documents["certificate_of_incorporation"] = forced
				a.Data.Documents["proof_of_address"] = onboarding.Document{Status: onboarding.DocumentSkipped}
				a.Data.Documents["bank_statement"] = rejected
				a.Data.People = append(a.Data.People,
					onboarding.Person{ID: "u-1", Roles: []onboarding.PersonRole{onboarding.PersonUBO}, Documents: map[string]onboarding.Document{"person_id_document": rejected}},
					onboarding.Person{ID: "d-2", FullName: "Grace Hopper", Roles: []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonShareholder}},
					onboarding.Person{ID: "s-1", FullName: "Only Shares", Roles: []onboarding.PersonRole{onboarding.PersonShareholder}},
				)
			},
			want: []onboarding.Missing{
				{Stage: documents, FieldID: "bank_statement", Message: "Business bank statement was not accepted: upload it again or remove it"},
				{Stage: documents, FieldID: "person_id_document", PersonID: "u-1", Message: "Identity document for an unnamed person was not accepted: upload it again"},
				{Stage: documents, FieldID: "person_id_document", PersonID: "d-2", Message: "Identity document for Grace Hopper is missing"},
				declarations[1],
			},
		},
		{
			name: "a shareholder is no director",
			change: func(a *onboarding.Application) {
				complete(a)
				a.Data.People[0].Roles = []onboarding.PersonRole{onboarding.PersonShareholder}
			},
			want: []onboarding.Missing{{Stage: people, Message: "Add at least one director"}},
		},
		{
			name: "with company selection the company comes first",
			change: func(a *onboarding.Application) {
				complete(a)
				a.ConfigID = configSelect
				delete(a.Data.Fields, "company_number")
			},
			want: []onboarding.Missing{{Stage: company, Message: "Choose your company from the register"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			if tt.change != nil {
				e.seed(id, tt.change)
			}
			if diff := cmp.Diff(tt.want, e.primary(id).Missing(), cmpEmpty); diff != "" {
				t.Errorf("Missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubmit(t *testing.T) {
	tests := []struct {
		name      string
		collab    bool
		before    func(a *onboarding.Application)
		meanwhile func(a *onboarding.Application)
		wantErr   error
		wantItems []string
	}{
		{name: "submits a complete application", before: complete},
		{
			name: "an incomplete application",
			before: func(a *onboarding.Application) {
				complete(a)
				delete(a.Data.Fields, "industry")
				delete(a.Data.Fields, "confirm_terms")
			},
			wantErr:   &onboarding.Error{Kind: onboarding.KindInvalid, Message: "The application cannot be submitted yet: 2 things are missing."},
			wantItems: []string{"Industry is missing", "Confirm: I accept the terms and conditions"},
		},
		{
			name:      "an application that became incomplete meanwhile",
			before:    complete,
			meanwhile: func(a *onboarding.Application) { delete(a.Data.Fields, "industry") },
			wantErr:   &onboarding.Error{Kind: onboarding.KindInvalid, Message: "The application cannot be submitted yet: 1 thing is missing."},
			wantItems: []string{"Industry is missing"},
		},
		{
			name:      "an application submitted meanwhile",
			before:    complete,
			meanwhile: func(a *onboarding.Application) { a.Status = onboarding.StatusSubmitted },
			wantErr:   onboarding.ErrApplicationFrozen,
		},
		{
			name:      "a participant removed meanwhile",
			collab:    false,
			before:    complete,
			meanwhile: func(a *onboarding.Application) { a.Participants[0].ID = "someone-else" },
			wantErr:   onboarding.ErrNotSignedIn,
		},
		{name: "only the primary contact submits", collab: true, before: complete, wantErr: onboarding.ErrPrimaryOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.addCollaborator(id, "colleague@example.com")
			e.seed(id, tt.before)
			v := e.primary(id)
			if tt.collab {
				v = e.visitor(id, "colleague@example.com")
			}
			if tt.meanwhile != nil {
				e.seed(id, tt.meanwhile)
			}
			wantStatus := e.app(id).Status
			before := len(e.activity(id))
			err := e.svc.Submit(context.Background(), v)
			checkErr(t, err, tt.wantErr)
			if err != nil {
				if diff := cmp.Diff(tt.wantItems, onboarding.AsError(err).Items, cmpEmpty); diff != "" {
					t.Errorf("missing items (-want +got):\n%s", diff)
				}
				e.checkActivity(id, before, nil)
				if got := e.app(id).Status; got != wantStatus {
					t.Errorf("status = %s after a refused submission, want %s", got, wantStatus)
				}
				return
			}
			app := e.app(id)
			if app.Status != onboarding.StatusSubmitted || app.SubmittedAt == nil || !app.SubmittedAt.Equal(formNow) || !app.UpdatedAt.Equal(formNow) {
				t.Errorf("after submission: status %s, submitted at %v, updated at %v", app.Status, app.SubmittedAt, app.UpdatedAt)
			}
			if v.App.Status != onboarding.StatusSubmitted || v.Writable() {
				t.Errorf("the visitor was not refreshed: status %s", v.App.Status)
			}
			e.checkActivity(id, before, []onboarding.Activity{did(v, onboarding.ActionSubmitted, "")})
		})
	}
}
