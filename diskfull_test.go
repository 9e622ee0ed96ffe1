package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// skipDiskTest skips a test that needs what this host does not give (a
// mount, the immutable attribute), saying why; with CI=true it fails
// instead, so that CI, which runs as root, cannot lose the test silently.
func skipDiskTest(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// mountTmpfs mounts a tmpfs of size bytes on a new temporary directory,
// unmounted at the end of the test.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		skipDiskTest(t, "cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// freeSpace is the free space of the filesystem holding dir.
func freeSpace(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fillTo writes the file path until the free space of its filesystem is
// leave bytes (or less, when the filesystem rounds).
func fillTo(t *testing.T, path string, leave int64) {
	t.Helper()
	n := freeSpace(t, filepath.Dir(path)) - leave
	if n <= 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for n > 0 {
		c := chunk[:min(int64(len(chunk)), n)]
		if _, err := f.Write(c); err != nil {
			t.Fatalf("fill %s: %v", path, err)
		}
		n -= int64(len(c))
	}
}

// insufficientStorage is the API's answer to a write refused for want of
// disk space (docs/api.md).
var insufficientStorage = map[string]any{
	"error":     "Insufficient storage: the server cannot store data until disk space is freed; retry later",
	"retryable": true,
}

// refusedLine and resumedLine are serve's log lines when writes start
// being refused and when they resume.
var (
	refusedLine = regexp.MustCompile(`level=ERROR msg="storage: insufficient storage, writes are refused until space is freed"`)
	resumedLine = regexp.MustCompile(`level=INFO msg="storage: disk space is back, writes resume"`)
	// noRoomLine is what a stop says when the disk has no room to flush.
	noRoomLine = regexp.MustCompile(`onboard: the database was not flushed: the disk has no room for it \(\d+ B free on the filesystem of \S+/badger, [\d.]+ [KM]iB needed\); nothing acknowledged is lost: the writes not yet flushed \([\d.]+ [KM]?i?B\) are in the write-ahead log \(\S+/badger/\*\.mem\), which the next start replays once space is freed\n`)
	// readOnlyLine is serve's log line when it opened the database
	// read-only for want of space.
	readOnlyLine = regexp.MustCompile(`level=ERROR msg="storage: insufficient storage, the database is open read-only; writes are refused until space is freed, when it reopens for writing by itself"`)
	// reopenedLine is serve's log line when it has reopened for writing
	// a database opened read-only.
	reopenedLine = regexp.MustCompile(`level=INFO msg="storage: disk space is back, the database is open for writing again"`)
)

// formLink and downloadLink find the path of an application's form link
// and of a document's download link in its JSON (the public URL, which
// serves nothing in these tests, left out).
var (
	formLink     = regexp.MustCompile(`"link":"http://[^/"]+(/a/[^"]+)"`)
	downloadLink = regexp.MustCompile(`"download_url":"http://[^/"]+(/files/[^"]+)"`)
)

// TestFullDisk fills a small tmpfs holding the data directory through the
// API until writes are refused, and checks that a full disk is an error,
// not a crash: writes answer 503 Insufficient storage, reads still answer,
// /readyz and the metrics say why, the refusal is logged once; a restart
// on the full disk serves reads, and so does `apps verify-log`; once space
// is freed, writes resume without a restart, also when the database was
// opened read-only on a disk with no byte free.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	mnt := mountTmpfs(t, 8<<20)
	data := filepath.Join(mnt, "data")
	config := filepath.Join(t.TempDir(), "onboard.toml")
	if err := os.WriteFile(config, []byte("[limits]\nrate_per_second = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--config", config, "--data-dir", data)
	key := p.waitForKey(t)
	// The filler is what the operator frees at the end.
	filler := filepath.Join(mnt, "filler")
	fillTo(t, filler, freeSpace(t, mnt)-3<<20)

	// Fill the disk with creates and submissions (which store the sandbox
	// documents) until a write is refused.
	var accepted int
	var lastID string // the last application submitted
	create := func() (int, string) {
		return p.call(t, http.MethodPost, "/api/external/applications", key, createBody)
	}
	for accepted < 2000 {
		status, body := create()
		if status == http.StatusCreated {
			var created struct {
				ApplicationID string `json:"application_id"`
			}
			if err := json.Unmarshal([]byte(body), &created); err != nil {
				t.Fatal(err)
			}
			accepted++
			status, body = p.call(t, http.MethodPost, "/api/external/test-helpers/applications/"+created.ApplicationID+"/submit", key, "")
			if status == http.StatusOK {
				lastID = created.ApplicationID // one with documents to download
				accepted++
				continue
			}
		}
		if status != http.StatusServiceUnavailable {
			t.Fatalf("after %d writes: status %d, want 201/200 or 503; body %s\nstderr:\n%s", accepted, status, body, p.stderr.String())
		}
		if diff := cmp.Diff(insufficientStorage, decodeJSON(t, body)); diff != "" {
			t.Fatalf("refused write (-want +got):\n%s", diff)
		}
		break
	}
	if lastID == "" || accepted >= 2000 {
		t.Fatalf("%d writes accepted, %d bytes free: the disk never filled", accepted, freeSpace(t, mnt))
	}
	t.Logf("%d writes accepted before the first refusal; %d bytes free", accepted, freeSpace(t, mnt))

	wantFull := func(p *serveProc, logged *regexp.Regexp) {
		t.Helper()
		p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications", key, "")
		app := p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+lastID, key, "")
		// The applicant's form page and a document's download link.
		for _, m := range []*regexp.Regexp{formLink, downloadLink} {
			link := m.FindStringSubmatch(app)
			if link == nil {
				t.Fatalf("no %s in %s", m, app)
			}
			if status, body := p.call(t, http.MethodGet, strings.ReplaceAll(link[1], `\u0026`, "&"), "", ""); status != http.StatusOK {
				t.Errorf("GET %s on a full disk: %d %.200s", link[1], status, body)
			}
		}
		status, body := create()
		if status != http.StatusServiceUnavailable {
			t.Fatalf("create on a full disk: status %d, want 503; body %s", status, body)
		}
		if diff := cmp.Diff(insufficientStorage, decodeJSON(t, body)); diff != "" {
			t.Errorf("create on a full disk (-want +got):\n%s", diff)
		}
		status, body = p.call(t, http.MethodGet, "/readyz", "", "")
		ready := decodeJSON(t, body)
		checks, _ := ready["checks"].(map[string]any)
		disk, _ := checks["disk"].(string)
		if status != http.StatusServiceUnavailable || !strings.HasPrefix(disk, "Insufficient storage: ") || !strings.Contains(disk, "writes are refused until") {
			t.Errorf("/readyz = %d %s, want 503 with the disk check saying why", status, body)
		}
		if got := metricSeries(t, scrapeURL(t, p.base+"/metrics"), "onboard_storage_writes_refused")[""]; got != 1 {
			t.Errorf("onboard_storage_writes_refused = %v, want 1", got)
		}
		if n := len(logged.FindAllString(p.stderr.String(), -1)); n != 1 {
			t.Errorf("the refusal is logged %d times, want once\nstderr:\n%s", n, p.stderr.String())
		}
	}
	wantFull(p, refusedLine)
	if code := p.stop(t); code != 0 {
		t.Fatalf("stop on a full disk: exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// Restart on a disk fuller still: less free than the reserve of a
	// single write, enough to open.
	fillTo(t, filler, 768<<10)
	if r := mustRun(t, "apps", "verify-log", "--data-dir", data); !strings.HasPrefix(r.stdout, "OK: ") {
		t.Errorf("verify-log on a full disk: %q", r.stdout)
	}
	p = startServe(t, "--config", config, "--data-dir", data)
	p.waitForLog(t, refusedLine, 20*time.Second)
	wantFull(p, refusedLine)

	// Free the space: writes resume by themselves. It answers the body of
	// the create that proves it.
	wantResumed := func(p *serveProc, logged *regexp.Regexp) string {
		t.Helper()
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			status, body := p.call(t, http.MethodGet, "/readyz", "", "")
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz still %d %s 30s after space was freed (%d bytes free)\nstderr:\n%s", status, body, freeSpace(t, mnt), p.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		p.waitForLog(t, logged, 20*time.Second)
		created := p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)
		if got := metricSeries(t, scrapeURL(t, p.base+"/metrics"), "onboard_storage_writes_refused")[""]; got != 0 {
			t.Errorf("onboard_storage_writes_refused after space was freed = %v, want 0", got)
		}
		return created
	}
	created := wantResumed(p, resumedLine)

	// Something else fills the disk to its last byte under the running
	// server, whose memtable holds that create: the flush on stop would be
	// a SIGBUS, so stop leaves the write-ahead log to the next start,
	// exits 1 and says so.
	fillTo(t, filler, 0)
	if code := p.stop(t); code != 1 || !noRoomLine.MatchString(p.stderr.String()) || strings.Contains(p.stderr.String(), "SIGBUS") {
		t.Fatalf("stop on a disk with no byte free: exit code %d, want 1 and %s\nstderr:\n%s", code, noRoomLine, p.stderr.String())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	p = startServe(t, "--config", config, "--data-dir", data)
	id := decodeJSON(t, created)["application_id"].(string)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, "")
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// A disk filled to the last byte by something else. A database closed
	// cleanly opens read-only (Badger's first write would be a SIGBUS):
	// reads are served, writes refused; once space is freed, the database
	// is reopened for writing, without a restart.
	fillTo(t, filler, 0)
	if r := mustRun(t, "apps", "verify-log", "--data-dir", data); !strings.HasPrefix(r.stdout, "OK: ") {
		t.Errorf("verify-log on a disk with no byte free: %q", r.stdout)
	}
	p = startServe(t, "--config", config, "--data-dir", data)
	wantFull(p, readOnlyLine)
	wantResumed(p, reopenedLine)
	if code := p.stop(t); code != 0 {
		t.Fatalf("stop a server reopened for writing: exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// A server killed with writes in its write-ahead log, on a disk with
	// no byte free: the log cannot be flushed, so the database opens
	// read-only, with the log replayed into memory; reads are served, the
	// killed server's last create among them, and once space is freed the
	// database is reopened for writing.
	p = startServe(t, "--config", config, "--data-dir", data)
	created = p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	fillTo(t, filler, 0)
	if r := mustRun(t, "apps", "verify-log", "--data-dir", data); !strings.HasPrefix(r.stdout, "OK: ") {
		t.Errorf("verify-log after a kill, on a disk with no byte free: %q", r.stdout)
	}
	p = startServe(t, "--config", config, "--data-dir", data)
	wantFull(p, readOnlyLine)
	id = decodeJSON(t, created)["application_id"].(string)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, "")
	wantResumed(p, reopenedLine)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, "")
	if code := p.stop(t); code != 0 {
		t.Fatalf("stop a server reopened for writing after a kill: exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
	if r := mustRun(t, "apps", "verify-log", "--data-dir", data); !strings.HasPrefix(r.stdout, "OK: ") {
		t.Errorf("verify-log after space was freed: %q", r.stdout)
	}
}

// Linux's file attribute ioctls and the immutable flag (linux/fs.h).
const (
	fsIocGetFlags = 0x80086601
	fsIocSetFlags = 0x40086602
	fsImmutableFl = 0x10
)

// setImmutable sets or clears the immutable attribute of dir: nothing can
// be created in or removed from an immutable directory, not even by root,
// while files already open stay writable, as in a directory made
// read-only under a running process. (A read-only remount is refused
// while files are open for writing, and chmod does not stop root.)
func setImmutable(dir string, on bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	var flags int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocGetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	if on {
		flags |= fsImmutableFl
	} else {
		flags &^= fsImmutableFl
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocSetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		return e
	}
	return nil
}

// closeFailedLine is what serve says when it cannot flush the database.
var closeFailedLine = regexp.MustCompile(`onboard: the database could not be flushed within 30s \(badger: [^)]*operation not permitted.*\); nothing acknowledged is lost: the writes not yet flushed \([0-9.]+ [KM]iB\) are in the write-ahead log \(.*/badger/\*\.mem\), which the next start replays`)

// TestServeShutdownReadOnlyDataDir makes the database's directory
// read-only under a running server and stops it: shutdown ends, within
// its bound, exiting 1 and saying what it could not flush; the next start
// replays the write-ahead log and loses nothing acknowledged.
func TestServeShutdownReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	var created struct {
		ApplicationID string `json:"application_id"`
	}
	body := p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	badgerDir := filepath.Join(data, "badger")
	if err := setImmutable(badgerDir, true); err != nil {
		skipDiskTest(t, "cannot make %s immutable (needs root and a filesystem with file attributes): %v", badgerDir, err)
	}
	t.Cleanup(func() {
		if err := setImmutable(badgerDir, false); err != nil {
			t.Errorf("clear the immutable attribute: %v", err)
		}
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A guard against a hang, far above the 30 s bound.
	select {
	case <-p.done:
	case <-time.After(runBinaryGuard):
		t.Fatalf("serve did not exit within %s of SIGTERM\nstderr:\n%s", runBinaryGuard, p.stderr.String())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !closeFailedLine.MatchString(p.stderr.String()) {
		t.Errorf("stderr does not say what could not be flushed:\n%s", p.stderr.String())
	}

	if err := setImmutable(badgerDir, false); err != nil {
		t.Fatal(err)
	}
	p = startServe(t, "--data-dir", data)
	p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+created.ApplicationID, key, "")
	if code := p.stop(t); code != 0 {
		t.Errorf("restart: exit code %d\nstderr:\n%s", code, p.stderr.String())
	}
}
