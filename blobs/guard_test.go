package blobs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onboard/blobs"
	"onboard/onboarding"
)

// putBlob stores content and returns its id.
func putBlob(t *testing.T, s onboarding.Blobs, content string) string {
	t.Helper()
	id, _, err := s.Put(context.Background(), strings.NewReader(content), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// exists reports whether blob id can be opened.
func exists(t *testing.T, s onboarding.Blobs, id string) bool {
	t.Helper()
	f, err := s.Open(id)
	if errors.Is(err, onboarding.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return true
}

// TestGuardHoldsOffDeletes walks a Guard through two overlapping holds: a
// Delete during either keeps the file until the last hold ends, and one
// with no hold removes it at once.
func TestGuardHoldsOffDeletes(t *testing.T) {
	store, _ := openStore(t)
	g := blobs.NewGuard(store)
	a, b, c := putBlob(t, g, "a"), putBlob(t, g, "b"), putBlob(t, g, "c")

	release1 := g.Hold()
	if err := g.Delete(a); err != nil {
		t.Fatal(err)
	}
	release2 := g.Hold()
	if err := g.Delete(b); err != nil {
		t.Fatal(err)
	}
	if err := release1(); err != nil {
		t.Fatal(err)
	}
	if !exists(t, g, a) || !exists(t, g, b) {
		t.Fatal("a blob deleted while a hold is on is gone")
	}
	if err := release1(); err != nil { // a second call does nothing
		t.Fatal(err)
	}
	if !exists(t, g, a) {
		t.Fatal("releasing the first hold twice ended the second")
	}
	if err := release2(); err != nil {
		t.Fatal(err)
	}
	if exists(t, g, a) || exists(t, g, b) {
		t.Error("the blobs deleted during the holds are still there after the last one")
	}
	if err := g.Delete(c); err != nil {
		t.Fatal(err)
	}
	if exists(t, g, c) {
		t.Error("a Delete with no hold left the blob")
	}
}

// TestGuardReleaseReportsFailures checks that a deferred deletion that
// fails is reported by the release that runs it.
func TestGuardReleaseReportsFailures(t *testing.T) {
	store, dir := openStore(t)
	g := blobs.NewGuard(store)
	id := putBlob(t, g, "x")
	// A non-empty directory where the file was cannot be removed.
	p := filepath.Join(dir, id[0:2], id[2:4], id)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(p, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	release := g.Hold()
	if err := g.Delete(id); err != nil {
		t.Fatal(err)
	}
	err := release()
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) || !strings.HasPrefix(err.Error(), "blobs: delete "+id+": ") {
		t.Errorf("release: %v, want the failure of deleting %s", err, id)
	}
}
