package main

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFile writes content to name in a new temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigCheckListsEveryProblem runs config check on a file that serve
// refuses for each of its problems, and that config check used to pass or
// stop at the first wrong type.
func TestConfigCheckListsEveryProblem(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "onboard.toml", `listen = "[::1]:x"
public_url = "https://user:secret@example.com"
[mail]
smtp_url = "smtp://user:pw@127.0.0.1:2525?auth=x"
[limits]
max_json_bytes = "big"
[metrics]
listen = "127.0.0.1:99999"
[[organizations]]
id = "acme"
  [[organizations.configs]]
  id = "acme"
  form = "nonexistent.toml"
  countries = ["GB"]
`)
	wantRun(t, runBinary(t, "config", "check", "--config", path), 1, "", "onboard: invalid configuration "+path+":\n"+
		"limits.max_json_bytes must be an integer, not a string (line 6)\n"+
		`listen "[::1]:x": the port must be a number from 0 to 65535 (not a service name such as "http")`+"\n"+
		"public_url must not contain a user name or password: applicant links and e-mails would show them\n"+
		"mail.smtp_url must not have a path, query or fragment\n"+
		`metrics.listen "127.0.0.1:99999": the port must be a number from 0 to 65535 (not a service name such as "http")`+"\n"+
		`organization "acme": configuration "acme": form "nonexistent.toml": open `+filepath.Join(filepath.Dir(path), "nonexistent.toml")+": no such file or directory\n")
}
