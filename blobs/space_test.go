package blobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"onboard/blobs"
	"onboard/onboarding"
)

// spaceFor admits writes while fewer than left bytes were asked for.
type spaceFor struct{ left int64 }

func (s *spaceFor) AdmitWrite(n int64) error {
	if n > s.left {
		return fmt.Errorf("admit %d bytes: %w", n, onboarding.ErrInsufficientStorage)
	}
	s.left -= n
	return nil
}

// TestPutAsksSpace: a store with a space guard asks it before each chunk,
// and a refusal fails the put with the guard's error, leaving nothing.
func TestPutAsksSpace(t *testing.T) {
	s, dir := openStore(t)
	s.WithSpace(&spaceFor{left: 100 << 10})
	if _, _, err := s.Put(context.Background(), bytes.NewReader(randomBytes(64<<10, 1)), 1<<20); err != nil {
		t.Fatalf("put within the space: %v", err)
	}
	_, _, err := s.Put(context.Background(), bytes.NewReader(randomBytes(64<<10, 2)), 1<<20)
	if !errors.Is(err, onboarding.ErrInsufficientStorage) {
		t.Fatalf("put past the space: %v, want ErrInsufficientStorage", err)
	}
	if e := onboarding.AsError(err); e == nil || e.Kind != onboarding.KindUnavailable || !e.Retryable {
		t.Errorf("AsError = %+v, want a retryable KindUnavailable", e)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Errorf("tmp/ holds %d files after the refused put", len(left))
	}
}

// TestPutOnFullDisk: a put that finds its filesystem full (ENOSPC) fails
// with ErrInsufficientStorage, the API's 503, not an unexpected error.
func TestPutOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot mount a tmpfs: %v", err)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	s, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Put(context.Background(), bytes.NewReader(randomBytes(256<<10, 3)), 1<<20)
	if !errors.Is(err, onboarding.ErrInsufficientStorage) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("put on a full disk: %v, want ErrInsufficientStorage wrapping ENOSPC", err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "blobs", "tmp")); len(left) != 0 {
		t.Errorf("tmp/ holds %d files after the failed put", len(left))
	}
}
