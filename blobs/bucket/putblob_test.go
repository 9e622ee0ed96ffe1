package bucket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
	"onboard/onboarding"
)

// TestPutBlob stores blobs under ids of the caller's (a restore's), one
// sent in one request and one in parts, and refuses content of another
// size than announced or an id that is not a blob id, storing nothing.
func TestPutBlob(t *testing.T) {
	o := buckettest.Options(t)
	s, err := bucket.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	small, large := "%PDF-1.4 small\n", strings.Repeat("0123456789abcdef", (5<<20)/16+1000)
	for id, content := range map[string]string{
		"0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90": small,
		"1d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90": large,
		"2d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90": "",
	} {
		if err := s.PutBlob(ctx, id, strings.NewReader(content), int64(len(content))); err != nil {
			t.Fatalf("PutBlob(%s): %v", id, err)
		}
		f, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		f.Close()
		if err != nil || !bytes.Equal(got, []byte(content)) {
			t.Errorf("blob %s: %d bytes, %v; want the %d put", id, len(got), err, len(content))
		}
	}
	if err := s.PutBlob(ctx, "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", strings.NewReader("replaced"), 8); err != nil {
		t.Fatalf("PutBlob over a blob: %v", err)
	}

	refused := []struct {
		id      string
		content string
		size    int64
		want    string
	}{
		{"3d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", small, int64(len(small)) + 1, "s3: put blob 3d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90: 15 bytes read, 16 expected"},
		{"4d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", small, int64(len(small)) - 1, "s3: put blob 4d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90: content over 14 bytes"},
		{"6d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", large, int64(len(large)) - 1, "s3: put: content over 5258879 bytes: file is larger than the limit"},
		{"5d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", large, int64(len(large)) + 1, "s3: put blob 5d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90: 5258880 bytes read, 5258881 expected"},
		{"../etc/passwd", small, int64(len(small)), `s3: put blob: "../etc/passwd" is not a blob id`},
	}
	for _, tt := range refused {
		err := s.PutBlob(ctx, tt.id, strings.NewReader(tt.content), tt.size)
		if err == nil || err.Error() != tt.want {
			t.Errorf("PutBlob(%s, %d of %d bytes): %v, want %q", tt.id, len(tt.content), tt.size, err, tt.want)
		}
		if _, err := s.Open(tt.id); !errors.Is(err, onboarding.ErrNotFound) {
			t.Errorf("blob %s after the refusal: %v, want none", tt.id, err)
		}
	}
	want := []string{o.Prefix + "0d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", o.Prefix + "1d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90", o.Prefix + "2d4f1b53-3c39-4f59-9a0e-6f1c2d7a8b90"}
	if diff := cmp.Diff(want, buckettest.Keys(t, o)); diff != "" {
		t.Errorf("the bucket's objects (-want +got):\n%s", diff)
	}
}
