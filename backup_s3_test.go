package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"onboard/storage/postgres/pgtest"
)

// TestBackupMovesToPostgresAndS3 is TestBackupMovesToPostgres with the
// files in a bucket: a backup of the embedded store restores into
// PostgreSQL and S3, where the API key, the application and the download
// links given out before all still work (the signing key moved with the
// records); a backup made there, by a command with no server and no data
// directory, restores into a new embedded data directory that serves them
// too.
func TestBackupMovesToPostgresAndS3(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badger := filepath.Join(dir, "badger-data")
	p := startServe(t, "--data-dir", badger)
	key := p.waitForKey(t)
	id := decodeJSON(t, p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody))["application_id"].(string)
	p.waitForLog(t, regexp.MustCompile(`msg="registry documents fetched" .*application_id=`+id), 30*time.Second)
	app := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))
	link := app["registry_documents"].([]any)[0].(map[string]any)["download_url"].(string)
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d", code)
	}
	first := filepath.Join(dir, "from-badger.tar.gz")
	mustRun(t, "--data-dir", badger, "backup", "--out", first)

	blobs, env := s3Config(t)
	shared := writeFile(t, "shared.toml", fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n\n", pgtest.URL(t))+blobs)
	nowhere := filepath.Join(dir, "nowhere")
	restored := runBinaryEnv(t, env, "--config", shared, "--data-dir", nowhere, "restore", "--in", first)
	if restored.code != 0 || !strings.Contains(restored.stderr, "into PostgreSQL") {
		t.Fatalf("restore into PostgreSQL and S3: exit %d\n%s", restored.code, restored.stderr)
	}
	q := startServeEnv(t, "127.0.0.1:0", "http://127.0.0.1:1", env, "--config", shared, "--data-dir", filepath.Join(dir, "shared-data"))
	if got := decodeJSON(t, q.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))["id"]; got != id {
		t.Errorf("application after the move = %v, want %s", got, id)
	}
	wantDownload(t, q, link, "%PDF-")
	if code := q.stop(t); code != 0 {
		t.Fatalf("serve on the shared backend: exit code %d", code)
	}

	second := filepath.Join(dir, "from-shared.tar.gz")
	if r := runBinaryEnv(t, env, "--config", shared, "--data-dir", nowhere, "backup", "--out", second); r.code != 0 {
		t.Fatalf("backup of PostgreSQL and S3: exit %d\n%s", r.code, r.stderr)
	}
	back := filepath.Join(dir, "badger-again")
	mustRun(t, "--data-dir", back, "restore", "--in", second)
	r := startServe(t, "--data-dir", back)
	if got := decodeJSON(t, r.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))["id"]; got != id {
		t.Errorf("application after the move back = %v, want %s", got, id)
	}
	wantDownload(t, r, link, "%PDF-")
	if code := r.stop(t); code != 0 {
		t.Fatalf("serve after the move back: exit code %d", code)
	}
}
