package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"

	"onboard/backup"
	"onboard/backup/backuptest"
	"onboard/config"
	"onboard/onboarding"
	"onboard/outfile"
)

// benchApps and benchFileSize size the benchmarks' data directory: 10,000
// applications with one 32 KiB document each (random bytes, which do not
// compress, like real PDFs and scans).
const (
	benchApps     = 10000
	benchFileSize = 32 << 10
)

// seedBench fills a new data directory with benchApps applications, each
// with one document, and returns it opened. The blob files are written
// without fsync, and the records from 16 goroutines: this is set-up, not
// what is measured.
func seedBench(b *testing.B) *app {
	b.Helper()
	cfg := config.Default()
	cfg.DataDir = filepath.Join(b.TempDir(), "data")
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.close(io.Discard) })
	ids := make(chan string)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for id := range ids {
				if err := a.store.CreateApplication(context.Background(), backuptest.AppWithFile(id), onboarding.Changes{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	content := make([]byte, benchFileSize)
	for range benchApps {
		id := uuid.NewString()
		dir := filepath.Join(cfg.DataDir, "blobs", id[0:2], id[2:4])
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		rand.Read(content)
		if err := os.WriteFile(filepath.Join(dir, id), content, 0o600); err != nil {
			b.Fatal(err)
		}
		ids <- id
	}
	close(ids)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return a
}

// backupFile makes a checked backup of a into a file and returns its path
// and manifest.
func backupFile(b *testing.B, a *app) (string, *backup.Manifest) {
	b.Helper()
	archive := filepath.Join(b.TempDir(), "backup.tar.gz")
	var m *backup.Manifest
	err := outfile.WriteAtomically(archive, outfile.KindBackup, func(w io.Writer) error {
		var err error
		m, err = backup.Checked(context.Background(), a.backup, w)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return archive, m
}

// countingDiscard counts what is written to it and drops it.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkBackup makes the archive of a data directory of benchApps
// applications, in the process that holds it, as serve does for the admin
// socket; the throughput (MB/s) is of the records and files backed up, and
// the archive's size is reported as archive-bytes.
func BenchmarkBackup(b *testing.B) {
	a := seedBench(b)
	_, m := backupFile(b, a)
	b.SetBytes(m.Counts.RecordBytes + m.Counts.BlobBytes)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		out := &countingDiscard{}
		if err := a.backup.Backup(ctx, out); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(out.n), "archive-bytes")
	}
}

// BenchmarkRestore restores the archive of a data directory of benchApps
// applications into a new directory; the throughput is of the records and
// files restored.
func BenchmarkRestore(b *testing.B) {
	archive, m := backupFile(b, seedBench(b))
	b.SetBytes(m.Counts.RecordBytes + m.Counts.BlobBytes)
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		f, err := os.Open(archive)
		if err != nil {
			b.Fatal(err)
		}
		_, _, err = backup.Restore(bufio.NewReaderSize(f, 1<<20), filepath.Join(dir, uuid.NewString()))
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
