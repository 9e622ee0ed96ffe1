package server

import (
	"net/http"
	"net/url"
	"testing"

	"onboard/onboarding"
)

// TestCustomDomainHostForms checks that a custom domain is the same host
// however the Host header writes it (case, port, the trailing dot of a
// fully qualified name): Globex's domain never serves Acme's link, and
// serves Globex's own.
func TestCustomDomainHostForms(t *testing.T) {
	e := newEnv(t, envOptions{})
	globex, _ := url.Parse(e.primaryLink(t, e.create(t, "globex", `{"primary_contact":{"email":"g@globex.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)))
	acme, _ := url.Parse(e.primaryLink(t, e.create(t, "acme", "")))
	if globex.Host != "onboarding.globex.example" {
		t.Fatalf("globex link host = %s", globex.Host)
	}
	for _, host := range []string{"onboarding.globex.example", "onboarding.globex.example.", "ONBOARDING.Globex.Example.", "onboarding.globex.example.:443", "onboarding.globex.example:8443"} {
		t.Run(host, func(t *testing.T) {
			other := e.applicantAt(t, "https://"+host+acme.Path)
			wantPage(t, other.get(""), http.StatusNotFound, onboarding.ErrFormNotFound.Message)
			own := e.applicantAt(t, "https://"+host+globex.Path)
			wantPage(t, own.get(""), http.StatusOK, "Globex", "Confirm it is you")
		})
	}
	// Acme has no custom domain: its link works on the public URL,
	// written either way.
	for _, host := range []string{"onboard.test", "onboard.test."} {
		wantPage(t, e.applicantAt(t, "https://"+host+acme.Path).get(""), http.StatusOK, "Acme Payments", "Confirm it is you")
	}
}
