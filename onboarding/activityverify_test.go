package onboarding_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
	"onboard/pdf"
	"onboard/storage/storetest"
)

// logEnv is a Service on a real store with two organizations, and makers
// of applications and RFI requests with activity logs.
type logEnv struct {
	svc   *onboarding.Service
	store storetest.Store
	now   time.Time
}

func newLogEnv(t testing.TB) *logEnv {
	t.Helper()
	store := storetest.Open(t)
	form := onboarding.StandardForm()
	svc, err := onboarding.New(onboarding.Options{
		Store: store, PageCounter: pdf.PageCount,
		Organizations: []*onboarding.Organization{
			{ID: "acme", Configs: []*onboarding.Configuration{{ID: "acme-std", Form: form, Countries: []string{"GB"}}}},
			{ID: "other", Configs: []*onboarding.Configuration{{ID: "other-std", Form: form, Countries: []string{"GB"}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &logEnv{svc: svc, store: store, now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
}

// entries returns n activities, a second apart.
func (e *logEnv) entries(n int) []onboarding.Activity {
	out := make([]onboarding.Activity, n)
	for i := range out {
		e.now = e.now.Add(time.Second)
		out[i] = onboarding.Activity{At: e.now, Action: fmt.Sprintf("test.%d", i), Actor: onboarding.Actor{Type: onboarding.ActorSystem}, Detail: "d"}
	}
	return out
}

// app stores an application of org whose log has n entries.
func (e *logEnv) app(t testing.TB, org string, n int) string {
	t.Helper()
	app := &onboarding.Application{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: org, ConfigID: org + "-std", Country: "GB",
		Status: onboarding.StatusSent, CreatedAt: e.now, UpdatedAt: e.now,
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: uuid.NewString(), Email: "a@example.com", Role: onboarding.RolePrimary}}}
	if err := e.store.CreateApplication(context.Background(), app, onboarding.Changes{Log: e.entries(n)}); err != nil {
		t.Fatal(err)
	}
	return app.ID
}

// rfi stores an RFI request of org whose log has n entries.
func (e *logEnv) rfi(t *testing.T, org string, n int) string {
	t.Helper()
	r := &onboarding.RFIRequest{ID: uuid.NewString(), Seq: ulid.Make(), OrgID: org, Status: onboarding.RFICompleted,
		CompanyName: "X", Country: "GB", CreatedAt: e.now, ExpiresAt: e.now.Add(time.Hour),
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: uuid.NewString(), Email: "a@example.com", Role: onboarding.RolePrimary}}}
	if err := e.store.CreateRFIRequest(context.Background(), r, onboarding.Changes{Log: e.entries(n)}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// verify runs VerifyActivityLogs and returns its report and breaks.
func (e *logEnv) verify(t *testing.T, q onboarding.LogQuery) (onboarding.LogReport, []onboarding.LogBreak) {
	t.Helper()
	var breaks []onboarding.LogBreak
	r, err := e.svc.VerifyActivityLogs(context.Background(), q, func(b onboarding.LogBreak) error {
		breaks = append(breaks, b)
		return nil
	})
	if err != nil {
		t.Fatalf("VerifyActivityLogs(%+v): %v", q, err)
	}
	return r, breaks
}

type (
	head    = onboarding.ActivityHead
	entries = []onboarding.LoggedActivity
)

// rehash recomputes the hashes of log from i on, as a careful forger
// would, returning the new last hash.
func rehash(log entries, i int) string {
	for ; i < len(log); i++ {
		if i > 0 {
			log[i].Prev = log[i-1].Hash
		}
		log[i].Hash = onboarding.ActivityHash(log[i].Prev, &log[i])
	}
	return log[len(log)-1].Hash
}

// just returns the ULID just above u: another key, which still sorts
// before the next entry's (ULIDs issued one after the other differ by far
// more than one). Setting the last character to Z instead left one ULID
// in 32 where it was, and the test failed that often.
func just(u ulid.ULID) ulid.ULID {
	for i := len(u) - 1; i >= 0; i-- {
		u[i]++
		if u[i] != 0 {
			break
		}
	}
	return u
}

// TestVerifyDetectsTampering changes a log of five entries in every way
// stored history can be changed: each is found, naming the first broken
// entry (or the missing one the head names) and what is wrong with it;
// the other logs stay whole.
func TestVerifyDetectsTampering(t *testing.T) {
	id := func(e onboarding.LoggedActivity) string { return onboarding.ActivityEntryID(e.Seq) }
	notFollowing := func(e onboarding.LoggedActivity) string {
		return "it does not follow " + id(e) + ": that entry was rewritten, or entries between them were removed"
	}
	const (
		edited   = "its content does not match its hash: the entry was edited"
		noStart  = "it does not start the log's chain: entries before it were removed, or it was moved from another log"
		headGone = "the log's head is missing, so entries after this one may have been removed too"
	)
	tests := []struct {
		name string
		// tamper changes the log and returns the entry id the break names
		// and the problem; no problem: the change cannot be detected.
		tamper func(h *head, log entries) (*head, entries, string, string)
	}{
		{"edited detail", func(h *head, log entries) (*head, entries, string, string) {
			log[2].Detail = "something else"
			return h, log, id(log[2]), edited
		}},
		{"edited time", func(h *head, log entries) (*head, entries, string, string) {
			log[0].At = log[0].At.Add(time.Hour)
			return h, log, id(log[0]), edited
		}},
		{"edited actor", func(h *head, log entries) (*head, entries, string, string) {
			log[4].Actor = onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k", Name: "someone"}
			return h, log, id(log[4]), edited
		}},
		{"edited fields", func(h *head, log entries) (*head, entries, string, string) {
			log[1].Fields = []string{"tax_id"}
			return h, log, id(log[1]), edited
		}},
		{"edited prev", func(h *head, log entries) (*head, entries, string, string) {
			log[3].Prev = log[1].Hash
			return h, log, id(log[3]), edited
		}},
		{"hash removed", func(h *head, log entries) (*head, entries, string, string) {
			log[1].Hash = ""
			return h, log, id(log[1]), "it has no hash"
		}},
		{"edited and rehashed", func(h *head, log entries) (*head, entries, string, string) {
			log[1].Detail = "forged"
			log[1].Hash = onboarding.ActivityHash(log[1].Prev, &log[1])
			return h, log, id(log[2]), notFollowing(log[1])
		}},
		{"moved to another key", func(h *head, log entries) (*head, entries, string, string) {
			log[2].Seq = just(log[2].Seq)
			return h, log, id(log[2]), edited
		}},
		{"middle entry removed", func(h *head, log entries) (*head, entries, string, string) {
			return h, append(log[:2:2], log[3:]...), id(log[3]), notFollowing(log[1])
		}},
		{"first entry removed", func(h *head, log entries) (*head, entries, string, string) {
			return h, log[1:], id(log[1]), noStart
		}},
		{"first entry removed, the rest rechained from another start", func(h *head, log entries) (*head, entries, string, string) {
			log = log[1:]
			log[0].Prev = onboarding.ActivityChainStart("3a7b3b4e-0000-4000-8000-000000000000")
			h.Hash = rehash(log, 0)
			return h, log, id(log[0]), noStart
		}},
		{"last entry removed", func(h *head, log entries) (*head, entries, string, string) {
			return h, log[:4], id(log[4]), "it is missing: the log ends at " + id(log[3]) + ", but its head names this entry as the last"
		}},
		{"last two entries removed", func(h *head, log entries) (*head, entries, string, string) {
			return h, log[:3], id(log[4]), "it is missing: the log ends at " + id(log[2]) + ", but its head names this entry as the last"
		}},
		{"every entry removed", func(h *head, log entries) (*head, entries, string, string) {
			return h, nil, id(log[4]), "it is missing: the log's head names it as the last entry, but the log has none"
		}},
		{"head removed", func(_ *head, log entries) (*head, entries, string, string) {
			return nil, log, id(log[4]), headGone
		}},
		{"last entry and head removed", func(_ *head, log entries) (*head, entries, string, string) {
			return nil, log[:4], id(log[3]), headGone
		}},
		{"everything removed", func(_ *head, log entries) (*head, entries, string, string) {
			return nil, nil, "", "the log is empty and has no head: every entry and the head were removed"
		}},
		{"last entry rewritten with its hash", func(h *head, log entries) (*head, entries, string, string) {
			log[4].Detail = "forged"
			rehash(log, 4)
			return h, log, id(log[4]), "its hash is not the one the log's head recorded: the entry was rewritten"
		}},
		{"entry appended without the head", func(h *head, log entries) (*head, entries, string, string) {
			extra := log[4]
			extra.Seq = ulid.MustParse("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
			extra.Prev = log[4].Hash
			extra.Hash = onboarding.ActivityHash(extra.Prev, &extra)
			return h, append(log, extra), id(extra), "it was added after the log's last entry " + id(log[4]) + ": its head does not name it"
		}},
		{"entry inserted and chained", func(h *head, log entries) (*head, entries, string, string) {
			extra := log[1]
			extra.Seq = just(log[1].Seq)
			extra.Detail = "inserted"
			extra.Prev = log[1].Hash
			extra.Hash = onboarding.ActivityHash(extra.Prev, &extra)
			return h, append(log[:2:2], append(entries{extra}, log[2:]...)...), id(log[2]), notFollowing(extra)
		}},
		// The limit of a hash chain: a forger who rewrites every hash
		// after an edit, and the head, is caught only by a hash kept
		// elsewhere (a partner's copy of the API's).
		{"every hash after an edit rewritten, head too", func(h *head, log entries) (*head, entries, string, string) {
			log[2].Detail = "forged"
			h.Hash = rehash(log, 2)
			return h, log, "", ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newLogEnv(t)
			whole := []string{e.app(t, "acme", 3), e.rfi(t, "acme", 2), e.app(t, "other", 1)}
			app := e.app(t, "acme", 5)
			var want []onboarding.LogBreak
			if err := storetest.TamperWithActivity(t, e.store, app, func(h *head, log entries) (*head, entries) {
				h, log, entry, problem := tt.tamper(h, log)
				if problem != "" {
					want = []onboarding.LogBreak{{Subject: onboarding.SubjectApplication, SubjectID: app, EntryID: entry, Problem: problem}}
				}
				return h, log
			}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []onboarding.LogQuery{{}, {OrgID: "acme"}, {AppID: app}, {OrgID: "acme", AppID: app}} {
				r, got := e.verify(t, q)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%+v: breaks (-want +got):\n%s", q, diff)
				}
				if r.Broken != len(want) {
					t.Errorf("%+v: report %+v, want %d broken", q, r, len(want))
				}
			}
			for _, other := range whole {
				if r, got := e.verify(t, onboarding.LogQuery{AppID: other}); len(got) != 0 || r.Broken != 0 {
					t.Errorf("whole log %s reported broken: %+v", other, got)
				}
			}
		})
	}
}

// TestVerifyReport checks what each query verifies and counts, and its
// errors.
func TestVerifyReport(t *testing.T) {
	e := newLogEnv(t)
	a1, a2, r1 := e.app(t, "acme", 3), e.app(t, "acme", 150), e.rfi(t, "acme", 2)
	o1 := e.app(t, "other", 4)
	for i := 0; i < 120; i++ { // more than a page of subjects
		e.app(t, "other", 1)
	}
	tests := []struct {
		q    onboarding.LogQuery
		want onboarding.LogReport
	}{
		{onboarding.LogQuery{}, onboarding.LogReport{Applications: 123, RFIRequests: 1, Entries: 3 + 150 + 2 + 4 + 120}},
		{onboarding.LogQuery{OrgID: "acme"}, onboarding.LogReport{Applications: 2, RFIRequests: 1, Entries: 155}},
		{onboarding.LogQuery{OrgID: "other"}, onboarding.LogReport{Applications: 121, Entries: 124}},
		{onboarding.LogQuery{AppID: a1}, onboarding.LogReport{Applications: 1, Entries: 3}},
		{onboarding.LogQuery{AppID: a2, OrgID: "acme"}, onboarding.LogReport{Applications: 1, Entries: 150}},
		{onboarding.LogQuery{AppID: r1}, onboarding.LogReport{RFIRequests: 1, Entries: 2}},
		{onboarding.LogQuery{AppID: o1, OrgID: "other"}, onboarding.LogReport{Applications: 1, Entries: 4}},
	}
	for _, tt := range tests {
		r, breaks := e.verify(t, tt.q)
		if diff := cmp.Diff(tt.want, r); diff != "" || len(breaks) != 0 {
			t.Errorf("%+v: report (-want +got):\n%s breaks %+v", tt.q, diff, breaks)
		}
	}

	unknown := uuid.NewString()
	errs := []struct {
		q    onboarding.LogQuery
		want string
	}{
		{onboarding.LogQuery{OrgID: "nope"}, "unknown organization 'nope'"},
		{onboarding.LogQuery{OrgID: "nope", AppID: a1}, "unknown organization 'nope'"},
		{onboarding.LogQuery{AppID: unknown}, "Application " + unknown + " not found"},
		{onboarding.LogQuery{AppID: "nope"}, "Application nope not found"},
		{onboarding.LogQuery{AppID: "  " + a1}, "Application   " + a1 + " not found"},
		{onboarding.LogQuery{AppID: a1, OrgID: "other"}, "Application " + a1 + " not found"},
		{onboarding.LogQuery{AppID: r1, OrgID: "other"}, "Application " + r1 + " not found"},
	}
	for _, tt := range errs {
		_, err := e.svc.VerifyActivityLogs(context.Background(), tt.q, func(onboarding.LogBreak) error { return nil })
		if err == nil || err.Error() != tt.want || onboarding.AsError(err) == nil {
			t.Errorf("%+v: error %v, want %q", tt.q, err, tt.want)
		}
	}

	// broken's error stops the walk and is returned.
	if err := storetest.TamperWithActivity(t, e.store, a1, func(h *head, log entries) (*head, entries) { return nil, log }); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := e.svc.VerifyActivityLogs(context.Background(), onboarding.LogQuery{}, func(onboarding.LogBreak) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("VerifyActivityLogs with a failing callback = %v after %d calls; want stop after 1", err, calls)
	}
}

// BenchmarkVerifyActivityLogs verifies every log of a store of 200
// applications with 25 entries each: the cost of `onboard apps
// verify-log` per run and per entry.
func BenchmarkVerifyActivityLogs(b *testing.B) {
	e := newLogEnv(b)
	const apps, entries = 200, 25
	for range apps {
		e.app(b, "acme", entries)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := e.svc.VerifyActivityLogs(context.Background(), onboarding.LogQuery{}, func(brk onboarding.LogBreak) error {
			return fmt.Errorf("broken: %+v", brk)
		})
		if err != nil || r.Entries != apps*entries {
			b.Fatalf("VerifyActivityLogs = %+v, %v", r, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*apps*entries), "ns/entry")
}
