package server

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestSummaryDocumentsAreOrderedAndFiltered(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	app := &onboarding.Application{Data: onboarding.Data{Documents: map[string]onboarding.Document{
		"proof_of_address":             {FileID: "b", FileName: "poa.pdf", Status: "accepted", UploadedAt: at},
		"bank_statement":               {FileID: "a", FileName: "bank.pdf", Status: "rejected", UploadedAt: at},
		"certificate_of_incorporation": {FileID: "c", Status: "skipped", UserOverrideReason: "exempt", UploadedAt: at},
		"zz_other":                     {FileID: "d", FileName: "x.pdf", Status: "forced", UploadedAt: at},
	}}}
	for i := 0; i < 10; i++ {
		got := renderSummary(app).Documents
		want := []summaryDocument{
			{ID: "c", FieldID: "certificate_of_incorporation", Status: "skipped", UserOverrideReason: "exempt"},
			{ID: "b", FieldID: "proof_of_address", FileName: "poa.pdf", Status: "accepted"},
			{ID: "d", FieldID: "zz_other", FileName: "x.pdf", Status: "forced"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("documents (-want +got):\n%s", diff)
		}
	}
	if _, ok := renderDocuments(app.Data.Documents)["bank_statement"]; ok {
		t.Errorf("a rejected document is rendered")
	}
}
