package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/notify/webhooktest"
	"onboard/storage/postgres/pgtest"
)

// crashConfig: webhook retries a few hundred milliseconds apart (so that
// delivery finishes within the test), and no API rate limit (the load is
// about crashes, not about the rate limit).
const crashConfig = `
[limits]
rate_per_second = 0

[webhooks]
retry_schedule = ["0s", "200ms", "200ms", "200ms", "200ms", "200ms", "200ms", "200ms", "200ms", "200ms"]
timeout = "2s"
`

// crashApp is what the server acknowledged about one application, and the
// write in flight when the server was killed (which may or may not have
// committed).
type crashApp struct {
	id       string
	website  string // the last acknowledged PATCH of website
	inflight string // a PATCH sent and not answered
	status   string // the last acknowledged status: sent, submitted or approved
	pending  string // the status a request in flight would give
	// between is a status a request in flight may leave on its way (the
	// sandbox submission opens the application, then submits it).
	between string
}

// crashLedger is every acknowledged write of a run.
type crashLedger struct {
	mu    sync.Mutex
	apps  []*crashApp
	acked int // acknowledged writes
}

func (l *crashLedger) add(a *crashApp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.apps = append(l.apps, a)
	l.acked++
}

// ack records an acknowledged write: f updates a.
func (l *crashLedger) ack(a *crashApp, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
	l.acked++
}

// send records a write about to be sent: f notes it in flight on a.
func (l *crashLedger) send(a *crashApp, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// TestCrashSafety drives concurrent creates, PATCHes, submissions (which
// upload documents through the form's code) and decisions against the
// built binary, kills it with SIGKILL at a random moment, restarts it and
// checks that every acknowledged write is there; at the end, that every
// committed event was delivered to the webhook endpoint, and that after
// the orphan sweep every stored file is one a record refers to, and every
// file a record refers to is there. Beside them, creates with an
// Idempotency-Key: after each kill, every one whose answer did not arrive
// is retried with its key, and at the end each key must have produced
// exactly one application, announced by one application.created event.
// ONBOARD_CRASH_CYCLES sets the number of kills (3 by default; 50 or more
// for a long run).
//
// It runs on the embedded backend (Badger and the blob directory, which
// the kill interrupts mid-write) and on PostgreSQL and S3, which outlive
// the process: there the kill leaves connections, transactions and the
// webhook claims of the dead instance for the server and the restarted
// instance to settle, and the sweep walks the bucket.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	t.Run("badger", func(t *testing.T) {
		t.Parallel()
		runCrash(t, "", nil)
	})
	t.Run("postgres+s3", func(t *testing.T) {
		t.Parallel()
		blobs, env := s3Config(t)
		runCrash(t, fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n\n", pgtest.URL(t))+blobs, env)
	})
}

// runCrash is TestCrashSafety on the backend that storage (the tables of
// the configuration naming it; "" for the embedded one) and env (serve's
// and the commands' extra environment) choose. Every start uses the same
// data directory.
func runCrash(t *testing.T, storage string, env []string) {
	cycles := 3
	if n, err := strconv.Atoi(os.Getenv("ONBOARD_CRASH_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(crashConfig+"\n"+storage), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func() *serveProc {
		t.Helper()
		return startServeEnv(t, "127.0.0.1:0", "http://127.0.0.1:1", env, "--config", config, "--data-dir", data)
	}
	cli := func(args ...string) string {
		t.Helper()
		r := runBinaryEnv(t, env, append(args, "--config", config, "--data-dir", data)...)
		if r.code != 0 {
			t.Fatalf("onboard %s: exit code %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	rcv := webhooktest.New(t)
	p := serve()
	key := p.waitForKey(t)
	rcv.SetSecrets(strings.TrimSpace(cli("webhooks", "add", "--org", "default", "--url", rcv.URL)))
	hooks := collectDeliveries(t, rcv)

	ledger := &crashLedger{}
	keys := newCrashKeys()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for cycle := range cycles {
		if cycle > 0 {
			p = serve()
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() { crashWorker(p.base, key, fmt.Sprintf("c%dw%d", cycle, w), ledger, stop) })
		}
		for w := range 4 {
			wg.Go(func() { crashIdemWorker(p.base, key, fmt.Sprintf("c%di%d", cycle, w), keys, stop) })
		}
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond) // a random moment to crash at
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.wait(t)
		close(stop)
		wg.Wait()

		// Every acknowledged write is there after a restart.
		p = serve()
		lost := checkLedger(t, p, key, ledger)
		if lost > 0 {
			t.Fatalf("cycle %d: %d acknowledged writes lost", cycle+1, lost)
		}
		// Every create whose answer did not arrive is retried with its
		// Idempotency-Key.
		keys.retryUnanswered(t, p, key)
		p.stop(t)
	}

	// Every committed event is delivered, each at least once: on a shared
	// backend, those the killed instance had claimed once its claims lapse.
	// The deliveries are taken as they arrive, throughout the run; this
	// waits as long as they keep coming.
	p = serve()
	events := map[string]bool{}
	for _, id := range eventIDs(t, p, key) {
		events[id] = true
	}
	began := time.Now()
	if missing := hooks.wait(events); len(missing) > 0 {
		var report strings.Builder
		for _, id := range missing[:min(len(missing), 20)] {
			fmt.Fprintf(&report, "event %s:\n%s", id, cli("webhooks", "deliveries", "--event", id))
		}
		var logged []string
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(strings.ToLower(line), "webhook") {
				logged = append(logged, line)
			}
		}
		t.Fatalf("%d of %d committed events not delivered, and no delivery for %v; endpoints:\n%s%sserve's log of webhooks:\n%s",
			len(missing), len(events), deliveryStall, cli("webhooks", "list"), report.String(), strings.Join(logged[max(0, len(logged)-20):], "\n"))
	}
	deliveredIn := time.Since(began).Round(100 * time.Millisecond)
	if n := hooks.unverified(); n > 0 {
		t.Errorf("%d deliveries do not verify with the endpoint's secret", n)
	}

	// Each Idempotency-Key produced one application and one
	// application.created event, whether its create was answered before
	// the kill or retried after it.
	dup := keys.check(t, p, key)
	if dup > 0 {
		t.Errorf("%d of %d Idempotency-Keys (%d retried after a kill) did not produce exactly one application", dup, len(keys.answers), keys.retried)
	}

	// Every file a record refers to downloads (once the registry
	// documents of the applications a kill interrupted are fetched); after
	// the sweep, the store holds those files and no other, and they still
	// download.
	files := referencedFiles(t, p, key)
	p.stop(t)
	sweep := cli("blobs", "sweep", "--grace", "0s")
	again := cli("blobs", "sweep", "--grace", "0s")
	if want := fmt.Sprintf("%d files, 0 removed (no record refers to them), 0 newer than 0s left alone\n", len(files)); again != want {
		t.Errorf("a second sweep said %q, want %q: the store holds exactly the files the records refer to", again, want)
	}
	p = serve()
	if diff := cmp.Diff(files, referencedFiles(t, p, key)); diff != "" {
		t.Errorf("files referred to after the sweep (-before +after):\n%s", diff)
	}
	p.stop(t)
	t.Logf("%d SIGKILLs; %d applications, %d acknowledged writes, 0 lost; %d events committed, all delivered (the last %v after the restart); %d referenced files downloaded; sweep: %s",
		cycles, len(ledger.apps), ledger.acked, len(events), deliveredIn, len(files), strings.TrimSpace(sweep))
	t.Logf("idempotent creates: %d keys, %d retried after a kill (%d replayed), %d not exactly one application", len(keys.answers), keys.retried, keys.replayed, dup)
}

// deliveryStall is how long the crash test waits for the next delivery
// while committed events are missing: far longer than a killed
// instance's claims take to lapse (the webhook timeout plus ten seconds)
// and the retry schedule takes to come round.
const deliveryStall = time.Minute

// crashDeliveries takes every delivery from a receiver as it arrives, for
// the whole crash run: a receiver left unread would hold its requests once
// its buffer is full, failing the attempts of a long run.
type crashDeliveries struct {
	mu         sync.Mutex
	delivered  map[string]bool // event ids
	notSigned  int             // deliveries that do not verify
	arrived    chan struct{}   // a value after each delivery
	stop, done chan struct{}
}

// collectDeliveries starts taking rcv's deliveries until t ends.
func collectDeliveries(t *testing.T, rcv *webhooktest.Receiver) *crashDeliveries {
	c := &crashDeliveries{delivered: map[string]bool{}, arrived: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				return
			default:
			}
			d, ok := rcv.Within(100 * time.Millisecond)
			if !ok {
				continue
			}
			c.mu.Lock()
			c.delivered[d.Event.ID] = true
			if len(d.Verified) != 1 {
				c.notSigned++
			}
			c.mu.Unlock()
			select {
			case c.arrived <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		close(c.stop)
		<-c.done
	})
	return c
}

// wait returns once every event of events was delivered, or with those
// that were not when no delivery arrived for deliveryStall.
func (c *crashDeliveries) wait(events map[string]bool) (missing []string) {
	stall := time.NewTimer(deliveryStall)
	defer stall.Stop()
	for {
		missing = missing[:0]
		c.mu.Lock()
		for id := range events {
			if !c.delivered[id] {
				missing = append(missing, id)
			}
		}
		c.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-c.arrived:
			stall.Reset(deliveryStall)
		case <-stall.C:
			return missing
		}
	}
}

// unverified is how many deliveries did not verify.
func (c *crashDeliveries) unverified() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notSigned
}

// referencedFiles reads every application of the server p, downloading
// every file it links to, and returns the files (their /files/ paths). It
// first waits until the registry documents of each are no longer pending,
// so that the files are the final ones: in id order, the order the job
// takes them in, at most a minute for each (a long run leaves a backlog
// the job works through one application at a time).
func referencedFiles(t *testing.T, p *serveProc, key string) map[string]bool {
	t.Helper()
	ids := applicationIDs(t, p, key)
	slices.Sort(ids)
	for _, id := range ids {
		deadline := time.Now().Add(time.Minute)
		for {
			var app struct {
				RegistryDocumentsStatus string `json:"registry_documents_status"`
			}
			if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, "")), &app); err != nil {
				t.Fatal(err)
			}
			if app.RegistryDocumentsStatus != "pending" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("application %s: registry documents still pending after a minute", id)
			}
			time.Sleep(100 * time.Millisecond) // the registry documents job's pace
		}
	}
	files := map[string]bool{}
	for _, id := range ids {
		r, err := readResource(p.base, key, "/api/external/applications/"+id)
		if err != nil {
			t.Fatal(err)
		}
		for path := range r.Files {
			files[path] = true
		}
	}
	return files
}

// applicationIDs lists the ids of every application the key's
// organization has.
func applicationIDs(t *testing.T, p *serveProc, key string) []string {
	t.Helper()
	var ids []string
	path := "/api/external/applications?limit=100"
	for {
		var page struct {
			Applications []struct {
				ID string `json:"id"`
			} `json:"applications"`
			HasMore    bool    `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, path, key, "")), &page); err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Applications {
			ids = append(ids, a.ID)
		}
		if !page.HasMore {
			return ids
		}
		path = "/api/external/applications?limit=100&cursor=" + url.QueryEscape(*page.NextCursor)
	}
}

// crashWorker creates applications and takes each through PATCHes, the
// sandbox submission (which uploads documents) and approval, noting each
// acknowledged write in ledger, until stop is closed or the server is
// gone.
func crashWorker(base, key, name string, ledger *crashLedger, stop <-chan struct{}) {
	client := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path, body string) (int, map[string]any) {
		req, err := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		code, v := call(http.MethodPost, "/api/external/applications", createBody)
		if code != http.StatusCreated {
			return // the server is gone
		}
		a := &crashApp{id: v["application_id"].(string), status: "sent"}
		ledger.add(a)
		for i := range 3 {
			site := fmt.Sprintf("https://%s-%d-%d.example", name, n, i)
			ledger.send(a, func() { a.inflight = site })
			if code, _ := call(http.MethodPatch, "/api/external/applications/"+a.id, `{"fields":{"website":"`+site+`"}}`); code != http.StatusOK {
				return
			}
			ledger.ack(a, func() { a.website, a.inflight = site, "" })
		}
		ledger.send(a, func() { a.pending, a.between = "submitted", "in_progress" })
		if code, _ := call(http.MethodPost, "/api/external/test-helpers/applications/"+a.id+"/submit", ""); code != http.StatusOK {
			return
		}
		ledger.ack(a, func() { a.status, a.pending, a.between = "submitted", "", "" })
		ledger.send(a, func() { a.pending = "approved" })
		if code, _ := call(http.MethodPost, "/api/external/applications/"+a.id+"/decision", `{"type":"application.approved"}`); code != http.StatusOK {
			return
		}
		ledger.ack(a, func() { a.status, a.pending = "approved", "" })
	}
}

// checkLedger reads every application of ledger back and returns how many
// acknowledged writes are missing: an application that is not there, a
// website or status that is neither the acknowledged one nor the one in
// flight at the kill.
func checkLedger(t *testing.T, p *serveProc, key string, ledger *crashLedger) int {
	t.Helper()
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	lost := 0
	for _, a := range ledger.apps {
		code, body := p.call(t, http.MethodGet, "/api/external/applications/"+a.id, key, "")
		if code != http.StatusOK {
			t.Errorf("application %s: %d %s", a.id, code, body)
			lost++
			continue
		}
		app := decodeJSON(t, body)
		fields, _ := app["data"].(map[string]any)["fields"].(map[string]any)
		website, _ := fields["website"].(string)
		if website != a.website && (a.inflight == "" || website != a.inflight) {
			t.Errorf("application %s: website %q, want the acknowledged %q (or %q in flight)", a.id, website, a.website, a.inflight)
			lost++
		}
		if st := app["status"]; st != a.status && (a.pending == "" || st != a.pending) && (a.between == "" || st != a.between) {
			t.Errorf("application %s: status %v, want the acknowledged %s (or %s in flight)", a.id, st, a.status, a.pending)
			lost++
		}
		// An application sent on is settled: what it acknowledged is final.
		if a.inflight != "" && website == a.inflight {
			a.website, a.inflight = website, ""
		}
		if st, _ := app["status"].(string); a.pending != "" && (st == a.pending || st == a.between) {
			a.status = st
		}
		a.pending, a.between, a.inflight = "", "", ""
	}
	return lost
}
