package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"onboard/onboarding"
)

func (e *env) doWithKey(method, path, key, idemKey, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+e.keys[key])
	if idemKey != "" {
		r.Header.Set("Idempotency-Key", idemKey)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

func TestIdempotentCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`
	first := e.doWithKey("POST", "/api/external/applications", "acme", "order-42", body)
	if first.Code != http.StatusCreated {
		t.Fatalf("first = %d %s", first.Code, first.Body)
	}
	again := e.doWithKey("POST", "/api/external/applications", "acme", "order-42", body)
	if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() {
		t.Errorf("replay = %d %s, want the first response %s", again.Code, again.Body, first.Body)
	}
	if again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay without Idempotent-Replayed: true")
	}
	if first.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("first response marked as replayed")
	}
	// The saved body is sealed: the pre-auth code and the email address are
	// not on disk in clear, and only the same API key opens it.
	k, err := e.svc.Authenticate(context.Background(), e.keys["acme"])
	if err != nil {
		t.Fatal(err)
	}
	saved, _, err := (&replays{store: e.store}).load(context.Background(), k.ClientID, "order-42")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(saved.Body, []byte("a@example.com")) || bytes.Contains(saved.Body, []byte(decode(t, first)["application_id"].(string))) {
		t.Errorf("the saved response is stored in clear: %q", saved.Body)
	}
	list := decode(t, e.do("GET", "/api/external/applications", "acme", ""))
	if n := len(list["applications"].([]any)); n != 1 {
		t.Errorf("applications after a replayed create = %d, want 1", n)
	}
	if n := len(e.mail.messages()); n != 1 {
		t.Errorf("invites after a replayed create = %d, want 1", n)
	}
	// The quoted (structured field) form names the same key.
	if w := e.doWithKey("POST", "/api/external/applications", "acme", `"order-42"`, body); w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("quoted key not recognised as the same key")
	}
	wantError(t, e.doWithKey("POST", "/api/external/applications", "acme", "order-42", strings.Replace(body, "a@example", "b@example", 1)),
		http.StatusUnprocessableEntity, errBody("This Idempotency-Key was already used with a different request"))
	// Keys are scoped to the API key that sent them.
	if w := e.doWithKey("POST", "/api/external/applications", "acme-create", "order-42", body); w.Code != http.StatusCreated || w.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("another API key's request with the same key = %d replayed=%q, want a new 201", w.Code, w.Header().Get("Idempotent-Replayed"))
	}
	// After 24 hours the key may be reused.
	e.clock.Advance(24 * time.Hour)
	if w := e.doWithKey("POST", "/api/external/applications", "acme", "order-42", body); w.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("replayed after 24 hours")
	}
}

func TestIdempotencyOnlyRemembersSuccess(t *testing.T) {
	e := newEnv(t, envOptions{})
	bad := `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Wrong Name"}`
	if w := e.doWithKey("POST", "/api/external/applications", "acme", "k1", bad); w.Code != http.StatusBadRequest {
		t.Fatalf("bad create = %d", w.Code)
	}
	good := strings.Replace(bad, "Wrong Name", "Northwind Trading Ltd", 1)
	if w := e.doWithKey("POST", "/api/external/applications", "acme", "k1", good); w.Code != http.StatusCreated {
		t.Errorf("corrected retry with the same key = %d %s, want 201", w.Code, w.Body)
	}
}

func TestIdempotencyKeyErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`
	for _, key := range []string{strings.Repeat("k", 256), "has space", "tab\there", "é"} {
		wantError(t, e.doWithKey("POST", "/api/external/applications", "acme", key, body), http.StatusBadRequest,
			errBody("Idempotency-Key must be 1 to 255 printable ASCII characters"))
	}
	// A header present but empty, or given twice, is not a missing one.
	for name, values := range map[string][]string{"empty": {""}, "blank": {"  "}, "twice": {"k1", "k2"}, "twice the same": {"k1", "k1"}} {
		r := httptest.NewRequest("POST", "/api/external/applications", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
		r.Header["Idempotency-Key"] = values
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		t.Run(name, func(t *testing.T) {
			wantError(t, w, http.StatusBadRequest, errBody("Idempotency-Key must be 1 to 255 printable ASCII characters"))
		})
	}
}

// blockingMailer holds every invite until release is closed, so that a
// create stays in flight; entered receives once per send.
type blockingMailer struct {
	entered chan struct{}
	release chan struct{}
}

func (m *blockingMailer) Send(context.Context, onboarding.Message) error {
	m.entered <- struct{}{}
	<-m.release
	return nil
}

func TestIdempotencyInFlight(t *testing.T) {
	m := &blockingMailer{entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := newEnv(t, envOptions{mailer: m})
	body := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- e.doWithKey("POST", "/api/external/applications", "acme", "slow", body) }()
	select {
	case <-m.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first create never reached its invite")
	}
	wantError(t, e.doWithKey("POST", "/api/external/applications", "acme", "slow", body), http.StatusConflict,
		errBody("A request with this Idempotency-Key is still being processed; retry after it completes"))
	close(m.release)
	if first := <-done; first.Code != http.StatusCreated {
		t.Errorf("first = %d", first.Code)
	}
	if w := e.doWithKey("POST", "/api/external/applications", "acme", "slow", body); w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("after the first finished, the retry was not a replay: %d", w.Code)
	}
}
