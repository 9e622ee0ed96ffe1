package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"onboard/storage/postgres/pgtest"
)

// TestBackupMovesToPostgres moves a served data directory to PostgreSQL
// as the operations guide says, and back: a backup of the embedded store
// restored with a configuration of storage.backend = "postgres" (files
// in the new data directory's blobs/) serves every read as the original
// did; a backup taken through that server's admin socket restores into a
// new embedded data directory that does too. A second restore into the
// database, which now holds records, is refused.
func TestBackupMovesToPostgres(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	data := filepath.Join(work, "data")
	p := startServe(t, "--data-dir", data)
	key := p.waitForKey(t)
	paths := seedData(t, p, key, data)
	want := readState(t, p, key, []string{"--data-dir", data}, paths, eventIDs(t, p, key))
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve: exit code %d", code)
	}
	embedded := filepath.Join(work, "embedded.tar.gz")
	mustRun(t, "backup", "--data-dir", data, "--out", embedded)

	config := writeFile(t, "postgres.toml", fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n", pgtest.URL(t)))
	shared := filepath.Join(work, "shared")
	r := mustRun(t, "restore", "--config", config, "--data-dir", shared, "--in", embedded)
	if !regexp.MustCompile(`^Restored \S+ \(taken .+\) into PostgreSQL: \d+ records, \d+ files \(.+\), 2 secrets\.\n$`).MatchString(r.stderr) {
		t.Errorf("restore into PostgreSQL: stderr %q, want a summary", r.stderr)
	}
	onShared := []string{"--config", config, "--data-dir", shared}
	p2 := startServe(t, onShared...)
	checkState(t, p2, key, onShared, want)

	moved := filepath.Join(work, "shared.tar.gz")
	mustRun(t, append([]string{"backup", "--out", moved}, onShared...)...)
	wantFailure(t, runBinary(t, append([]string{"restore", "--in", embedded}, onShared...)...),
		"onboard: restore: the database already holds records; restore into an empty database; nothing was restored\n")
	if code := p2.stop(t); code != 0 {
		t.Errorf("serve on PostgreSQL: exit code %d", code)
	}

	back := filepath.Join(work, "back")
	mustRun(t, "restore", "--in", moved, "--data-dir", back)
	p3 := startServe(t, "--data-dir", back)
	checkState(t, p3, key, []string{"--data-dir", back}, want)
	if code := p3.stop(t); code != 0 {
		t.Errorf("serve on the restored directory: exit code %d", code)
	}
}
