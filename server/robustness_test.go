package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"onboard/onboarding"
)

// cancellingMailer cancels the request's context while "sending", as a
// client that hangs up mid-create does, and then accepts the message.
type cancellingMailer struct{ cancel context.CancelFunc }

func (m *cancellingMailer) Send(context.Context, onboarding.Message) error {
	m.cancel()
	return nil
}

func TestCreateSurvivesTheClientHangingUp(t *testing.T) {
	m := &cancellingMailer{}
	e := newEnv(t, envOptions{mailer: m})
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	r := httptest.NewRequest("POST", "/api/external/applications", strings.NewReader(`{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`)).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("status = %d %s, want 201: the application was committed", w.Code, w.Body)
	}
	id := decode(t, w)["application_id"].(string)
	if got := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["status"]; got != "sent" {
		t.Errorf("status = %v, want sent: the invite went out", got)
	}
}

// panickingMailer panics on its first send only.
type panickingMailer struct{ once sync.Once }

func (m *panickingMailer) Send(context.Context, onboarding.Message) error {
	m.once.Do(func() { panic("mailer bug") })
	return nil
}

func TestPanicReleasesTheIdempotencyKey(t *testing.T) {
	e := newEnv(t, envOptions{mailer: &panickingMailer{}})
	body := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`
	wantError(t, e.doWithKey("POST", "/api/external/applications", "acme", "k", body), http.StatusInternalServerError, errBody("Internal server error"))
	if w := e.doWithKey("POST", "/api/external/applications", "acme", "k", body); w.Code != http.StatusCreated {
		t.Errorf("retry after a panic = %d %s, want 201", w.Code, w.Body)
	}
}

func TestManyConcurrentPatchesAllSucceed(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	const n = 64
	var wg sync.WaitGroup
	codes := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := e.do("PATCH", "/api/external/applications/"+id, "acme", fmt.Sprintf(`{"fields":{"business_description":"update %d"}}`, i))
			codes <- w.Code
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("concurrent PATCH = %d, want 200", c)
		}
	}
}

func TestPatchWithHugeNumberOfIDsIsCheap(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	var b strings.Builder
	b.WriteString(`{"fields":{`)
	for i := 0; i < 90_000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":1`, i)
	}
	b.WriteString(`}}`)
	start := time.Now()
	w := e.do("PATCH", "/api/external/applications/"+id, "acme", b.String())
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a PATCH of 90k ids took %s", elapsed)
	}
	res := decode(t, w)
	msg := res["error"].(string)
	if w.Code != http.StatusBadRequest || !strings.HasSuffix(msg, "f49 and 89950 more") || len(msg) > 1000 {
		t.Errorf("status %d, error %.200q… (%d bytes)", w.Code, msg, len(msg))
	}
}
