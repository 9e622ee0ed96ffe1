package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/backup"
	"onboard/backup/backuptest"
)

// resourceRead is one read of an application or RFI request through the
// API: its JSON with every download_url cut to its path (the query holds
// an expiry, which differs from read to read), and the bytes behind each
// link.
type resourceRead struct {
	JSON  string
	Files map[string]string // download path → content
}

// getJSON sends a GET with key to the server at base and decodes a 200
// answer.
func getJSON(base, key, path string) (any, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := politely(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// politely sends req as a well-behaved client does: a 429 is sent again
// once its Retry-After has passed (the load of these tests is about
// backups, not about the API key's rate limit, which a fast run reaches).
func politely(req *http.Request) (*http.Response, error) {
	for {
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		resp.Body.Close()
		time.Sleep(time.Duration(max(wait, 1)) * time.Second) // the server asked for this wait
		if req.GetBody != nil {
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// readResource reads the application or RFI request at path (an API path)
// from the server at base, downloading every file it links to.
func readResource(base, key, path string) (resourceRead, error) {
	v, err := getJSON(base, key, path)
	if err != nil {
		return resourceRead{}, err
	}
	files := map[string]string{}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if link, ok := x.(string); ok && k == "download_url" {
					u, err := url.Parse(link)
					if err != nil {
						return err
					}
					resp, err := client.Get(base + u.RequestURI())
					if err != nil {
						return err
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						return err
					}
					if resp.StatusCode != http.StatusOK {
						return fmt.Errorf("download %s of %s: %d %s", u.Path, path, resp.StatusCode, b)
					}
					files[u.Path] = string(b)
					v[k] = u.Path
					continue
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return resourceRead{}, err
	}
	b, err := json.Marshal(v)
	return resourceRead{JSON: string(b), Files: files}, err
}

// dataState is what the restore tests compare: every read of the
// resources the tests seeded before any load, by API path, and of the
// events, keys and webhook endpoints.
type dataState struct {
	Resources map[string]resourceRead
	Events    map[string]string // event id → GET /events/{id} body
	Keys      []listedKey
	Endpoints []listedEndpoint
}

// readState reads st's resources, events, keys and endpoints from the
// server p serving the store that the command-line arguments cli name
// (--data-dir, and --config for a shared backend).
func readState(t *testing.T, p *serveProc, key string, cli []string, paths, events []string) dataState {
	t.Helper()
	st := dataState{Resources: map[string]resourceRead{}, Events: map[string]string{}}
	for _, path := range paths {
		r, err := readResource(p.base, key, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) == 0 {
			t.Fatalf("%s links to no file; the test needs files", path)
		}
		st.Resources[path] = r
	}
	for _, id := range events {
		st.Events[id] = p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/events/"+id, key, "")
	}
	st.Keys = listKeys(t, cli...)
	st.Endpoints = listEndpoints(t, cli...)
	return st
}

// eventIDs lists the ids of every event the key's organization has.
func eventIDs(t *testing.T, p *serveProc, key string) []string {
	t.Helper()
	var ids []string
	path := "/api/external/events?limit=100"
	for {
		var page struct {
			Events []struct {
				ID string `json:"id"`
			} `json:"events"`
			HasMore    bool    `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, path, key, "")), &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			ids = append(ids, e.ID)
		}
		if !page.HasMore {
			return ids
		}
		path = "/api/external/events?limit=100&cursor=" + url.QueryEscape(*page.NextCursor)
	}
}

// seedData fills the data directory p serves through the API and the CLI:
// two GB applications submitted with documents and their registry
// documents fetched, an RFI request completed with documents, a second
// key, and a disabled webhook endpoint. It returns the API paths of the
// application and RFI request.
func seedData(t *testing.T, p *serveProc, key, data string) []string {
	t.Helper()
	var paths []string
	for range 2 {
		var created struct {
			ApplicationID string `json:"application_id"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
			t.Fatal(err)
		}
		p.waitForLog(t, regexp.MustCompile(`msg="registry documents fetched" .*application_id=`+created.ApplicationID), 20*time.Second)
		p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/applications/"+created.ApplicationID+"/submit", key, "")
		paths = append(paths, "/api/external/applications/"+created.ApplicationID)
	}
	var rfi struct {
		RequestID string `json:"request_id"`
	}
	body := `{"company_name":"Emerald","country":"IE","primary_contact":{"name":"C","email":"c@emerald.example"}}`
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/rfi-requests", key, body)), &rfi); err != nil {
		t.Fatal(err)
	}
	p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/rfi-requests/"+rfi.RequestID+"/complete", key, "")
	paths = append(paths, "/api/external/rfi-requests/"+rfi.RequestID)
	createKey(t, "--data-dir", data, "--org", "default", "--name", "second")
	_, endpoint := addEndpoint(t, "--data-dir", data, "--org", "default", "--url", "http://127.0.0.1:1/hook")
	mustRun(t, "webhooks", "disable", "--data-dir", data, endpoint)
	return paths
}

// checkState fails the test unless the server p, serving the store cli
// names (readState), answers every read of want as it was read.
func checkState(t *testing.T, p *serveProc, key string, cli []string, want dataState) {
	t.Helper()
	got := readState(t, p, key, cli, slices.Sorted(maps.Keys(want.Resources)), slices.Sorted(maps.Keys(want.Events)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored reads (-original +restored):\n%s", diff)
	}
}

// loadApp is an application a load worker made while a backup ran.
type loadApp struct {
	id string
	// before: it was created before the backup began, so the backup
	// holds it.
	before bool
	// settled: every change to it was over before the backup began, so
	// the backup holds final.
	settled bool
	// after: it was created after the backup had finished.
	after bool
	files map[string]string // every file it ever had: download path → content
	final resourceRead
}

// loadWorker is a partner and an operator working on the server at base
// while a backup runs: each cycle creates an IE application (no registry
// documents, so no background job changes it), submits it through the
// test helper (which stores sample documents), and skips its certificate
// of incorporation with `docs skip` through the admin socket, which
// deletes that document's file once the change is stored.
type loadWorker struct {
	base, key, data string
	started, done   *atomic.Bool // the backup has started; it has finished
	stop            <-chan struct{}
	cycles          chan<- int // one send per cycle completed
	apps            []loadApp
}

const loadBody = `{"primary_contact":{"email":"load@example.com"},"country":"IE","company_number":"100001","company_name":"Emerald Software"}`

// run works until stop is closed; it returns the first failure.
func (w *loadWorker) run() error {
	for cycle := 1; ; cycle++ {
		select {
		case <-w.stop:
			return nil
		default:
		}
		after := w.done.Load()
		id, err := w.post("/api/external/applications", loadBody, "application_id")
		if err != nil {
			return err
		}
		app := loadApp{id: id, after: after, before: !w.started.Load()}
		if _, err := w.post("/api/external/test-helpers/applications/"+id+"/submit", "", "id"); err != nil {
			return err
		}
		submitted, err := readResource(w.base, w.key, "/api/external/applications/"+id)
		if err != nil {
			return err
		}
		app.files = submitted.Files
		skip := exec.Command(binary, "docs", "skip", "--data-dir", w.data, "--app", id,
			"--field", "certificate_of_incorporation", "--reason", "load test")
		skip.Env = childEnv()
		if out, err := skip.CombinedOutput(); err != nil {
			return fmt.Errorf("docs skip: %v\n%s", err, out)
		}
		if app.final, err = readResource(w.base, w.key, "/api/external/applications/"+id); err != nil {
			return err
		}
		app.settled = !w.started.Load()
		w.apps = append(w.apps, app)
		w.cycles <- cycle
	}
}

// post sends a POST with a JSON body and returns the member field of the
// 200 or 201 answer.
func (w *loadWorker) post(path, body, field string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, w.base+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+w.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := politely(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return "", err
	}
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("POST %s: %d %v", path, resp.StatusCode, v)
	}
	s, _ := v[field].(string)
	return s, nil
}

// archiveManifest reads and checks the archive at path, returning its
// manifest.
func archiveManifest(t *testing.T, path string) *backup.Manifest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := backup.ReadArchive(f, nil)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return m
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

var backupSummary = regexp.MustCompile(`^Backup written to (\S+): (\d+) records \(.+\), (\d+) files \(.+\), 2 secrets\.\n$`)

// TestBackupWhileServing takes a backup through the admin socket while
// two workers keep creating, submitting and changing applications (which
// stores and deletes files), restores it into a new directory and serves
// it: every resource seeded before the load, the events, keys and
// endpoints read exactly as they did; every application whose changes were
// all over before the backup began reads exactly as it last did; none
// created after the backup finished is there; and every application there
// is whole, each of its files downloadable.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	paths := seedData(t, p, key, data)
	want := readState(t, p, key, []string{"--data-dir", data}, paths, eventIDs(t, p, key))

	var started, done atomic.Bool
	stop := make(chan struct{})
	cycles := make(chan int, 100)
	workers := []*loadWorker{
		{base: p.base, key: key, data: data, started: &started, done: &done, stop: stop, cycles: cycles},
		{base: p.base, key: key, data: data, started: &started, done: &done, stop: stop, cycles: cycles},
	}
	errs := make(chan error, len(workers))
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { errs <- w.run() })
	}
	stopLoad := func() {
		close(stop)
		go func() {
			for range cycles {
			}
		}()
		wg.Wait()
		close(cycles)
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("load: %v", err)
			}
		}
	}
	// awaitCycles waits until the workers have completed n more cycles.
	awaitCycles := func(n int) {
		for range n {
			select {
			case <-cycles:
			case err := <-errs:
				close(stop)
				t.Fatalf("load: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the load made no progress within 30s")
			}
		}
	}
	awaitCycles(4)
	archive := filepath.Join(t.TempDir(), "onboard.tar.gz")
	started.Store(true)
	r := mustRun(t, "backup", "--data-dir", data, "--out", archive)
	done.Store(true)
	awaitCycles(2)
	stopLoad()

	if r.stdout != "" || !backupSummary.MatchString(r.stderr) {
		t.Errorf("backup output: stdout %q, stderr %q; want a summary on stderr only", r.stdout, r.stderr)
	}
	m := archiveManifest(t, archive)
	if len(m.MissingBlobs) != 0 {
		t.Errorf("the backup lacks files its records refer to: %v", m.MissingBlobs)
	}
	if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("archive: %v, mode %v; want a 0600 file", err, fi)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	mustRun(t, "restore", "--in", archive, "--data-dir", restored)
	p2 := startServe(t, "--data-dir", restored)
	checkState(t, p2, key, []string{"--data-dir", restored}, want)

	settled, during, absent := 0, 0, 0
	for _, w := range workers {
		for _, app := range w.apps {
			path := "/api/external/applications/" + app.id
			got, err := readResource(p2.base, key, path)
			notFound := err != nil && strings.Contains(err.Error(), ": 404 ")
			switch {
			case app.after:
				if !notFound {
					t.Errorf("%s, created after the backup: %v, want 404", path, err)
				}
			case notFound && !app.before:
				absent++ // created while the backup ran, after its snapshot
			case err != nil:
				t.Errorf("%s: %v", path, err)
			case app.settled:
				settled++
				if diff := cmp.Diff(app.final, got); diff != "" {
					t.Errorf("%s, settled before the backup (-original +restored):\n%s", path, diff)
				}
			default:
				// Changed while the backup ran: in any state it went
				// through, with each file it refers to whole.
				during++
				for link, content := range got.Files {
					if want, ok := app.files[link]; !ok || content != want {
						t.Errorf("%s: file %s is %.20q, want %.20q", path, link, content, want)
					}
				}
			}
		}
	}
	t.Logf("load: %d applications settled before the backup, %d restored as the backup found them while they changed, %d created after its snapshot",
		settled, during, absent)
	if settled == 0 {
		t.Error("no application settled before the backup; the test checks nothing exact of the load")
	}
	if code := p2.stop(t); code != 0 {
		t.Errorf("serve on the restored directory: exit code %d", code)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve: exit code %d", code)
	}
}

// TestBackupWithoutServe backs up a data directory no server holds (the
// store opened directly), restores it into an existing empty directory,
// and checks the restored directory: opened directly, its blob store and
// secrets are the original's, file for file; served, it answers every
// read as the original did.
func TestBackupWithoutServe(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	paths := seedData(t, p, key, data)
	want := readState(t, p, key, []string{"--data-dir", data}, paths, eventIDs(t, p, key))
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve: exit code %d", code)
	}

	archive := filepath.Join(t.TempDir(), "onboard.tar.gz")
	r := mustRun(t, "backup", "--data-dir", data, "--out", archive)
	if !backupSummary.MatchString(r.stderr) {
		t.Errorf("backup stderr %q, want a summary", r.stderr)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if err := os.Mkdir(restored, 0o700); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, "restore", "--in", archive, "--data-dir", restored)
	if !strings.HasPrefix(r.stderr, "Restored "+archive+" (taken ") {
		t.Errorf("restore stderr %q, want a summary", r.stderr)
	}
	for _, dir := range []string{"blobs", "secrets"} {
		if diff := cmp.Diff(treeOf(t, filepath.Join(data, dir)), treeOf(t, filepath.Join(restored, dir))); diff != "" {
			t.Errorf("restored %s (-original +restored):\n%s", dir, diff)
		}
	}
	p2 := startServe(t, "--data-dir", restored)
	checkState(t, p2, key, []string{"--data-dir", restored}, want)
	if code := p2.stop(t); code != 0 {
		t.Errorf("serve on the restored directory: exit code %d", code)
	}
}

// treeOf returns the regular files under dir (but not in tmp/) with their
// content and mode.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%v %s", info.Mode().Perm(), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no file; the test needs some", dir)
	}
	return out
}

// TestRestoreRefusals restores archives that are damaged, truncated or not
// backups at all, and into a directory that is not empty: each is refused
// with its own message, and leaves no directory, not even a temporary
// one, behind.
func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	seed := seedDocs(t, data)
	work := t.TempDir()
	good := filepath.Join(work, "good.tar.gz")
	mustRun(t, "backup", "--data-dir", data, "--out", good)
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	blob := blobPath(seed.blobID)

	write := func(name string, b []byte) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := bytesFlipped(raw, len(raw)/2)
	nonEmpty := filepath.Join(work, "in-use")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "badger"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, target string
		stderr           *regexp.Regexp
	}{
		{"a byte of a blob changed", write("blob.tar.gz", rewriteArchive(t, raw, func(name string, b []byte) []byte {
			if name == blob {
				return bytesFlipped(b, 0)
			}
			return b
		})), "", exactly("onboard: restore: " + filepath.Join(work, "blob.tar.gz") + " is damaged: " + blob + " does not match its SHA-256 checksum; nothing was restored\n")},
		{"a blob left out", write("short.tar.gz", rewriteArchive(t, raw, func(name string, b []byte) []byte {
			if name == blob {
				return nil
			}
			return b
		})), "", exactly("onboard: restore: " + filepath.Join(work, "short.tar.gz") + " is damaged: " + blob + " is missing; nothing was restored\n")},
		{"truncated", write("truncated.tar.gz", raw[:len(raw)*2/3]), "",
			exactly("onboard: restore: " + filepath.Join(work, "truncated.tar.gz") + " is truncated; nothing was restored\n")},
		{"a compressed byte changed", write("flipped.tar.gz", flipped), "",
			regexp.MustCompile(`^onboard: restore: ` + regexp.QuoteMeta(filepath.Join(work, "flipped.tar.gz")) + ` is (damaged: .+|truncated); nothing was restored\n$`)},
		{"not a backup", write("notes.txt", []byte("not an archive\n")), "",
			exactly("onboard: restore: " + filepath.Join(work, "notes.txt") + " is not an onboard backup (not gzip-compressed); nothing was restored\n")},
		{"newer format", write("v3.tar.gz", rewriteArchive(t, raw, func(name string, b []byte) []byte {
			if name == "manifest.json" {
				return []byte(strings.Replace(string(b), `"format_version": 2`, `"format_version": 3`, 1))
			}
			return b
		})), "", exactly("onboard: restore: " + filepath.Join(work, "v3.tar.gz") + " is a backup of format version 3; this onboard reads versions 1 to 2; nothing was restored\n")},
		{"records forged, checksums matching", write("forged.tar.gz", forgeRecords(t, raw, []byte("these are not the records of a database\n"))), "",
			exactly("onboard: restore: " + filepath.Join(work, "forged.tar.gz") + " is not an onboard backup (its records' line 1: not a JSON object: invalid character 'h' in literal true (expecting 'r')); nothing was restored\n")},
		{"records of an unknown kind, checksums matching", write("forged-kind.tar.gz", forgeRecords(t, raw, []byte(`{"kind":"invoice","record":"AQ=="}`+"\n"))), "",
			exactly("onboard: restore: " + filepath.Join(work, "forged-kind.tar.gz") + ` is not an onboard backup (its records' line 1: unknown kind "invoice"); nothing was restored` + "\n")},
		{"records empty, checksums matching", write("forged-empty.tar.gz", forgeRecords(t, raw, []byte{})), "",
			regexp.MustCompile(`^onboard: restore: ` + regexp.QuoteMeta(filepath.Join(work, "forged-empty.tar.gz")) + ` is damaged: its records hold 0 lines of kind application; its manifest says [1-9]\d*; nothing was restored\n$`)},
		{"no such file", filepath.Join(work, "absent.tar.gz"), "",
			exactly("onboard: restore: open " + filepath.Join(work, "absent.tar.gz") + ": no such file or directory\n")},
		{"no parent", good, filepath.Join(work, "absent", "restored"),
			exactly("onboard: restore: the directory " + filepath.Join(work, "absent") + ", in which to create the data directory, does not exist; nothing was restored\n")},
		{"target a file", good, write("a-file", []byte("x")),
			exactly("onboard: restore: " + filepath.Join(work, "a-file") + " exists and is not a directory; nothing was restored\n")},
		{"target not empty", good, nonEmpty,
			exactly("onboard: restore: data directory " + nonEmpty + " is not empty; restore into a new or empty directory; nothing was restored\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			target := tt.target
			if target == "" {
				target = filepath.Join(parent, "restored")
			}
			beside := filepath.Dir(target)
			if _, err := os.Stat(beside); err != nil {
				beside = filepath.Dir(beside)
			}
			before := dirEntries(t, beside)
			r := runBinary(t, "restore", "--in", tt.in, "--data-dir", target)
			if r.code != 1 || r.stdout != "" || !tt.stderr.MatchString(r.stderr) {
				t.Errorf("restore: exit %d, stdout %q, stderr %q; want 1, nothing, %s", r.code, r.stdout, r.stderr, tt.stderr)
			}
			if diff := cmp.Diff(before, dirEntries(t, beside)); diff != "" {
				t.Errorf("beside the target (-before +after):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"badger"}, dirEntries(t, nonEmpty)); diff != "" {
		t.Errorf("the non-empty target changed (-before +after):\n%s", diff)
	}
	// The archive the cases start from restores.
	mustRun(t, "restore", "--in", good, "--data-dir", filepath.Join(t.TempDir(), "restored"))
}

// forgeRecords returns the archive with records in place of its records,
// and a manifest whose size, checksum and counts match them, as a forger
// would write it.
func forgeRecords(t *testing.T, archive, records []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(records)
	return rewriteArchive(t, archive, func(name string, b []byte) []byte {
		switch name {
		case "records.ndjson":
			return records
		case "manifest.json":
			var m backup.Manifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m.Files[0].Bytes, m.Files[0].SHA256 = int64(len(records)), hex.EncodeToString(sum[:])
			m.Counts.RecordBytes = int64(len(records))
			out, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		return b
	})
}

// exactly matches s and nothing else.
func exactly(s string) *regexp.Regexp { return regexp.MustCompile("^" + regexp.QuoteMeta(s) + "$") }

// bytesFlipped returns a copy of b with the bits of byte i inverted.
func bytesFlipped(b []byte, i int) []byte {
	out := slices.Clone(b)
	out[i] ^= 0xff
	return out
}

// rewriteArchive unpacks a gzip-compressed tar stream and packs it again
// with each entry's content passed through change; a nil result leaves the
// entry out.
func rewriteArchive(t *testing.T, archive []byte, change func(name string, content []byte) []byte) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []backuptest.Entry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return backuptest.TarGz(t, out...)
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if b := change(hdr.Name, b); b != nil {
			out = append(out, backuptest.Entry{Name: hdr.Name, Content: string(b)})
		}
	}
}

// TestBackupCommandLine checks the backup and restore commands' own
// refusals and the warning of a backup whose records refer to a file the
// data directory has lost.
func TestBackupCommandLine(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	seed := seedDocs(t, data)
	if err := os.Remove(filepath.Join(data, "blobs", seed.blobID[0:2], seed.blobID[2:4], seed.blobID)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "b.tar.gz")
	r := mustRun(t, "backup", "--data-dir", data, "--out", out)
	lines := strings.SplitAfter(r.stderr, "\n")
	if len(lines) != 3 || !backupSummary.MatchString(lines[0]) ||
		lines[1] != "Warning: the data directory had already lost 1 of the files the records refer to: "+seed.blobID+".\n" {
		t.Errorf("backup stderr %q, want the summary and a warning naming %s", r.stderr, seed.blobID)
	}

	missing := filepath.Join(t.TempDir(), "no-such-dir", "b.tar.gz")
	wantFailure(t, runBinary(t, "backup", "--data-dir", data, "--out", missing),
		"onboard: backup: create "+missing+": no such file or directory\n")

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data-dir", data}, "onboard: missing flags: --out=FILE\n"},
		{[]string{"restore", "--data-dir", data}, "onboard: missing flags: --in=FILE\n"},
	} {
		r := runBinary(t, tt.args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, tt.want) {
			t.Errorf("onboard %s: exit %d, stderr %q; want 2 and %q first", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
}

// blobPath is where blob id is in an archive and in a data directory.
func blobPath(id string) string { return path.Join("blobs", id[0:2], id[2:4], id) }
