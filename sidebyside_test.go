package main

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"onboard/bench"
)

// TestSideBySide measures onboard beside another self-hosted server on
// the same machine, through the same client, connections and phases as
// onboard bench: create, get, list of 50 and PATCH of records of the same
// shape (a company with its number, country, contact and description),
// each for ONBOARD_SIDE_DURATION (5 s) at 32 connections, each server in
// its own process on loopback, one after the other. The other server is
// PocketBase (github.com/pocketbase/pocketbase, its examples/base program),
// whose binary ONBOARD_SIDE_BY_SIDE_POCKETBASE names:
//
//	GOBIN=/tmp/pb GOTOOLCHAIN=go1.27.3 go install github.com/pocketbase/pocketbase/examples/base@latest
//	ONBOARD_SIDE_BY_SIDE_POCKETBASE=/tmp/pb/base go test -run TestSideBySide -v .
//
// The comparison is not like for like, and the log says so: onboard's
// create checks the company with the (sandbox) registry, sends the invite
// and writes its events and activity, and every onboard write is fsynced
// before it is answered; PocketBase stores a row in SQLite in WAL mode
// with synchronous=NORMAL, which fsyncs at checkpoints, not at every
// commit.
func TestSideBySide(t *testing.T) {
	pb := os.Getenv("ONBOARD_SIDE_BY_SIDE_POCKETBASE")
	if pb == "" {
		t.Skip("set ONBOARD_SIDE_BY_SIDE_POCKETBASE to a PocketBase binary to measure onboard beside it (see the test's comment)")
	}
	d := 5 * time.Second
	if v, err := time.ParseDuration(os.Getenv("ONBOARD_SIDE_DURATION")); err == nil && v > 0 {
		d = v
	}
	const concurrency, seed = 32, 2000
	dir := t.TempDir()
	client := bench.NewClient(concurrency)
	defer client.CloseIdleConnections()

	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(noRateLimitConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := startTimed(t, "--config", config, "--data-dir", filepath.Join(dir, "onboard"))
	ob := &sideTarget{name: "onboard", client: client,
		create: bench.Request{Method: "POST", URL: p.base + "/api/external/applications", Want: http.StatusCreated,
			Body: []byte(fmt.Sprintf(bench.CreateBody, "")), ContentType: "application/json",
			Header: http.Header{"Authorization": {"Bearer " + p.waitForKey(t)}}},
		idOf:  func(b []byte) (string, error) { return jsonMember(b, "application_id") },
		get:   func(id string) string { return p.base + "/api/external/applications/" + id },
		list:  p.base + "/api/external/applications?limit=50",
		patch: func(i int) []byte { return fmt.Appendf(nil, `{"fields":{"business_description":"Side %d"}}`, i) },
	}
	onboardRows := ob.measure(t, concurrency, seed, d)
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d", code)
	}

	pbRows, version := measurePocketBase(t, pb, filepath.Join(dir, "pocketbase"), client, concurrency, seed, d)

	t.Logf("PocketBase %s: SQLite in WAL mode, synchronous=NORMAL (fsync at checkpoints); onboard: Badger, every commit fsynced", version)
	t.Logf("%-7s %26s %26s %9s", "", "onboard req/s (p50 ms)", "PocketBase req/s (p50 ms)", "ratio")
	for i, o := range onboardRows {
		q := pbRows[i]
		t.Logf("%-7s %17.0f (%6.2f) %17.0f (%6.2f) %8.2f×", o.Name, o.Throughput, o.P50, q.Throughput, q.P50, o.Throughput/q.Throughput)
		for _, r := range []bench.Result{o, q} {
			if r.Failures > 0 {
				t.Errorf("%s: %d failures, the first: %s", r.Name, r.Failures, r.FirstErr)
			}
		}
	}
}

// sideTarget is one server's requests for TestSideBySide.
type sideTarget struct {
	name   string
	client *http.Client
	create bench.Request
	idOf   func(created []byte) (string, error) // the id of a created record
	get    func(id string) string               // the URL of a record
	list   string                               // the URL of a page of 50
	patch  func(i int) []byte                   // a PATCH body
}

// measure seeds n records, then runs create, get, list and PATCH for d
// each at concurrency.
func (s *sideTarget) measure(t *testing.T, concurrency, n int, d time.Duration) []bench.Result {
	t.Helper()
	header := s.create.Header // authenticates every request, when needed
	ids := make([]string, n)
	if err := bench.Parallel(n, concurrency, func(i int) error {
		_, b, err := bench.Send(s.client, s.create)
		if err == nil {
			ids[i], err = s.idOf(b)
		}
		return err
	}); err != nil {
		t.Fatalf("%s: seeding: %v", s.name, err)
	}
	create := bench.RunPhase("create", concurrency, d, func(int, int) error {
		_, _, err := bench.Send(s.client, s.create)
		return err
	})
	get := bench.RunPhase("get", concurrency, d, func(int, int) error {
		_, _, err := bench.Send(s.client, bench.Request{Method: "GET", URL: s.get(ids[rand.IntN(n)]), Header: header, Want: http.StatusOK})
		return err
	})
	list := bench.RunPhase("list", concurrency, d, func(int, int) error {
		_, _, err := bench.Send(s.client, bench.Request{Method: "GET", URL: s.list, Header: header, Want: http.StatusOK})
		return err
	})
	patch := bench.RunPhase("patch", concurrency, d, func(w, i int) error {
		_, _, err := bench.Send(s.client, bench.Request{Method: "PATCH", URL: s.get(ids[(w+i*concurrency)%n]), Body: s.patch(i),
			ContentType: "application/json", Header: header, Want: http.StatusOK})
		return err
	})
	return []bench.Result{create, get, list, patch}
}

// measurePocketBase starts the PocketBase binary on dir with a superuser,
// creates a collection of the same shape as onboard's records (public
// rules, so requests carry no token, as onboard's carry an API key), and
// measures it. It answers the rows and PocketBase's version.
func measurePocketBase(t *testing.T, bin, dir string, client *http.Client, concurrency, n int, d time.Duration) ([]bench.Result, string) {
	t.Helper()
	version := "(version unknown)"
	if info, err := buildinfo.ReadFile(bin); err == nil {
		for _, dep := range append([]*debug.Module{&info.Main}, info.Deps...) {
			if dep.Path == "github.com/pocketbase/pocketbase" {
				version = dep.Version
			}
		}
	}
	const email, password = "side@example.com", "side-by-side-password"
	if out, err := exec.Command(bin, "superuser", "upsert", email, password, "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("superuser upsert: %v: %s", err, out)
	}
	addr := freeLoopback(t)
	cmd := exec.Command(bin, "serve", "--http", addr, "--dir", dir)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(base + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("PocketBase did not answer /api/health within 30 s: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling until it listens
	}
	_, b, err := bench.Send(client, bench.Request{Method: "POST", URL: base + "/api/collections/_superusers/auth-with-password",
		Body: fmt.Appendf(nil, `{"identity":%q,"password":%q}`, email, password), ContentType: "application/json", Want: http.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	token, err := jsonMember(b, "token")
	if err != nil {
		t.Fatal(err)
	}
	admin := http.Header{"Authorization": {token}}
	collection := `{"name":"applications","type":"base","listRule":"","viewRule":"","createRule":"","updateRule":"","fields":[
		{"name":"company_name","type":"text"},{"name":"company_number","type":"text"},{"name":"country","type":"text"},
		{"name":"contact_email","type":"email"},{"name":"contact_name","type":"text"},{"name":"business_description","type":"text"}]}`
	if _, _, err := bench.Send(client, bench.Request{Method: "POST", URL: base + "/api/collections", Body: []byte(collection),
		ContentType: "application/json", Header: admin, Want: http.StatusOK}); err != nil {
		t.Fatal(err)
	}
	records := base + "/api/collections/applications/records"
	target := &sideTarget{name: "PocketBase", client: client,
		create: bench.Request{Method: "POST", URL: records, Want: http.StatusOK, ContentType: "application/json",
			Body: []byte(`{"company_name":"Northwind Trading Ltd","company_number":"10000001","country":"GB","contact_email":"load@example.com","contact_name":"Load Test"}`)},
		idOf: func(b []byte) (string, error) { return jsonMember(b, "id") },
		get:  func(id string) string { return records + "/" + id },
		// skipTotal: onboard's list does not count the collection either.
		list:  records + "?perPage=50&skipTotal=1",
		patch: func(i int) []byte { return fmt.Appendf(nil, `{"business_description":"Side %d"}`, i) },
	}
	return target.measure(t, concurrency, n, d), version
}

// jsonMember is the string member name of the JSON object b.
func jsonMember(b []byte, name string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%w: %.200s", err, b)
	}
	s, _ := m[name].(string)
	if s == "" {
		return "", fmt.Errorf("no %q in %.200s", name, b)
	}
	return s, nil
}
