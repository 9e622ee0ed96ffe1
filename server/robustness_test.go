package server

import (
	"context"
	"fmt"
	"math"
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

// TestPatchWithHugeNumberOfIDsIsCheap guards against a PATCH whose cost
// grows with the square of its ids: ten times the ids must cost about ten
// times as much, not a hundred. It compares growth rather than a
// wall-clock bound, which the race detector and a busy machine would make
// flaky, and it takes the best of three runs.
func TestPatchWithHugeNumberOfIDsIsCheap(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	body := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"fields":{`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"f%d":1`, i)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	best := func(n int) time.Duration {
		payload := body(n)
		fastest := time.Duration(math.MaxInt64)
		for range 3 {
			r := httptest.NewRequest("PATCH", "/api/external/applications/"+id, strings.NewReader(payload))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+e.keys["acme"])
			start := time.Now()
			e.unchecked.ServeHTTP(httptest.NewRecorder(), r)
			fastest = min(fastest, time.Since(start))
		}
		return fastest
	}
	small, large := best(2_000), best(20_000)
	if large > 30*small {
		t.Errorf("a PATCH of 20k ids took %s, %.0f times one of 2k ids (%s): the cost grows faster than the ids", large, float64(large)/float64(small), small)
	}

	w := e.do("PATCH", "/api/external/applications/"+id, "acme", body(90_000))
	res := decode(t, w)
	msg := res["error"].(string)
	if w.Code != http.StatusBadRequest || !strings.HasSuffix(msg, "f49 and 89950 more") || len(msg) > 1000 {
		t.Errorf("status %d, error %.200q… (%d bytes)", w.Code, msg, len(msg))
	}
}
