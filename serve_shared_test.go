package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs/bucket/buckettest"
	"onboard/storage/postgres/pgtest"
)

// sharedRun is one configuration of the shared backends a black-box run
// serves with.
type sharedRun struct {
	config   string   // the configuration file's text, data_dir aside
	env      []string // serve's extra environment
	postgres bool     // records in PostgreSQL
	s3       bool     // files in the bucket
}

// TestServeSharedBackends runs the binary on PostgreSQL, on an S3 bucket
// and on both, and expects what the embedded backend (run first, as the
// reference) answers: create, get,
// list, PATCH, uploads (the submit helper's) and downloads (registry
// documents and uploads, ranged too), then a restart that finds it all,
// links given out before it included.
func TestServeSharedBackends(t *testing.T) {
	t.Parallel()
	t.Run("badger", func(t *testing.T) {
		t.Parallel()
		runShared(t, sharedRun{config: "[storage]\nbackend = \"badger\"\n"})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		// The URL comes from the environment, as ONBOARD_POSTGRES_URL may.
		runShared(t, sharedRun{
			config: "[storage]\nbackend = \"postgres\"\nmax_connections = 4\n",
			env:    []string{"ONBOARD_POSTGRES_URL=" + pgtest.URL(t)}, postgres: true,
		})
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		blobs, env := s3Config(t)
		runShared(t, sharedRun{config: blobs, env: env, s3: true})
	})
	t.Run("postgres and s3", func(t *testing.T) {
		t.Parallel()
		blobs, env := s3Config(t)
		runShared(t, sharedRun{
			config: fmt.Sprintf("[storage]\nbackend = \"postgres\"\npostgres_url = %q\n\n", pgtest.URL(t)) + blobs,
			env:    env, postgres: true, s3: true,
		})
	})
}

// s3Config is the [blobs] table of the test bucket under a prefix of its
// own (emptied when t ends), and the environment giving its keys, as
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY may.
func s3Config(t *testing.T) (string, []string) {
	t.Helper()
	o := buckettest.Options(t)
	text := fmt.Sprintf("[blobs]\nbackend = \"s3\"\ns3_endpoint = %q\ns3_bucket = %q\ns3_region = %q\ns3_prefix = %q\ns3_path_style = %v\n",
		o.Endpoint, o.Bucket, o.Region, o.Prefix, o.PathStyle)
	return text, []string{"AWS_ACCESS_KEY_ID=" + o.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + o.SecretAccessKey}
}

// runShared serves run, drives the API through it, restarts it and checks
// what the data directory holds.
func runShared(t *testing.T, run sharedRun) {
	dir := t.TempDir()
	config := writeFile(t, "onboard.toml", run.config)
	data := filepath.Join(dir, "data")
	p := startServeEnv(t, "127.0.0.1:0", "http://127.0.0.1:1", run.env, "--config", config, "--data-dir", data)
	key := p.waitForKey(t)
	// The embedded store's disk is a readiness check; PostgreSQL's is not
	// onboard's to watch.
	ready := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/readyz", "", ""))
	if _, disk := ready["checks"].(map[string]any)["disk"]; disk == run.postgres {
		t.Errorf("readyz checks %v: want a disk check only on the embedded store", ready["checks"])
	}

	created := decodeJSON(t, p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody))
	id, _ := created["application_id"].(string)
	// The registry documents job stores Northwind's three filings.
	p.waitForLog(t, regexp.MustCompile(`msg="registry documents fetched" .*application_id=`+id), 30*time.Second)
	app := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))
	docs, _ := app["registry_documents"].([]any)
	if app["registry_documents_status"] != "complete" || len(docs) != 3 {
		t.Fatalf("registry documents = %v %v, want complete with 3", app["registry_documents_status"], docs)
	}
	registryLink := docs[0].(map[string]any)["download_url"].(string)
	wantDownload(t, p, registryLink, "%PDF-")

	list := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications?limit=10", key, ""))
	var listed []string
	for _, a := range list["applications"].([]any) {
		listed = append(listed, a.(map[string]any)["id"].(string))
	}
	if diff := cmp.Diff([]string{id}, listed); diff != "" {
		t.Errorf("listed applications (-want +got):\n%s", diff)
	}

	p.wantStatus(t, http.StatusOK, http.MethodPatch, "/api/external/applications/"+id, key, `{"fields":{"website":"https://northwind.example"}}`)
	patched := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))
	if website := patched["data"].(map[string]any)["fields"].(map[string]any)["website"]; website != "https://northwind.example" {
		t.Errorf("website after PATCH = %v", website)
	}

	// The submit helper uploads a sample file for every required document.
	submitted := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/applications/"+id+"/submit", key, ""))
	if submitted["status"] != "submitted" {
		t.Fatalf("status after submit = %v", submitted["status"])
	}
	uploadLink := firstUploadLink(t, submitted)
	wantDownload(t, p, uploadLink, "")
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d\nstderr:\n%s", code, p.stderr.String())
	}

	// A restart finds everything. On PostgreSQL and S3, with a new data
	// directory: the records, secrets and files are shared, so the API key
	// and the links given out before still work.
	if run.postgres && run.s3 {
		data = filepath.Join(dir, "data2")
	}
	p = startServeEnv(t, "127.0.0.1:0", "http://127.0.0.1:1", run.env, "--config", config, "--data-dir", data)
	again := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))
	if again["status"] != "submitted" {
		t.Errorf("status after restart = %v, want submitted", again["status"])
	}
	wantDownload(t, p, registryLink, "%PDF-")
	wantDownload(t, p, uploadLink, "")
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d after restart\nstderr:\n%s", code, p.stderr.String())
	}
	if out := p.stdout.String(); out != "" {
		t.Errorf("the restart printed %q; the sandbox key is printed once, on the first start", out)
	}

	// The data directory holds only what is local to the instance.
	var local []string
	for _, name := range []string{"badger", "secrets", "blobs"} {
		if _, err := os.Stat(filepath.Join(data, name)); err == nil {
			local = append(local, name)
		}
	}
	var want []string
	if !run.postgres {
		want = append(want, "badger", "secrets")
	}
	if !run.s3 {
		want = append(want, "blobs")
	}
	if diff := cmp.Diff(want, local); diff != "" {
		t.Errorf("data directory holds (-want +got):\n%s", diff)
	}
}

// firstUploadLink is the download_url of the first document an
// application's applicant uploaded.
func firstUploadLink(t *testing.T, app map[string]any) string {
	t.Helper()
	data, _ := app["data"].(map[string]any)
	docs, _ := data["documents"].(map[string]any)
	for _, d := range docs {
		if link, _ := d.(map[string]any)["download_url"].(string); link != "" {
			return link
		}
	}
	t.Fatalf("no uploaded document with a download_url: %v", docs)
	return ""
}

// wantDownload downloads link from p whole and its first five bytes as a
// range, and checks both start with prefix (when given).
func wantDownload(t *testing.T, p *serveProc, link, prefix string) {
	t.Helper()
	path := strings.TrimPrefix(link, "http://127.0.0.1:1")
	status, whole := p.call(t, http.MethodGet, path, "", "")
	if status != http.StatusOK || len(whole) == 0 || !strings.HasPrefix(whole, prefix) {
		t.Fatalf("download %s = %d %.20q, want 200 starting %q", path, status, whole, prefix)
	}
	req, err := http.NewRequest(http.MethodGet, p.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Range", "bytes=0-4")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	part, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusPartialContent || string(part) != whole[:min(5, len(whole))] {
		t.Errorf("ranged download %s = %d %q, want 206 %q", path, resp.StatusCode, part, whole[:min(5, len(whole))])
	}
}
