package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/admin"
	"onboard/admin/admintest"
	"onboard/onboarding"
	"onboard/server/web"
	"onboard/storage/storetest"
)

// dropLast removes the last entry of application id's log behind the
// chain's back, and returns the break verify-log should report.
func dropLast(t *testing.T, e *env, id string) admin.LogBreak {
	t.Helper()
	brk := admin.LogBreak{Subject: onboarding.SubjectApplication, SubjectID: id}
	if err := storetest.TamperWithActivity(t, e.store, id, func(h *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
		n := len(log) - 1
		brk.EntryID = onboarding.ActivityEntryID(log[n].Seq)
		brk.Problem = "it is missing: the log ends at " + onboarding.ActivityEntryID(log[n-1].Seq) + ", but its head names this entry as the last"
		return h, log[:n]
	}); err != nil {
		t.Fatal(err)
	}
	return brk
}

// TestAdminVerifyLog drives verify-log on the admin socket: its errors
// with their statuses, and its streamed answer as the client relays it.
func TestAdminVerifyLog(t *testing.T) {
	e := newEnv(t, envOptions{})
	h := admin.NewHandler(admin.Options{Service: e.svc, Answer: web.ErrorAnswer})
	unknown := uuid.NewString()
	for _, tt := range []struct {
		name, query string
		status      int
		want        string
	}{
		{"unknown organization", "?org=nope", http.StatusBadRequest, "unknown organization 'nope'"},
		{"unknown application", "?app=" + unknown, http.StatusNotFound, "Application " + unknown + " not found"},
		{"malformed application id", "?app=nope", http.StatusNotFound, "Application nope not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/apps/verify-log"+tt.query, nil))
			wantError(t, w, tt.status, errBody(tt.want))
			c := admintest.Serve(t, h)
			q := admin.VerifyLog{}
			if strings.HasPrefix(tt.query, "?org=") {
				q.OrgID = strings.TrimPrefix(tt.query, "?org=")
			} else {
				q.AppID = strings.TrimPrefix(tt.query, "?app=")
			}
			if _, err := c.VerifyLog(context.Background(), q, nil); err == nil || err.Error() != tt.want {
				t.Errorf("client error = %v, want %q", err, tt.want)
			}
		})
	}

	older, newer := e.create(t, "acme", ""), e.create(t, "acme", "")
	e.create(t, "globex", "")
	c := admintest.Serve(t, h)
	var got []admin.LogBreak
	collect := func(b admin.LogBreak) error { got = append(got, b); return nil }
	r, err := c.VerifyLog(context.Background(), admin.VerifyLog{}, collect)
	if err != nil || len(got) != 0 || r != (admin.LogReport{Applications: 3, Entries: 6}) {
		t.Fatalf("whole logs: %+v, %v, breaks %+v", r, err, got)
	}

	// Newest first.
	want := []admin.LogBreak{dropLast(t, e, newer), dropLast(t, e, older)}
	r, err = c.VerifyLog(context.Background(), admin.VerifyLog{OrgID: "acme"}, collect)
	if diff := cmp.Diff(want, got); diff != "" || err != nil || r != (admin.LogReport{Applications: 2, Entries: 2, Broken: 2}) {
		t.Errorf("broken logs: %+v, %v; breaks (-want +got):\n%s", r, err, diff)
	}

	// The caller's error stops the walk and is returned.
	stop := errors.New("stop")
	if _, err := c.VerifyLog(context.Background(), admin.VerifyLog{}, func(admin.LogBreak) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("VerifyLog with a failing callback = %v, want stop", err)
	}

	// A failure after the answer started comes as its last line.
	cancelling := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		h.ServeHTTP(&cancelOnWrite{ResponseWriter: w, cancel: cancel}, r.WithContext(ctx))
	})
	got = nil
	if _, err := admintest.Serve(t, cancelling).VerifyLog(context.Background(), admin.VerifyLog{}, collect); err == nil || err.Error() != "Internal server error" || len(got) != 1 {
		t.Errorf("VerifyLog failing midway = %v after %d breaks; want Internal server error after 1", err, len(got))
	}
}

// cancelOnWrite cancels its request's context once the answer has begun.
type cancelOnWrite struct {
	http.ResponseWriter
	cancel func()
	once   sync.Once
}

func (w *cancelOnWrite) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.once.Do(w.cancel)
	return n, err
}
