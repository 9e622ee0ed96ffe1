package server

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestSummaryDocumentsAreOrderedAndFiltered(t *testing.T) {
	s := New(Options{Service: newEnv(t, envOptions{}).svc})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	app := &onboarding.Application{Data: onboarding.Data{
		Documents: map[string]onboarding.Document{
			"proof_of_address":             {FileID: "b", FileName: "poa.pdf", Status: "accepted", UploadedAt: at},
			"bank_statement":               {FileID: "a", FileName: "bank.pdf", Status: "rejected", UploadedAt: at},
			"certificate_of_incorporation": {FileID: "c", Status: "skipped", UserOverrideReason: "exempt", UploadedAt: at},
			"zz_other":                     {FileID: "d", FileName: "x.pdf", Status: "forced", UploadedAt: at},
		},
		People: []onboarding.Person{
			{ID: "p2", Documents: map[string]onboarding.Document{
				"z_doc": {FileID: "e", FileName: "z.pdf", Status: "accepted"},
				"a_doc": {FileID: "f", FileName: "a.pdf", Status: "accepted"},
			}},
			{ID: "p1"},
			{ID: "p0", Documents: map[string]onboarding.Document{
				"a_doc": {FileID: "g", FileName: "rejected.pdf", Status: "rejected"},
				"b_doc": {FileID: "h", Status: "skipped", UserOverrideReason: "not a UBO"},
			}},
		},
		Entities: []onboarding.Entity{
			{ID: "e1", Documents: map[string]onboarding.Document{
				"b_doc": {FileID: "i", FileName: "b.pdf", Status: "forced", UserOverrideReason: "checked"},
				"a_doc": {FileID: "j", FileName: "a.pdf", Status: "accepted"},
			}},
		},
	}}
	want := []summaryDocument{
		{ID: "c", FieldID: "certificate_of_incorporation", Status: "skipped", UserOverrideReason: "exempt"},
		{ID: "b", FieldID: "proof_of_address", FileName: "poa.pdf", Status: "accepted"},
		{ID: "d", FieldID: "zz_other", FileName: "x.pdf", Status: "forced"},
		{ID: "f", FieldID: "a_doc", PersonID: "p2", FileName: "a.pdf", Status: "accepted"},
		{ID: "e", FieldID: "z_doc", PersonID: "p2", FileName: "z.pdf", Status: "accepted"},
		{ID: "h", FieldID: "b_doc", PersonID: "p0", Status: "skipped", UserOverrideReason: "not a UBO"},
		{ID: "j", FieldID: "a_doc", EntityID: "e1", FileName: "a.pdf", Status: "accepted"},
		{ID: "i", FieldID: "b_doc", EntityID: "e1", FileName: "b.pdf", Status: "forced", UserOverrideReason: "checked"},
	}
	for i := 0; i < 10; i++ {
		if diff := cmp.Diff(want, s.renderSummary(app).Documents); diff != "" {
			t.Fatalf("documents (-want +got):\n%s", diff)
		}
	}
	view, err := s.svc.View(app, onboarding.ViewOptions{Links: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := view.Data.Documents["bank_statement"]; ok {
		t.Errorf("a rejected document is rendered")
	}
}
