package bucket_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
)

// benchSizes are the blob sizes of the benchmarks: a small form upload and
// a typical scanned document.
var benchSizes = []int{1 << 10, 1 << 20}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// BenchmarkPut puts blobs one after the other, each deleted again outside
// the timing.
func BenchmarkPut(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s, _ := openStore(b)
			content := randomBytes(n, 1)
			r := bytes.NewReader(content)
			ctx := context.Background()
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(content)
				id, _, err := s.Put(ctx, r, int64(n))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := s.Delete(id); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkOpenRead opens a blob and reads it whole, as a download does.
func BenchmarkOpenRead(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s, _ := openStore(b)
			id, _, err := s.Put(context.Background(), bytes.NewReader(randomBytes(n, 2)), int64(n))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				f, err := s.Open(id)
				if err != nil {
					b.Fatal(err)
				}
				if m, err := io.Copy(io.Discard, f); err != nil || m != int64(n) {
					b.Fatalf("read %d bytes, %v", m, err)
				}
				f.Close()
			}
		})
	}
}

// BenchmarkOpenScan opens a 1 MiB blob and reads it through ReadAt in 32
// KiB windows, as the PDF page counter scans an upload.
func BenchmarkOpenScan(b *testing.B) {
	const n = 1 << 20
	s, _ := openStore(b)
	id, _, err := s.Put(context.Background(), bytes.NewReader(randomBytes(n, 3)), n)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	b.SetBytes(n)
	for b.Loop() {
		f, err := s.Open(id)
		if err != nil {
			b.Fatal(err)
		}
		for off := int64(0); off < n; off += int64(len(buf)) {
			if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}
