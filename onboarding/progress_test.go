package onboarding_test

import (
	"testing"

	"onboard/onboarding"
)

// TestRegistrySuppliedDocument: a certificate of incorporation the
// registry supplied is not asked for again; a filing not yet stored, or
// of another type, supplies nothing.
func TestRegistrySuppliedDocument(t *testing.T) {
	for _, tt := range []struct {
		name        string
		filings     []onboarding.RegistryDocument
		wantMissing bool
	}{
		{name: "no filings", wantMissing: true},
		{name: "the incorporation filing, stored", filings: []onboarding.RegistryDocument{{DocumentType: "certificate_of_incorporation", BlobID: "b1", FileName: "inc.pdf"}}},
		{name: "the incorporation filing, not yet stored", filings: []onboarding.RegistryDocument{{DocumentType: "certificate_of_incorporation"}}, wantMissing: true},
		{name: "another filing", filings: []onboarding.RegistryDocument{{DocumentType: "confirmation_statement", BlobID: "b2"}}, wantMissing: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newFormEnv(t)
			id := e.create()
			e.seed(id, func(a *onboarding.Application) {
				complete(a)
				delete(a.Data.Documents, "certificate_of_incorporation")
				a.RegistryDocuments = tt.filings
			})
			v := e.primary(id)
			missing := v.Missing()
			if got := len(missing) == 1 && missing[0].FieldID == "certificate_of_incorporation"; got != tt.wantMissing || (!tt.wantMissing && len(missing) != 0) {
				t.Errorf("Missing = %+v, want the certificate missing: %v", missing, tt.wantMissing)
			}
			if got := v.App.RegistrySupplied("certificate_of_incorporation") != nil; got == tt.wantMissing {
				t.Errorf("RegistrySupplied = %v", got)
			}
		})
	}
}
