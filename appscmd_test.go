package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/storage"
)

func TestAppsVerifyLogUsage(t *testing.T) {
	t.Parallel()
	help := mustRun(t, "apps", "verify-log", "--help").stdout
	for _, flag := range []string{"--org=ORG", "--app=ID", "--config=FILE", "--data-dir=DIR"} {
		if !strings.Contains(help, flag) {
			t.Errorf("apps verify-log --help does not show %s:\n%s", flag, help)
		}
	}
	if help := mustRun(t, "apps", "--help").stdout; !strings.Contains(help, "verify-log") {
		t.Errorf("apps --help does not list verify-log:\n%s", help)
	}
}

// verifyLogErrors are refused runs and their exact stderr, the same
// whether the command opens the store or goes through admin.sock.
func verifyLogErrors() []struct {
	name string
	args []string
	want string
} {
	unknown := "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90"
	return []struct {
		name string
		args []string
		want string
	}{
		{"unknown organization", []string{"--org", "nope"}, "onboard: unknown organization 'nope'\n"},
		{"unknown application", []string{"--app", unknown}, "onboard: Application " + unknown + " not found\n"},
		{"malformed application id", []string{"--app", "nope"}, "onboard: Application nope not found\n"},
	}
}

func checkVerifyLogErrors(t *testing.T, data string) {
	t.Helper()
	for _, tt := range verifyLogErrors() {
		t.Run(tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append([]string{"apps", "verify-log", "--data-dir", data}, tt.args...)...), tt.want)
		})
	}
}

// wantVerifyLog runs verify-log with args and checks its exit status and
// its whole output.
func wantVerifyLog(t *testing.T, data string, code int, stdout, stderr string, args ...string) {
	t.Helper()
	r := runBinary(t, append([]string{"apps", "verify-log", "--data-dir", data}, args...)...)
	if r.code != code || r.stdout != stdout || r.stderr != stderr {
		t.Errorf("apps verify-log %s: exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q",
			strings.Join(args, " "), r.code, r.stdout, r.stderr, code, stdout, stderr)
	}
}

// okLine is the run's report when no log is broken.
var okLine = regexp.MustCompile(`^OK: 2 applications, 1 RFI request, (\d+) entries verified\n$`)

// TestAppsVerifyLog runs verify-log as an operator would: while serve
// runs (through admin.sock) on logs the API wrote, then on a store whose
// history was changed behind the chain's back, with and without serve.
func TestAppsVerifyLog(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	var ids [2]string
	for i := range ids {
		var created struct {
			ApplicationID string `json:"application_id"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
			t.Fatal(err)
		}
		ids[i] = created.ApplicationID
		p.wantStatus(t, http.StatusOK, http.MethodPatch, "/api/external/applications/"+ids[i], key, `{"fields":{"industry":"software"}}`)
		// The registry documents job logs to the application too: wait
		// for it, so that the logs are final when they are counted.
		p.waitForLog(t, regexp.MustCompile(`msg="registry documents fetched" .*application_id=`+ids[i]), 20*time.Second)
	}
	p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/rfi-requests", key,
		`{"company_name":"Northwind Trading Ltd","country":"GB","company_number":"10000001","primary_contact":{"name":"Jane Smith","email":"jane@northwind.example"}}`)
	mustRun(t, "docs", "skip", "--data-dir", data, "--app", ids[0], "--field", "bank_statement", "--reason", "Not needed")

	// Whole logs, through the socket.
	r := mustRun(t, "apps", "verify-log", "--data-dir", data)
	m := okLine.FindStringSubmatch(r.stdout)
	if m == nil || r.stderr != "" {
		t.Fatalf("apps verify-log while serving: stdout %q, stderr %q; want %s", r.stdout, r.stderr, okLine)
	}
	entries := m[1]
	wantVerifyLog(t, data, 0, "OK: 2 applications, 1 RFI request, "+entries+" entries verified\n", "", "--org", "default")
	checkVerifyLogErrors(t, data)
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// The same without serve; then history changes: the first
	// application loses an entry in the middle, the second its last.
	wantVerifyLog(t, data, 0, "OK: 2 applications, 1 RFI request, "+entries+" entries verified\n", "")
	checkVerifyLogErrors(t, data)
	var want [2]string
	var lens [2]int
	withStore(t, data, func(store *storage.Store, _ *blobs.Store) {
		ctx := context.Background()
		for i, id := range ids {
			if err := store.TamperWithActivity(ctx, id, func(h *onboarding.ActivityHead, log []onboarding.LoggedActivity) (*onboarding.ActivityHead, []onboarding.LoggedActivity) {
				lens[i] = len(log)
				if len(log) < 4 {
					t.Fatalf("application %s has %d entries, want at least 4", id, len(log))
				}
				entry := func(j int) string { return onboarding.ActivityEntryID(log[j].Seq) }
				if i == 0 {
					want[i] = fmt.Sprintf("BROKEN application %s, entry %s: it does not follow %s: that entry was rewritten, or entries between them were removed\n", id, entry(2), entry(0))
					return h, append(log[:1:1], log[2:]...)
				}
				n := len(log) - 1
				want[i] = fmt.Sprintf("BROKEN application %s, entry %s: it is missing: the log ends at %s, but its head names this entry as the last\n", id, entry(n), entry(n-1))
				return h, log[:n]
			}); err != nil {
				t.Fatal(err)
			}
		}
	})
	// A walk stops at its log's first break: the first application's
	// after its second entry, the second's at its end.
	total, err := strconv.Atoi(entries)
	if err != nil {
		t.Fatal(err)
	}
	read := total - lens[0] + 2 - 1
	all := fmt.Sprintf("onboard: 2 activity logs broken (verified 2 applications, 1 RFI request, %d entries)\n", read)
	// Newest first: the second application is reported before the first.
	wantVerifyLog(t, data, 1, want[1]+want[0], all)
	wantVerifyLog(t, data, 1, want[0], "onboard: 1 activity log broken (verified 1 application, 0 RFI requests, 2 entries)\n", "--app", ids[0])

	// And through the socket of a server started on the changed store.
	p = startServe(t, "--data-dir", data)
	wantVerifyLog(t, data, 1, want[1]+want[0], all, "--org", "default")
	wantVerifyLog(t, data, 1, want[1], fmt.Sprintf("onboard: 1 activity log broken (verified 1 application, 0 RFI requests, %d entries)\n", lens[1]-1),
		"--app", ids[1], "--org", "default")
	wantVerifyLog(t, data, 1, "", "onboard: unknown organization 'elsewhere'\n", "--app", ids[1], "--org", "elsewhere")
	checkVerifyLogErrors(t, data)
	if code := p.stop(t); code != 0 {
		t.Errorf("serve exit code %d", code)
	}
}
