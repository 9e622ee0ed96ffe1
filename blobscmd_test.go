package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

// blobFiles lists the ids of the blobs in data's blob store.
func blobFiles(t *testing.T, data string) []string {
	t.Helper()
	var ids []string
	root := filepath.Join(data, "blobs")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			ids = append(ids, d.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

// plantBlob writes a blob file no record refers to, last modified at
// modified, and returns its id.
func plantBlob(t *testing.T, data string, modified time.Time) string {
	t.Helper()
	id := uuid.NewString()
	dir := filepath.Join(data, "blobs", id[0:2], id[2:4])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, id)
	if err := os.WriteFile(path, []byte("%PDF-1.4 orphan"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, modified, modified); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBlobsSweep: `onboard blobs sweep` removes the files no record refers
// to that are older than the grace period, and keeps every file a record
// refers to and every recent one.
func TestBlobsSweep(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	var created struct {
		ID string `json:"application_id"`
	}
	body := p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key,
		`{"primary_contact":{"email":"jo@example.com"},"country":"IE","company_number":"100001","company_name":"Emerald Software"}`)
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/applications/"+created.ID+"/submit", key, "")
	p.stop(t)
	referenced := blobFiles(t, data)
	if len(referenced) == 0 {
		t.Fatal("the submitted application stored no files")
	}

	// Every file is recent: nothing to remove, and the records are not read.
	r := mustRun(t, "blobs", "sweep", "--data-dir", data)
	if want := fmt.Sprintf("%d files, 0 removed (no record refers to them), %[1]d newer than 1h0m0s left alone\n", len(referenced)); r.stdout != want {
		t.Errorf("sweep of recent files printed %q, want %q", r.stdout, want)
	}

	old := plantBlob(t, data, time.Now().Add(-2*time.Hour))
	recent := plantBlob(t, data, time.Now().Add(-time.Minute))
	r = mustRun(t, "blobs", "sweep", "--data-dir", data)
	want := len(referenced) + 2
	wantOut := strconv.Itoa(want) + " files, 1 removed (no record refers to them), " + strconv.Itoa(len(referenced)+1) + " newer than 1h0m0s left alone\n"
	if got := r.stdout; got != wantOut {
		t.Errorf("sweep printed %q", got)
	}
	wantFiles := append(append([]string{}, referenced...), recent)
	sort.Strings(wantFiles)
	if diff := cmp.Diff(wantFiles, blobFiles(t, data)); diff != "" {
		t.Errorf("files after the sweep (-want +got):\n%s (removed orphan %s)", diff, old)
	}

	// With no grace, the recent orphan goes too; every referenced file stays.
	mustRun(t, "blobs", "sweep", "--data-dir", data, "--grace", "0s")
	if diff := cmp.Diff(referenced, blobFiles(t, data)); diff != "" {
		t.Errorf("files after a sweep without grace (-want +got):\n%s", diff)
	}
	if r := runBinary(t, "blobs", "sweep", "--data-dir", data, "--grace=-1s"); r.code == 0 || r.stderr != "onboard: --grace must not be negative, not -1s\n" {
		t.Errorf("a negative grace: exit %d, stderr %q", r.code, r.stderr)
	}
	// A mistyped data directory is refused, not created empty.
	missing := filepath.Join(t.TempDir(), "nowhere")
	if r := runBinary(t, "blobs", "sweep", "--data-dir", missing); r.code != 1 || !strings.Contains(r.stderr, "data directory "+missing+" does not exist") {
		t.Errorf("a missing data directory: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("blobs sweep created the missing data directory")
	}
}
