package bucket_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs/bucket"
	"onboard/blobs/bucket/buckettest"
)

// requestLog notes the requests a store sends, in words.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) note(r *http.Request) {
	q, _ := url.ParseQuery(r.URL.RawQuery)
	what := r.Method
	switch {
	case q.Has("uploads"):
		what += " start upload"
	case q.Has("partNumber"):
		what += " part " + q.Get("partNumber")
	case q.Has("uploadId"):
		what += " end upload"
	case r.Header.Get("Range") != "":
		what += " " + r.Header.Get("Range")
	}
	l.mu.Lock()
	l.reqs = append(l.reqs, what)
	l.mu.Unlock()
}

// take returns the requests noted since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reqs
	l.reqs = nil
	return r
}

// TestRequests: each way of putting and reading a blob sends the requests
// the package's documentation promises, and no more.
func TestRequests(t *testing.T) {
	const part = 5 << 20
	var log requestLog
	s, err := bucket.NewCounting(buckettest.Options(t), log.note)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	small := randomBytes(1<<20, 1)
	large := randomBytes(2*part+7, 2)
	smallID, _, err := s.Put(ctx, bytes.NewReader(small), int64(len(small)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PUT"}, log.take()); diff != "" {
		t.Errorf("Put of 1 MiB (-want +got):\n%s", diff)
	}
	if _, _, err := s.Put(ctx, bytes.NewReader(large), int64(len(large))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"POST start upload", "PUT part 1", "PUT part 2", "PUT part 3", "POST end upload"}, log.take()); diff != "" {
		t.Errorf("Put of 3 parts (-want +got):\n%s", diff)
	}
	if _, _, err := s.Put(ctx, bytes.NewReader(large), part+10); err == nil {
		t.Fatal("Put over the limit succeeded")
	}
	if diff := cmp.Diff([]string{"POST start upload", "PUT part 1", "DELETE end upload"}, log.take()); diff != "" {
		t.Errorf("Put over the limit (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		read func(f io.ReadSeeker, ra io.ReaderAt) error
		want []string
	}{
		{"whole", func(f io.ReadSeeker, _ io.ReaderAt) error {
			_, err := io.Copy(io.Discard, f)
			return err
		}, []string{"GET"}},
		{"ReadAt in order", func(_ io.ReadSeeker, ra io.ReaderAt) error {
			buf := make([]byte, 32<<10)
			for off := int64(0); off < int64(len(small)); off += int64(len(buf)) {
				if _, err := ra.ReadAt(buf, off); err != nil && err != io.EOF {
					return err
				}
			}
			return nil
		}, []string{"GET"}},
		{"a little ahead", func(f io.ReadSeeker, _ io.ReaderAt) error {
			if _, err := f.Read(make([]byte, 100)); err != nil {
				return err
			}
			if _, err := f.Seek(60<<10, io.SeekCurrent); err != nil {
				return err
			}
			_, err := io.Copy(io.Discard, f)
			return err
		}, []string{"GET"}},
		{"tail, then head again", func(f io.ReadSeeker, ra io.ReaderAt) error {
			if _, err := ra.ReadAt(make([]byte, 1024), int64(len(small))-1024); err != nil {
				return err
			}
			_, err := io.Copy(io.Discard, f)
			return err
		}, []string{"GET", "GET bytes=1047552-", "GET bytes=0-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log.take()
			f, err := s.Open(smallID)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := tt.read(f, f); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, log.take()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("ServeContent range", func(t *testing.T) {
		log.take()
		f, err := s.Open(smallID)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Range", "bytes=500000-500999")
		rec := httptest.NewRecorder()
		http.ServeContent(rec, req, "", time.Time{}, f)
		if rec.Code != http.StatusPartialContent || !bytes.Equal(rec.Body.Bytes(), small[500_000:501_000]) {
			t.Fatalf("status %d, %d bytes", rec.Code, rec.Body.Len())
		}
		if diff := cmp.Diff([]string{"GET", "GET bytes=500000-"}, log.take()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	})
}
