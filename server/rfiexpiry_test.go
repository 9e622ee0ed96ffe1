package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// sweepUntil wakes the RFI expiry sweep after each of its passes until the
// request id has status want, and returns it.
func (e *env) sweepUntil(t *testing.T, id string, want onboarding.RFIStatus) *onboarding.RFIRequest {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		ended := e.sweeps.ended()
		e.svc.WakeRFIExpiry()
		select {
		case <-ended:
		case <-deadline:
			t.Fatalf("rfi request %s never became %s", id, want)
		}
		r, err := e.store.RFIRequest(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == want {
			return r
		}
	}
}

// sweepPass wakes the sweep and waits for the end of its pass.
func (e *env) sweepPass() {
	ended := e.sweeps.ended()
	e.svc.WakeRFIExpiry()
	<-ended
}

// TestRFIExpirySweep: the sweep leaves a request alone until its
// expires_at, then expires it once, with its event.
func TestRFIExpirySweep(t *testing.T) {
	e := newEnv(t, envOptions{rfiExpiry: true})
	quick := e.createRFI(t, "acme", `{"company_name":"Emerald","country":"IE","agent_id":"`+acmeAgentQuick+`","primary_contact":{"name":"C","email":"c@emerald.example"}}`)
	long := e.createRFI(t, "acme", `{"company_name":"Emerald","country":"IE","primary_contact":{"name":"C","email":"c@emerald.example"}}`)
	id := quick["request_id"].(string)

	// One whole pass just before the expiry leaves it active.
	e.clock.Advance(3*24*time.Hour - time.Second)
	e.sweepPass()
	e.sweepPass() // the first may have begun before the clock moved
	if r, _ := e.store.RFIRequest(context.Background(), id); r.Status != onboarding.RFIActive {
		t.Fatalf("status before expires_at = %s", r.Status)
	}

	e.clock.Advance(time.Second)
	r := e.sweepUntil(t, id, onboarding.RFIExpired)
	if r.ExpiredAt == nil || !r.ExpiredAt.Equal(testNow.Add(3*24*time.Hour)) {
		t.Errorf("expired_at = %v", r.ExpiredAt)
	}
	if l, _ := e.store.RFIRequest(context.Background(), long["request_id"].(string)); l.Status != onboarding.RFIActive {
		t.Errorf("the 14-day request is %s", l.Status)
	}
	got := decode(t, e.do("GET", "/api/external/rfi-requests/"+id, "acme", ""))
	if got["status"] != "expired" {
		t.Errorf("get = %v", got)
	}

	// Events: created, then expired once, with the request as data.
	var types []string
	var data map[string]any
	for _, ev := range e.events(t, "acme", "?limit=100").Events {
		var d struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		if d.ID == id {
			types = append(types, ev.Type)
			if ev.Type == "rfi_request.expired" {
				_ = json.Unmarshal(ev.Data, &data)
			}
		}
	}
	if diff := cmp.Diff([]string{"rfi_request.expired", "rfi_request.created"}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if data["status"] != "expired" || data["company_name"] != "Emerald" {
		t.Errorf("expired event data = %v", data)
	}

	// Another pass changes nothing.
	e.sweepPass()
	if n := len(e.events(t, "acme", "?type=rfi_request.expired").Events); n != 1 {
		t.Errorf("%d expired events after another pass, want 1", n)
	}
}
