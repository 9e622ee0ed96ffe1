package dump

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// TestCheck checks a line of each kind with the members it needs, and
// without each of them in turn.
func TestCheck(t *testing.T) {
	seq, now, rec := ulid.Make(), time.Now(), []byte{1, '{', '}'}
	tests := []struct {
		line Line
		want string // "" for a good line
	}{
		{Line{Kind: Application, Record: rec}, ""},
		{Line{Kind: Application}, "application without record"},
		{Line{Kind: RFIRequest, Record: rec, Owner: "w", LeaseUntil: now}, ""},
		{Line{Kind: RFIRequest, Record: rec, Owner: "w"}, "rfi_request without lease_until"},
		{Line{Kind: Activity, Record: rec, Subject: "s", Seq: seq}, ""},
		{Line{Kind: Activity, Record: rec, Seq: seq}, "activity without subject"},
		{Line{Kind: Activity, Record: rec, Subject: "s"}, "activity without seq"},
		{Line{Kind: ActivityHead, Subject: "s", Seq: seq, Hash: "ab"}, ""},
		{Line{Kind: ActivityHead, Subject: "s", Seq: seq}, "activity_head without hash"},
		{Line{Kind: APIKey, Record: rec}, ""},
		{Line{Kind: Idempotency, Record: rec, ClientID: "c", Key: "k", ExpiresAt: now}, ""},
		{Line{Kind: Idempotency, Record: rec, ClientID: "c", ExpiresAt: now}, "idempotency without key"},
		{Line{Kind: Idempotency, Record: rec, ClientID: "c", Key: "k"}, "idempotency without expires_at"},
		{Line{Kind: Endpoint, Record: rec}, ""},
		{Line{Kind: Event, Record: rec}, ""},
		{Line{Kind: Delivery, EventID: "e", EndpointID: "w", Subject: "s", NextAt: now}, ""},
		{Line{Kind: Delivery, EventID: "e", Subject: "s"}, "delivery without endpoint_id"},
		{Line{Kind: Delivery, EventID: "e", EndpointID: "w", Subject: "s", Owner: "w1"}, "delivery without lease_until"},
		{Line{Kind: DeliveryAttempt, Record: rec, Seq: seq}, ""},
		{Line{Kind: DeliveryAttempt, Record: rec}, "delivery_attempt without seq"},
		{Line{Kind: "invoice", Record: rec}, `unknown kind "invoice"`},
		{Line{}, `unknown kind ""`},
	}
	for _, tt := range tests {
		err := tt.line.Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%+v): %v, want nil", tt.line, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("Check(%+v): %v, want %q", tt.line, err, tt.want)
		}
	}
	for _, k := range Kinds() {
		if !Known(k) {
			t.Errorf("Known(%q) = false", k)
		}
	}
}
