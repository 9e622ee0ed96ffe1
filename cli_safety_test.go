package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/config"
)

// productionConfig is a minimal valid production configuration: production
// requires public_url and the live registry with its credentials (the
// registry is not called unless a test asks it).
const productionConfig = `environment = "production"
public_url = "https://onboarding.example.com"
[registry]
mode = "live"
companies_house_api_key = "k"
cro_email = "ops@example.com"
cro_api_key = "c"
`

// newDataDir returns a new, empty data directory: every command but serve
// and restore refuses one that does not exist.
func newDataDir(t *testing.T) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	return data
}

// wantRun asserts a run's exit code and its whole stdout and stderr.
func wantRun(t *testing.T, r result, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code = %d, want %d\nstderr:\n%s", r.code, code, r.stderr)
	}
	if diff := cmp.Diff(stdout, r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(stderr, r.stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestCLIVersionFlagAndHelpCommand(t *testing.T) {
	t.Parallel()
	version := mustRun(t, "version")
	wantRun(t, runBinary(t, "--version"), 0, version.stdout, "")

	help := mustRun(t, "--help")
	wantRun(t, runBinary(t, "help"), 0, help.stdout, "")
	for _, cmd := range [][]string{{"keys", "create"}, {"keys"}, {"webhooks", "rotate-secret"}, {"config", "check"}} {
		want := mustRun(t, append(cmd, "--help")...)
		wantRun(t, runBinary(t, append([]string{"help"}, cmd...)...), 0, want.stdout, "")
	}
	if !strings.Contains(help.stdout, "--version") || !strings.Contains(help.stdout, "help [<command> ...]") {
		t.Errorf("--help does not list --version and help:\n%s", help.stdout)
	}

	wantRun(t, runBinary(t, "help", "bogus"), 2, "", "onboard: help: no command \"bogus\" (onboard help lists the commands)\n")
	wantRun(t, runBinary(t, "help", "keys", "bogus"), 2, "", "onboard: help: no command \"keys bogus\" (onboard help lists the commands)\n")
	if r := runBinary(t, "help", "keys", "--json"); r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "onboard: unknown flag --json\n") {
		t.Errorf("help keys --json: exit %d, stdout %q, stderr %q; want 2 and an unknown flag", r.code, r.stdout, r.stderr)
	}
}

func TestCLIKeysCreateRefusals(t *testing.T) {
	t.Parallel()
	data := newDataDir(t)
	base := []string{"keys", "create", "--data-dir", data, "--org", "default"}
	for _, tt := range []struct {
		name   string
		args   []string
		stderr string // the first line
	}{
		{"empty --scope", []string{"--name", "ci", "--scope", ""}, "onboard: --scope: a scope must not be empty (leave --scope out for a key with every scope)"},
		{"empty --scope=", []string{"--name", "ci", "--scope="}, "onboard: --scope: a scope must not be empty (leave --scope out for a key with every scope)"},
		{"an empty scope in a list", []string{"--name", "ci", "--scope", "applications:read,"}, "onboard: --scope: a scope must not be empty (leave --scope out for a key with every scope)"},
		{"--expires-in 0", []string{"--name", "ci", "--expires-in", "0"}, "onboard: --expires-in must be a positive duration such as 720h (leave it out for a key that does not expire)"},
		{"--expires-in 0s", []string{"--name", "ci", "--expires-in", "0s"}, "onboard: --expires-in must be a positive duration such as 720h (leave it out for a key that does not expire)"},
		{"negative --expires-in", []string{"--name", "ci", "--expires-in=-5m"}, "onboard: --expires-in must be a positive duration such as 720h (leave it out for a key that does not expire)"},
		{"tab in the name", []string{"--name", "ci\tbot"}, "onboard: --name must not contain control characters such as tabs or line breaks"},
		{"line break in the name", []string{"--name", "ci\nRevoked API key x"}, "onboard: --name must not contain control characters such as tabs or line breaks"},
		{"escape sequence in the name", []string{"--name", "ci\x1b[31m"}, "onboard: --name must not contain control characters such as tabs or line breaks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, append(base, tt.args...)...)
			if first, _, _ := strings.Cut(r.stderr, "\n"); r.code != 2 || r.stdout != "" || first != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, and first %q", r.code, r.stdout, r.stderr, tt.stderr)
			}
		})
	}
	if keys := listKeys(t, "--data-dir", data); len(keys) != 0 {
		t.Errorf("refused keys were created: %+v", keys)
	}
	// A key with a lifetime and named scopes is still fine.
	key := createKey(t, append(base[2:], "--name", "reader", "--scope", "applications:read,rfi:read", "--expires-in", "1h")...)
	keys := listKeys(t, "--data-dir", data)
	if len(keys) != 1 || keys[0].ClientID != clientIDOf(key) || !cmp.Equal(keys[0].Scopes, []string{"applications:read", "rfi:read"}) || keys[0].ExpiresAt == nil {
		t.Errorf("keys = %+v; want the reader key with two scopes and an expiry", keys)
	}
}

func TestCLIKeysRevokeNeverPrintsTheSecret(t *testing.T) {
	t.Parallel()
	data := newDataDir(t)
	key := createKey(t, "--data-dir", data, "--org", "default", "--name", "ci")
	id := clientIDOf(key)
	_, secret, _ := strings.Cut(key, ".")
	note := "Note: KEY_ID is the key's client id (" + id + "); a full key is a secret, keep it out of command lines and shell history.\n"

	wantRun(t, runBinary(t, "keys", "revoke", "--data-dir", data, key), 0,
		"Revoked API key "+id+" (organization \"default\", name \"ci\").\n", note)
	revokedAt := listKeys(t, "--data-dir", data)[0].RevokedAt
	if revokedAt == nil {
		t.Fatal("the key was not revoked")
	}
	already := "API key " + id + " (organization \"default\", name \"ci\") was already revoked at " + revokedAt.UTC().Format(time.RFC3339) + "; nothing changed.\n"
	wantRun(t, runBinary(t, "keys", "revoke", "--data-dir", data, key), 0, already, note)
	wantRun(t, runBinary(t, "keys", "revoke", "--data-dir", data, id), 0, already, "")

	unknown := "svc_0000000000000000." + secret
	wantRun(t, runBinary(t, "keys", "revoke", "--data-dir", data, unknown), 1, "",
		"Note: KEY_ID is the key's client id (0000000000000000); a full key is a secret, keep it out of command lines and shell history.\n"+
			"onboard: API key '0000000000000000' not found\n")
	for _, args := range [][]string{{"keys", "list"}, {"keys", "list", "--json"}} {
		if r := mustRun(t, append(args, "--data-dir", data)...); strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("onboard %s printed the key's secret", strings.Join(args, " "))
		}
	}
}

func TestCLIRefusesAMissingDataDirectory(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "typo")
	want := "onboard: data directory " + data + " does not exist (check --data-dir or data_dir; onboard serve creates it on its first start)\n"
	for _, args := range [][]string{
		{"keys", "create", "--org", "default", "--name", "ci"},
		{"keys", "list"},
		{"keys", "revoke", "abc"},
		{"apps", "export", "--org", "default"},
		{"apps", "verify-log"},
		{"docs", "skip", "--app", "a", "--field", "f", "--reason", "r"},
		{"docs", "force", "--app", "a", "--field", "f", "--reason", "r"},
		{"webhooks", "add", "--org", "default", "--url", "http://127.0.0.1:1/x"},
		{"webhooks", "list"},
		{"webhooks", "disable", "we_x"},
		{"webhooks", "deliveries"},
		{"webhooks", "redeliver", "evt_x"},
		{"backup", "--out", filepath.Join(t.TempDir(), "b.tar.gz")},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			wantRun(t, runBinary(t, append(args, "--data-dir", data)...), 1, "", want)
		})
	}
	// The data directory given in the configuration file is refused the same way.
	config := writeFile(t, "onboard.toml", "data_dir = "+strconvQuote(data)+"\n")
	wantRun(t, runBinary(t, "keys", "list", "--config", config), 1, "", want)
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the refused data directory was created (stat: %v)", err)
	}

	file := writeFile(t, "plain", "")
	wantRun(t, runBinary(t, "keys", "list", "--data-dir", file), 1, "", "onboard: data directory "+file+" is not a directory\n")

	// A directory that holds something but no database is someone else's:
	// nothing is created in it.
	foreign := filepath.Dir(file)
	wantRun(t, runBinary(t, "keys", "list", "--data-dir", foreign), 1, "",
		"onboard: data directory "+foreign+" is not onboard's: it holds files but no database (badger/); check --data-dir or data_dir\n")
	if entries, err := os.ReadDir(foreign); err != nil || len(entries) != 1 {
		t.Errorf("the foreign directory now holds %d entries (%v), want its one file alone", len(entries), err)
	}
}

// strconvQuote quotes s as a TOML basic string.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestServeCreatesTheDataDirectoryWithLinksFollowingListen: serve still
// creates a new data directory, and without public_url the links it gives
// follow the address it listens on (port 0 included), not port 8080.
func TestServeCreatesTheDataDirectoryWithLinksFollowingListen(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "new", "data")
	p := startServeOn(t, "127.0.0.1:0", "", "--data-dir", data)
	key := p.waitForKey(t)
	if !strings.Contains(p.stderr.String(), "public_url="+p.base+" ") {
		t.Errorf("serve log does not show public_url=%s:\n%s", p.base, p.stderr.String())
	}
	var created struct {
		Link string `json:"link"`
	}
	if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, createBody)), &created); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Link, p.base+"/") {
		t.Errorf("link %q does not start with the address served, %s/", created.Link, p.base)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	const (
		chKey   = "ch-live-key-1234"
		croKey  = "cro-live-key-5678"
		smtpPW  = "s3cret-pass"
		signing = "c2lnbmluZy1rZXktb2YtYXQtbGVhc3QtMzItYnl0ZXMtbG9uZw=="
	)
	valid := writeFile(t, "onboard.toml", `environment = "production"
listen = "0.0.0.0:9000"
public_url = "https://onboarding.example.com"
[registry]
mode = "live"
companies_house_api_key = "`+chKey+`"
cro_email = "ops@example.com"
cro_api_key = "`+croKey+`"
[mail]
smtp_url = "smtp://mailer:`+smtpPW+`@mail.example.com:587"
from = "Onboarding <onboarding@example.com>"
[blobs]
signing_key = "`+signing+`"
`)
	r := runBinary(t, "config", "check", "--config", valid)
	if r.code != 0 || r.stderr != "Configuration "+valid+" is valid.\n" {
		t.Fatalf("config check: exit %d, stderr %q; want 0 and %q", r.code, r.stderr, "Configuration "+valid+" is valid.\n")
	}
	for _, secret := range []string{chKey, croKey, smtpPW, signing} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("config check printed the secret %q:\n%s", secret, r.stdout)
		}
	}
	var got config.Config
	if _, err := toml.Decode(r.stdout, &got); err != nil {
		t.Fatalf("config check output is not TOML: %v\n%s", err, r.stdout)
	}
	want := config.Default()
	want.Environment, want.Listen, want.PublicURL = "production", "0.0.0.0:9000", "https://onboarding.example.com"
	want.Registry.Mode, want.Registry.CompaniesHouseAPIKey, want.Registry.CROEmail, want.Registry.CROAPIKey = "live", "********", "ops@example.com", "********"
	want.Mail = config.Mail{SMTPURL: "smtp://mailer:********@mail.example.com:587", From: "Onboarding <onboarding@example.com>"}
	want.Blobs.SigningKey = "********"
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(config.Config{})); diff != "" {
		t.Errorf("effective configuration (-want +got):\n%s", diff)
	}

	// Without a file: the sandbox defaults, links following listen.
	r = runBinary(t, "config", "check")
	if r.code != 0 || r.stderr != "The built-in sandbox configuration is valid.\n" || !strings.Contains(r.stdout, "public_url = \"http://127.0.0.1:8080\"\n") {
		t.Errorf("config check without a file: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	listen := writeFile(t, "onboard.toml", "listen = \"0.0.0.0:9000\"\n")
	if r := mustRun(t, "config", "check", "--config", listen); !strings.Contains(r.stdout, "public_url = \"http://127.0.0.1:9000\"\n") {
		t.Errorf("config check with listen on port 9000 shows no public_url on port 9000:\n%s", r.stdout)
	}

	invalid := writeFile(t, "onboard.toml", `environment = "production"
data_dir = "/var/lib/onboard"
[registry]
timout = "5s"
[limits]
burst = 0
[webhooks]
timeout = "soon"
`)
	wantRun(t, runBinary(t, "config", "check", "--config", invalid), 1, "", "onboard: invalid configuration "+invalid+":\n"+
		"unknown key registry.timout (config.example.toml lists every key)\n"+
		"public_url is required in production: applicant links must use the address applicants reach\n"+
		`registry.mode "fixtures" answers from the sandbox's recorded companies: production needs registry.mode = "live" with its credentials`+"\n"+
		"limits.burst must be at least 1\n"+
		"webhooks.timeout is not a duration: use a form such as 10s, 5m or 2h\n")
	if _, err := os.Stat("/var/lib/onboard"); err == nil {
		t.Log("(/var/lib/onboard exists on this machine; config check does not touch it)")
	}

	notTOML := writeFile(t, "onboard.toml", "environment = \n")
	if r := runBinary(t, "config", "check", "--config", notTOML); r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "onboard: configuration "+notTOML+": toml:") {
		t.Errorf("config check of a file that is not TOML: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	bash := mustRun(t, "completion", "bash")
	if bash.stderr != "" {
		t.Errorf("completion bash wrote on stderr: %q", bash.stderr)
	}
	script := filepath.Join(t.TempDir(), "onboard.bash")
	if err := os.WriteFile(script, []byte(bash.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words []string // the last one is being completed
		want  string
	}{
		{[]string{""}, "serve keys apps docs webhooks registry backup restore blobs bench config version help completion"},
		{[]string{"ke"}, "keys"},
		{[]string{"keys", ""}, "create list revoke"},
		{[]string{"keys", "create", "--s"}, "--scope"},
		{[]string{"--data-dir", "keys", "ke"}, "keys"}, // keys is --data-dir's value
		{[]string{"serve", "--log-format", ""}, "text json"},
		{[]string{"apps", "export", "--format", "c"}, "csv"},
		{[]string{"registry", "record", "--country", ""}, "GB IE"},
		{[]string{"completion", "--"}, "--help --config --data-dir --version"},
		{[]string{"webhooks", "rotate"}, "rotate-secret"},
		{[]string{"keys", "create", "--org", ""}, ""},
	} {
		t.Run(strings.Join(tt.words, " "), func(t *testing.T) {
			words := append([]string{"onboard"}, tt.words...)
			quoted := make([]string, len(words))
			for i, w := range words {
				quoted[i] = shQuote(w)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c",
				`source "$1" && COMP_WORDS=(`+strings.Join(quoted, " ")+`) && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _onboard && echo "${COMPREPLY[*]}"`, "bash", script)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			if got := strings.TrimSuffix(string(out), "\n"); got != tt.want {
				t.Errorf("completions = %q, want %q", got, tt.want)
			}
		})
	}

	zsh := mustRun(t, "completion", "zsh").stdout
	for _, want := range []string{
		"#compdef onboard\n",
		"            'onboard keys create --expires-in'|", // not a value list: no line
		"        'onboard keys')\n            if [[ $PREFIX == -* ]]; then items=('--help:Show context-sensitive help.' '--config:Configuration file (TOML).' '--data-dir:Data directory; overrides data_dir of the configuration.' '--version:Print the version and exit.'); else items=('create:Create an API key and print it once.' 'list:List API keys.' 'revoke:Revoke an API key; it stops working at once.'); fi ;;\n",
		"            'onboard serve --log-format') compadd -- 'text' 'json' ;;\n",
		"    compdef _onboard onboard\n",
	} {
		if strings.HasSuffix(want, "|") {
			if strings.Contains(zsh, want) {
				t.Errorf("completion zsh has %q", want)
			}
			continue
		}
		if !strings.Contains(zsh, want) {
			t.Errorf("completion zsh lacks %q:\n%s", want, zsh)
		}
	}
	fish := mustRun(t, "completion", "fish").stdout
	for _, want := range []string{
		"function __onboard_command\n",
		"complete -c onboard -n '__onboard_at \\'onboard keys\\'' -a 'create' -d 'Create an API key and print it once.'\n",
		"complete -c onboard -n '__onboard_at \\'onboard serve\\'' -l log-format -d 'Format of the log lines on stderr: text or json.' -r -a 'text json'\n",
		"complete -c onboard -n '__onboard_at \\'onboard\\'' -l config -d 'Configuration file (TOML).' -r -F\n",
	} {
		if !strings.Contains(fish, want) {
			t.Errorf("completion fish lacks %q:\n%s", want, fish)
		}
	}
	if r := runBinary(t, "completion", "tcsh"); r.code != 2 || !strings.HasPrefix(r.stderr, "onboard: <shell> must be one of \"bash\",\"zsh\",\"fish\" but got \"tcsh\"") {
		t.Errorf("completion tcsh: exit %d, stderr %q; want 2 naming the shells", r.code, r.stderr)
	}
}

// TestCLIIDArgumentsAndLongValues: an empty id argument, or one with
// control characters (which a message would echo to the terminal), is a
// usage error before anything runs, and a value far too long gets the
// domain's message: the same answers whether the command goes through the
// running server's admin socket or opens the store itself.
func TestCLIIDArgumentsAndLongValues(t *testing.T) {
	t.Parallel()
	usage := []struct {
		args  []string
		first string
	}{
		{[]string{"keys", "revoke", ""}, "onboard: KEY_ID must not be empty"},
		{[]string{"keys", "revoke", "\x1b[31mred\nX"}, "onboard: KEY_ID must not contain control characters"},
		{[]string{"webhooks", "remove", " "}, "onboard: ID must not be empty"},
		{[]string{"webhooks", "enable", ""}, "onboard: ID must not be empty"},
		{[]string{"webhooks", "disable", ""}, "onboard: ID must not be empty"},
		{[]string{"webhooks", "rotate-secret", ""}, "onboard: ID must not be empty"},
		{[]string{"webhooks", "test", "we_\x07"}, "onboard: ID must not contain control characters"},
		{[]string{"webhooks", "redeliver", ""}, "onboard: EVENT_ID must not be empty"},
	}
	check := func(t *testing.T, data string) {
		for _, tt := range usage {
			r := runBinary(t, append([]string{"--data-dir", data}, tt.args...)...)
			if first, _, _ := strings.Cut(r.stderr, "\n"); r.code != 2 || r.stdout != "" || first != tt.first {
				t.Errorf("onboard %q: exit %d, stdout %q, stderr %q; want 2, nothing, and first %q", tt.args, r.code, r.stdout, r.stderr, tt.first)
			}
		}
		long := strings.Repeat("a", 100_000)
		wantFailure(t, runBinary(t, "--data-dir", data, "keys", "create", "--org", "default", "--name", long),
			"onboard: a key name is at most 100 characters\n")
	}
	t.Run("store", func(t *testing.T) { check(t, newDataDir(t)) })
	t.Run("admin socket", func(t *testing.T) {
		data := newDataDir(t)
		startServe(t, "--data-dir", data)
		check(t, data)
	})
}

// shQuote quotes s for bash in single quotes, each quote inside closing,
// escaping and reopening them.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
