package form

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSignedSessions(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k, err := NewSignedSessions(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSignedSessions(bytes.Repeat([]byte{8}, 32))
	signedIn := Session{AppID: "a1", ParticipantID: "p1", Epoch: 3, Issued: now, Expires: now.Add(DefaultSessionTimeout), Nonce: "n0nce"}
	anon := Session{AppID: "a1", Issued: now, Expires: now.Add(DefaultSessionTimeout), Nonce: "n1"}
	token := k.Issue(signedIn)
	tests := []struct {
		name  string
		token string
		at    time.Time
		want  Session
		ok    bool
	}{
		{"signed in", token, now, signedIn, true},
		{"anonymous", k.Issue(anon), now, anon, true},
		{"just before expiry", token, now.Add(DefaultSessionTimeout - time.Second), signedIn, true},
		{"expired", token, now.Add(DefaultSessionTimeout), Session{}, false},
		{"another key", other.Issue(signedIn), now, Session{}, false},
		{"tampered epoch", strings.Replace(token, ".3.", ".4.", 1), now, Session{}, false},
		{"tampered signature", token[:len(token)-1] + "A", now, Session{}, false},
		{"empty", "", now, Session{}, false},
		{"no signature", "s1.a1.p1.3", now, Session{}, false},
		{"too long", strings.Repeat("x", 513), now, Session{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := k.Read(tt.token, tt.at)
			if ok != tt.ok {
				t.Fatalf("Read ok = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
	if a, b := k.CSRFToken("n0nce"), k.CSRFToken("n1"); a == b || a == "" || !validCSRF(a, k.CSRFToken("n0nce")) || validCSRF(a, b) || validCSRF("", "") {
		t.Errorf("CSRF tokens: %q for one nonce, %q for another", a, b)
	}
	if _, err := NewSignedSessions(make([]byte, 31)); err == nil {
		t.Error("a 31-byte session key was accepted")
	}
}
