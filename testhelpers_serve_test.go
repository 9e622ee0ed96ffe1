package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServeTestHelpers runs the binary: the sandbox (config.example.toml,
// whose acme-lite configuration loads the kyb-lite form file) serves the
// submit test helper; production has no such path.
func TestServeTestHelpers(t *testing.T) {
	t.Parallel()
	example, err := filepath.Abs("config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--config", example, "--data-dir", filepath.Join(t.TempDir(), "data"))
	key := p.waitForKey(t)
	for _, configID := range []string{"acme-standard", "acme-lite"} {
		body := strings.Replace(createBody, "{", `{"config_id":"`+configID+`",`, 1)
		var created struct {
			ApplicationID string `json:"application_id"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, body)), &created); err != nil {
			t.Fatal(err)
		}
		path := "/api/external/test-helpers/applications/" + created.ApplicationID + "/submit"
		app := decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodPost, path, key, ""))
		if app["status"] != "submitted" || app["config_id"] != configID {
			t.Errorf("%s: submitted application = %v %v", configID, app["config_id"], app["status"])
		}
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}

	dir := t.TempDir()
	config := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(config, []byte(productionConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	prod := startServe(t, "--config", config, "--data-dir", filepath.Join(dir, "data"))
	status, body := prod.call(t, http.MethodPost, "/api/external/test-helpers/applications/00000000-0000-4000-8000-000000000000/submit", "", "")
	if status != http.StatusNotFound {
		t.Errorf("production: status %d, want 404", status)
	}
	if diff := cmp.Diff(map[string]any{"error": "Not found"}, decodeJSON(t, body)); diff != "" {
		t.Errorf("production: body (-want +got):\n%s", diff)
	}
	if code := prod.stop(t); code != 0 {
		t.Errorf("production exit code %d, want 0", code)
	}
}
