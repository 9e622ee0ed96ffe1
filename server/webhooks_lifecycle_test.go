package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestWebhookDecisionEvents: each decision arrives signed, in order after
// the application's earlier events, with the decision in its data.
func TestWebhookDecisionEvents(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	secret := onboarding.FormatSecret(ep.Secrets[0].Key)
	id := e.create(t, "acme", "")
	other := e.create(t, "acme", "")
	for _, want := range []string{"application.created", "application.sent"} {
		wantVerified(t, rcv.NextAbout(t, id, wait), want, secret)
		wantVerified(t, rcv.NextAbout(t, other, wait), want, secret)
	}
	e.setStatus(t, id, onboarding.StatusSubmitted)
	e.setStatus(t, other, onboarding.StatusSubmitted)
	e.decide(t, id, `{"type":"application.referred"}`)
	e.decide(t, id, `{"type":"application.referred"}`) // the idempotent repeat emits nothing
	e.decide(t, id, `{"type":"application.approved","data":{"score":7}}`)
	e.decide(t, other, `{"type":"application.rejected"}`)

	referred := rcv.NextAbout(t, id, wait)
	wantVerified(t, referred, "application.referred", secret)
	if d := dataOf(t, referred); d["status"] != "review" || len(d["decisions"].([]any)) != 1 {
		t.Errorf("referred data: status %v decisions %v", d["status"], d["decisions"])
	}
	approved := rcv.NextAbout(t, id, wait)
	wantVerified(t, approved, "application.approved", secret)
	if d := dataOf(t, approved); d["status"] != "approved" || d["completed_at"] == nil || len(d["decisions"].([]any)) != 2 {
		t.Errorf("approved data: status %v completed_at %v decisions %v", d["status"], d["completed_at"], d["decisions"])
	}
	rejected := rcv.NextAbout(t, other, wait)
	wantVerified(t, rejected, "application.rejected", secret)
	if d := dataOf(t, rejected); d["status"] != "rejected" || d["completed_at"] == nil {
		t.Errorf("rejected data: %v", d)
	}
}

// TestWebhookRFIEvents follows an RFI request from creation to completion,
// and another to its expiry: every rfi_request event arrives signed, in
// order, with the request as get shows it, less download links.
func TestWebhookRFIEvents(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	secret := onboarding.FormatSecret(ep.Secrets[0].Key)
	ctx := context.Background()
	created := e.createRFI(t, "acme", strings.Replace(rfiBody, `}}`, `},"pre_authenticated":true}`, 1))
	id := created["request_id"].(string)
	first := rcv.NextAbout(t, id, wait)
	wantVerified(t, first, "rfi_request.created", secret)
	if d := dataOf(t, first); d["id"] != id || d["status"] != "active" || d["registered_name"] != "NORTHWIND TRADING LIMITED" {
		t.Errorf("created data: %v", d)
	}

	v := e.rfiVisitor(t, created)
	opened := rcv.NextAbout(t, id, wait)
	wantVerified(t, opened, "rfi_request.opened", secret)
	if d := dataOf(t, opened); d["opened_at"] == nil {
		t.Errorf("opened data: %v", d)
	}
	for _, f := range []string{"bank_statement", "proof_of_address"} {
		if _, err := e.svc.UploadRFIDocument(ctx, v, onboarding.Upload{FieldID: f, FileName: f + ".pdf", Type: "application/pdf", Body: bytes.NewReader(testPDF(t))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.CompleteRFI(ctx, v); err != nil {
		t.Fatal(err)
	}
	completed := rcv.NextAbout(t, id, wait)
	wantVerified(t, completed, "rfi_request.completed", secret)
	var data map[string]any
	if err := json.Unmarshal(completed.Event.Data, &data); err != nil {
		t.Fatal(err)
	}
	get := decode(t, e.do("GET", "/api/external/rfi-requests/"+id, "acme", ""))
	for _, d := range get["documents"].([]any) {
		delete(d.(map[string]any), "download_url")
	}
	if diff := cmp.Diff(get, data); diff != "" {
		t.Errorf("completed data differs from get without download_url (-get +event):\n%s", diff)
	}

	// An expiry, through the sandbox test helper (the sweep's code).
	later := e.createRFI(t, "acme", "")
	lid := later["request_id"].(string)
	wantVerified(t, rcv.NextAbout(t, lid, wait), "rfi_request.created", secret)
	if w := e.do("POST", "/api/external/test-helpers/rfi-requests/"+lid+"/expire", "acme", ""); w.Code != 200 {
		t.Fatalf("expire = %d %s", w.Code, w.Body)
	}
	expired := rcv.NextAbout(t, lid, wait)
	wantVerified(t, expired, "rfi_request.expired", secret)
	if d := dataOf(t, expired); d["status"] != "expired" {
		t.Errorf("expired data: %v", d)
	}
}
