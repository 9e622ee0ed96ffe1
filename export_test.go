package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/blobs"
	"onboard/onboarding"
	"onboard/storage"
)

// exportConfig is the configuration of the export tests: acme has the
// standard form (tax_id and bank_account_iban sensitive) and the form
// exportForm (internal_score sensitive, tax_id not); other is a second
// organization whose applications an export of acme must never show.
const exportConfig = `environment = "sandbox"
public_url = "http://127.0.0.1:1"

[limits]
rate_per_second = 100000
burst = 100000

[[organizations]]
id = "acme"
default_config = "acme-standard"

  [[organizations.configs]]
  id = "acme-standard"
  form = "standard"
  countries = ["GB", "IE"]
  registry_documents = true

  [[organizations.configs]]
  id = "acme-extra"
  form = "extra.toml"
  countries = ["GB", "FR"]

[[organizations]]
id = "other"
default_config = "other-standard"

  [[organizations.configs]]
  id = "other-standard"
  form = "standard"
  countries = ["GB"]
`

const exportForm = `id = "extra"

[[fields]]
id = "company_name"
label = "Company name"
type = "text"
category = "company"
required = true

[[fields]]
id = "company_number"
label = "Company number"
type = "text"
category = "company"

[[fields]]
id = "vat_number"
label = "VAT number"
type = "text"
category = "company"

[[fields]]
id = "tax_id"
label = "Tax id"
type = "text"
category = "business"

[[fields]]
id = "internal_score"
label = "Internal score"
type = "text"
category = "business"
sensitive = true

[[fields]]
id = "industry"
label = "Industry"
type = "select"
category = "business"
options = [{ value = "software", label = "Software" }]

[[fields]]
id = "certificate_of_incorporation"
label = "Certificate of incorporation"
type = "document"
category = "documents"
required = true

[[fields]]
id = "confirm_accuracy"
label = "I confirm"
type = "boolean"
category = "confirmation"
required = true
confirmation = true
`

// exportHeader is the CSV header of acme: the fixed columns, the standard
// form's non-sensitive company-level fields, then exportForm's new ones
// (tax_id is sensitive in the first form, not in the second).
var exportHeader = []string{
	"id", "config_id", "status", "company_name", "company_number", "company_country",
	"primary_contact_email", "primary_contact_name", "created_at", "updated_at", "submitted_at", "completed_at",
	"company_type", "incorporation_date", "registered_address", "trading_address", "industry", "website", "phone",
	"business_description", "countries_of_operation", "annual_turnover", "expected_monthly_volume",
	"high_risk_revenue_percentage", "regulated_entity", "confirm_accuracy", "confirm_terms",
	"vat_number", "tax_id",
}

// exportSensitive are the sensitive fields of each acme configuration.
var exportSensitive = map[string][]string{
	"acme-standard": {"tax_id", "bank_account_iban"},
	"acme-extra":    {"internal_score"},
}

// exportDirs writes the configuration and its form file, and returns the
// configuration's path and a data directory.
func exportDirs(t *testing.T) (config, data string) {
	t.Helper()
	dir := t.TempDir()
	config = filepath.Join(dir, "onboard.toml")
	for name, content := range map[string]string{"onboard.toml": exportConfig, "extra.toml": exportForm} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return config, filepath.Join(dir, "data")
}

// exportApps are the applications exportScenario made, oldest first, with
// the country each was created for.
type exportApps struct {
	ids      []string
	country  map[string]string
	otherOrg string // an application of organization other
}

// exportScenario makes, through the API of a running server, three
// applications of acme with values a spreadsheet would run as formulas: an
// approved one with registry documents and uploads (standard form), a
// submitted one on exportForm, and a sent one; and one of organization
// other.
func exportScenario(t *testing.T, p *serveProc, key, otherKey string) exportApps {
	t.Helper()
	apps := exportApps{country: map[string]string{}}
	create := func(key, country, body string) string {
		var created struct {
			ApplicationID string `json:"application_id"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, body)), &created); err != nil {
			t.Fatal(err)
		}
		apps.country[created.ApplicationID] = country
		return created.ApplicationID
	}
	patch := func(id, fields string) {
		p.wantStatus(t, http.StatusOK, http.MethodPatch, "/api/external/applications/"+id, key, `{"fields":`+fields+`}`)
	}
	submit := func(id string) {
		p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/test-helpers/applications/"+id+"/submit", key, "")
	}

	a := create(key, "GB", `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`)
	patch(a, `{"business_description":"=1+2","phone":"+442079460958","tax_id":"=SUM(A1)","bank_account_iban":"GB82WEST12345698765432",
		"trading_address":{"line1":"1 High St","city":"London","postcode":"EC1A 1BB","country":"GB"},
		"annual_turnover":{"amount":1250000,"currency":"GBP"},"countries_of_operation":["GB","FR"],
		"high_risk_revenue_percentage":12.5,"regulated_entity":false,"website":"https://northwind.example","industry":"software"}`)
	deadline := time.Now().Add(20 * time.Second)
	for decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+a, key, ""))["registry_documents_status"] == "pending" {
		if time.Now().After(deadline) {
			t.Fatal("the registry documents of the first application were still pending after 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	submit(a)
	p.wantStatus(t, http.StatusOK, http.MethodPost, "/api/external/applications/"+a+"/decision", key, `{"type":"application.approved"}`)

	b := create(key, "FR", `{"config_id":"acme-extra","primary_contact":{"email":"luc@minus.example"},"country":"FR","company_number":"FR77","company_name":"-minus SARL"}`)
	patch(b, `{"vat_number":"-12","tax_id":"+33 tax","internal_score":"@secret","industry":"software"}`)
	submit(b)

	c := create(key, "IE", `{"primary_contact":{"email":"ciara@emerald.example","name":"@Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	patch(c, `{"business_description":"-- dashes","website":"https://emerald.example"}`)

	apps.ids = []string{a, b, c}
	apps.otherOrg = create(otherKey, "GB", `{"primary_contact":{"email":"o@bluebell.example"},"country":"GB","company_number":"10000008","company_name":"Bluebell Group Limited"}`)
	return apps
}

// apiApplication is get-application's document, with its download URLs.
func apiApplication(t *testing.T, p *serveProc, key, id string) map[string]any {
	t.Helper()
	return decodeJSON(t, p.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, key, ""))
}

// withoutDownloadURLs removes every download_url member from v, in place.
func withoutDownloadURLs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "download_url")
		for _, m := range v {
			withoutDownloadURLs(m)
		}
	case []any:
		for _, m := range v {
			withoutDownloadURLs(m)
		}
	}
	return v
}

// ndjsonLines decodes an NDJSON export: one object a line, each line ended.
func ndjsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("NDJSON export does not end with a newline: %q", out)
	}
	var docs []map[string]any
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		docs = append(docs, decodeJSON(t, line))
	}
	return docs
}

func idsOf(docs []map[string]any) []string {
	var ids []string
	for _, d := range docs {
		ids = append(ids, d["id"].(string))
	}
	return ids
}

// reversed returns ids newest first, the export's order.
func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// wantNDJSON checks an NDJSON export of ids: each line is get-application's
// document without its download URLs.
func wantNDJSON(t *testing.T, p *serveProc, key, out string, ids []string) {
	t.Helper()
	docs := ndjsonLines(t, out)
	if diff := cmp.Diff(ids, idsOf(docs)); diff != "" {
		t.Fatalf("exported applications (-want +got):\n%s", diff)
	}
	for i, id := range ids {
		want := withoutDownloadURLs(apiApplication(t, p, key, id))
		if diff := cmp.Diff(want, any(docs[i])); diff != "" {
			t.Errorf("application %s (-get-application without download_url +export):\n%s", id, diff)
		}
	}
}

// formulaSafeWant is what a cell holding s must read (OWASP CSV injection).
func formulaSafeWant(s string) string {
	if s != "" && strings.ContainsAny(s[:1], "=+-@\t\r") {
		return "'" + s
	}
	return s
}

// jsonCell is the CSV cell of a JSON value as the API shows it: empty for
// none, the text of a string, else the JSON itself.
func jsonCell(t *testing.T, v any) string {
	t.Helper()
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCSV checks a CSV export of ids against get-application, cell by
// cell: objects and arrays compared as JSON, every other cell exactly.
func wantCSV(t *testing.T, p *serveProc, key, out string, apps exportApps, ids []string) {
	t.Helper()
	if !strings.HasPrefix(out, strings.Join(exportHeader, ",")+"\r\n") {
		t.Errorf("the export does not start with the header and CRLF:\n%.400q", out)
	}
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("parse the CSV export: %v\n%s", err, out)
	}
	if diff := cmp.Diff(exportHeader, records[0]); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	var got []string
	for _, r := range records[1:] {
		got = append(got, r[0])
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Fatalf("exported applications (-want +got):\n%s", diff)
	}
	for i, id := range ids {
		app := apiApplication(t, p, key, id)
		data := app["data"].(map[string]any)
		fields := data["fields"].(map[string]any)
		contact := data["meta"].(map[string]any)["primary_contact"].(map[string]any)
		want := map[string]any{
			"id": app["id"], "config_id": app["config_id"], "status": app["status"],
			"primary_contact_email": contact["email"], "primary_contact_name": contact["name"],
			"created_at": app["created_at"], "updated_at": app["updated_at"], "submitted_at": app["submitted_at"], "completed_at": app["completed_at"],
		}
		for _, col := range exportHeader[3:] {
			if _, fixed := want[col]; !fixed && !slices.Contains(exportSensitive[app["config_id"].(string)], col) {
				want[col] = fields[col]
			}
		}
		if _, ok := fields["company_country"]; !ok {
			want["company_country"] = apps.country[id] // a form without the field: the country of create
		}
		row := records[i+1]
		if len(row) != len(exportHeader) {
			t.Fatalf("application %s: %d cells, want %d", id, len(row), len(exportHeader))
		}
		for j, col := range exportHeader {
			cell := jsonCell(t, want[col])
			switch want[col].(type) {
			case map[string]any, []any:
				var gotV any
				if err := json.Unmarshal([]byte(row[j]), &gotV); err != nil || !cmp.Equal(want[col], gotV) {
					t.Errorf("application %s, %s = %q, want JSON %s", id, col, row[j], cell)
				}
				var compact bytes.Buffer
				if err := json.Compact(&compact, []byte(row[j])); err != nil || compact.String() != row[j] {
					t.Errorf("application %s, %s = %q, want compact JSON", id, col, row[j])
				}
			default:
				if row[j] != formulaSafeWant(cell) {
					t.Errorf("application %s, %s = %q, want %q", id, col, row[j], formulaSafeWant(cell))
				}
			}
		}
	}
}

// wantDocuments checks that dir holds exactly the files of ids, each
// byte-equal to its download from the API, named
// <application_id>/<file_id>-<file_name>, owner-only.
func wantDocuments(t *testing.T, p *serveProc, key, dir string, ids []string) {
	t.Helper()
	want := map[string]string{}
	for _, id := range ids {
		app := apiApplication(t, p, key, id)
		var docs []map[string]any
		data := app["data"].(map[string]any)
		addAll := func(m any) {
			for _, d := range m.(map[string]any) {
				docs = append(docs, d.(map[string]any))
			}
		}
		addAll(data["documents"])
		for _, who := range append(data["people"].([]any), data["entities"].([]any)...) {
			addAll(who.(map[string]any)["documents"])
		}
		if rds, ok := app["registry_documents"].([]any); ok {
			for _, rd := range rds {
				d := rd.(map[string]any)
				docs = append(docs, map[string]any{"file_id": d["id"], "download_url": d["download_url"]})
			}
		}
		for _, d := range docs {
			link, ok := d["download_url"].(string)
			if !ok {
				continue
			}
			u, err := url.Parse(link)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(p.base + u.RequestURI())
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("download %s: %d %v", link, resp.StatusCode, err)
			}
			_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
			if err != nil {
				t.Fatal(err)
			}
			want[filepath.Join(id, d["file_id"].(string)+"-"+params["filename"])] = digest(body)
		}
	}
	if len(want) < 5 {
		t.Fatalf("the scenario has %d files, want uploads and registry documents", len(want))
	}
	if diff := cmp.Diff(want, filesIn(t, dir)); diff != "" {
		t.Errorf("copied documents (-want +got):\n%s", diff)
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// filesIn maps each file under dir (relative path) to the digest of its
// content, and fails on a file that is not owner-only.
func filesIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, info.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		got[rel] = digest(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// exportErrorCases are refused exports and their exact stderr, the same
// through admin.sock and with the store opened directly.
var exportErrorCases = []struct {
	name string
	args []string
	want string
}{
	{"unknown organization", []string{"--org", "nope"}, "onboard: unknown organization 'nope'\n"},
	{"unknown status", []string{"--org", "acme", "--status", "done"}, "onboard: Invalid status 'done'\n"},
	{"since not RFC 3339", []string{"--org", "acme", "--since", "2025-01-31"}, "onboard: Invalid since '2025-01-31': use an RFC 3339 time such as 2025-01-31T00:00:00Z\n"},
	{"unknown format", []string{"--org", "acme", "--format", "xlsx"}, "onboard: Invalid format 'xlsx': use ndjson or csv\n"},
}

// TestExport runs apps export while serve runs (through admin.sock), then
// directly on the data directory: both give the same bytes, the same files
// and the same errors.
func TestExport(t *testing.T) {
	t.Parallel()
	config, data := exportDirs(t)
	p := startServe(t, "--config", config, "--data-dir", data)
	key := p.waitForKey(t)
	global := []string{"--config", config, "--data-dir", data}
	export := func(args ...string) result {
		t.Helper()
		return mustRun(t, append(append(slices.Clone(global), "apps", "export"), args...)...)
	}
	otherKey := strings.TrimSpace(mustRun(t, append(slices.Clone(global), "keys", "create", "--org", "other", "--name", "other")...).stdout)
	apps := exportScenario(t, p, key, otherKey)
	newest := reversed(apps.ids)

	// NDJSON, the default, to stdout: nothing on stderr when it is not a
	// terminal.
	ndjson := export("--org", "acme")
	if ndjson.stderr != "" {
		t.Errorf("stderr = %q, want nothing", ndjson.stderr)
	}
	wantNDJSON(t, p, key, ndjson.stdout, newest)
	first := ndjsonLines(t, ndjson.stdout)
	if first[2]["data"].(map[string]any)["fields"].(map[string]any)["tax_id"] != "=SUM(A1)" ||
		first[1]["data"].(map[string]any)["fields"].(map[string]any)["internal_score"] != "@secret" {
		t.Error("the NDJSON export leaves out sensitive values; the operator's export keeps them")
	}
	if got := idsOf(ndjsonLines(t, export("--org", "other").stdout)); !slices.Equal(got, []string{apps.otherOrg}) {
		t.Errorf("export of other = %v, want only %s", got, apps.otherOrg)
	}

	// --out: the same bytes in an owner-only file, nothing on stdout.
	out := filepath.Join(t.TempDir(), "apps.ndjson")
	if r := export("--org", "acme", "--out", out); r.stdout != "" || r.stderr != "" {
		t.Errorf("--out: stdout %q, stderr %q; want nothing", r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != ndjson.stdout {
		t.Errorf("--out file differs from stdout (%v)", err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("--out file mode: %v %v, want 0600", fi, err)
	}

	// --status and --since.
	wantNDJSON(t, p, key, export("--org", "acme", "--status", "approved").stdout, apps.ids[:1])
	wantNDJSON(t, p, key, export("--org", "acme", "--status", "submitted").stdout, apps.ids[1:2])
	wantNDJSON(t, p, key, export("--org", "acme", "--status", "review").stdout, nil)
	updated := map[string]time.Time{}
	for _, id := range apps.ids {
		at, err := time.Parse(time.RFC3339, apiApplication(t, p, key, id)["updated_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		updated[id] = at
	}
	for _, id := range apps.ids {
		since := updated[id]
		var want []string
		for _, other := range newest {
			if !updated[other].Before(since) {
				want = append(want, other)
			}
		}
		// The same instant in another offset.
		wantNDJSON(t, p, key, export("--org", "acme", "--since", since.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)).stdout, want)
	}
	wantNDJSON(t, p, key, export("--org", "acme", "--since", time.Now().Add(time.Hour).Format(time.RFC3339)).stdout, nil)
	wantNDJSON(t, p, key, export("--org", "acme", "--status", "sent", "--since", "2000-01-01T00:00:00Z").stdout, apps.ids[2:])

	// CSV, with the documents.
	docs := filepath.Join(t.TempDir(), "documents")
	csvOut := export("--org", "acme", "--format", "csv", "--documents", docs)
	wantCSV(t, p, key, csvOut.stdout, apps, newest)
	wantDocuments(t, p, key, docs, apps.ids)
	records, _ := csv.NewReader(strings.NewReader(csvOut.stdout)).ReadAll()
	cellOf := func(id, col string) string {
		for _, r := range records {
			if r[0] == id {
				return r[slices.Index(exportHeader, col)]
			}
		}
		t.Fatalf("no row for %s", id)
		return ""
	}
	for _, tt := range []struct{ id, col, want string }{
		{apps.ids[0], "business_description", "'=1+2"},
		{apps.ids[0], "phone", "'+442079460958"},
		{apps.ids[0], "tax_id", ""}, // sensitive in the standard form
		{apps.ids[1], "company_name", "'-minus SARL"},
		{apps.ids[1], "vat_number", "'-12"},
		{apps.ids[1], "tax_id", "'+33 tax"},
		{apps.ids[2], "primary_contact_name", "'@Ciara"},
		{apps.ids[2], "business_description", "'-- dashes"},
		{apps.ids[0], "annual_turnover", `{"amount":1250000,"currency":"GBP"}`},
		{apps.ids[0], "countries_of_operation", `["GB","FR"]`},
		{apps.ids[0], "high_risk_revenue_percentage", "12.5"},
		{apps.ids[0], "regulated_entity", "false"},
		{apps.ids[1], "company_country", "FR"},
	} {
		if got := cellOf(tt.id, tt.col); got != tt.want {
			t.Errorf("application %s, %s = %q, want %q", tt.id, tt.col, got, tt.want)
		}
	}
	if strings.Contains(csvOut.stdout, "GB82WEST") || strings.Contains(csvOut.stdout, "@secret") || strings.Contains(csvOut.stdout, "SUM(A1)") {
		t.Error("the CSV export carries a sensitive value")
	}

	for _, tt := range exportErrorCases {
		t.Run("serving/"+tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append(append(slices.Clone(global), "apps", "export"), tt.args...)...), tt.want)
		})
	}

	// The same export with no server: the command opens the data directory.
	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d", code)
	}
	if got := export("--org", "acme").stdout; got != ndjson.stdout {
		t.Errorf("direct NDJSON export differs from the one through admin.sock:\n%s", cmp.Diff(ndjson.stdout, got))
	}
	directDocs := filepath.Join(t.TempDir(), "documents")
	if got := export("--org", "acme", "--format", "csv", "--documents", directDocs).stdout; got != csvOut.stdout {
		t.Errorf("direct CSV export differs from the one through admin.sock:\n%s", cmp.Diff(csvOut.stdout, got))
	}
	if diff := cmp.Diff(filesIn(t, docs), filesIn(t, directDocs)); diff != "" {
		t.Errorf("direct documents differ from those through admin.sock (-socket +direct):\n%s", diff)
	}
	for _, tt := range exportErrorCases {
		t.Run("direct/"+tt.name, func(t *testing.T) {
			wantFailure(t, runBinary(t, append(append(slices.Clone(global), "apps", "export"), tt.args...)...), tt.want)
		})
	}
	// A refused export leaves no --out file behind.
	refused := filepath.Join(t.TempDir(), "refused.csv")
	runBinary(t, append(slices.Clone(global), "apps", "export", "--org", "nope", "--out", refused)...)
	if entries, _ := os.ReadDir(filepath.Dir(refused)); len(entries) != 0 {
		t.Errorf("a refused export left %v", entries)
	}
}

// seedApplication is application i of a seeded organization: the fields a
// partner and an applicant would have filled, about a kilobyte of JSON.
func seedApplication(i int, org, config string, now time.Time) *onboarding.Application {
	at := now.Add(time.Duration(i) * time.Millisecond)
	return &onboarding.Application{
		ID: uuid.NewString(), Seq: ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()), OrgID: org, ConfigID: config, Country: "GB",
		Status: onboarding.Statuses()[i%len(onboarding.Statuses())],
		Data: onboarding.Data{
			Fields: map[string]json.RawMessage{
				"company_name":         json.RawMessage(fmt.Sprintf(`"SEEDED COMPANY %d LIMITED"`, i)),
				"company_number":       json.RawMessage(fmt.Sprintf(`"%08d"`, i)),
				"company_country":      json.RawMessage(`"GB"`),
				"industry":             json.RawMessage(`"software"`),
				"registered_address":   json.RawMessage(`{"line1":"1 Seed Street","city":"London","postcode":"EC1A 1BB","country":"GB"}`),
				"business_description": json.RawMessage(`"` + strings.Repeat("We roast coffee and sell it wholesale. ", 8) + `"`),
				"annual_turnover":      json.RawMessage(`{"amount":1250000,"currency":"GBP"}`),
			},
			People: []onboarding.Person{{ID: uuid.NewString(), Source: onboarding.SourceUserAdded, Roles: []onboarding.PersonRole{"director"},
				FullName: "Ann Example", FirstName: "Ann", LastName: "Example"}},
			Meta: onboarding.Meta{PrimaryContact: &onboarding.Contact{Name: "Ann Example", Email: fmt.Sprintf("ann%d@seed.example", i)}},
		},
		Participants: []onboarding.Participant{{ID: uuid.NewString(), LinkSlug: strings.ReplaceAll(uuid.NewString(), "-", ""),
			Email: fmt.Sprintf("ann%d@seed.example", i), Role: onboarding.RolePrimary}},
		CreatedAt: at, UpdatedAt: at,
	}
}

// seedApplications stores n applications of org and config in the data
// directory, straight into the store and many at once (synchronous writes
// commit together), and returns their ids.
func seedApplications(t *testing.T, data string, n int, org, config string) []string {
	t.Helper()
	ids := make([]string, n)
	now := time.Now().Add(-time.Duration(n) * time.Millisecond).UTC()
	withStore(t, data, func(store *storage.Store, _ *blobs.Store) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for range 64 {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					app := seedApplication(i, org, config, now)
					ids[i] = app.ID
					if err := store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
	return ids
}

// TestExportWhileWriting exports through admin.sock an export too large for
// the pipes and sockets between the server and the reader, and holds it
// midway by not reading: meanwhile the API's writes succeed. The export
// then holds exactly the applications that existed when it began.
func TestExportWhileWriting(t *testing.T) {
	t.Parallel()
	config, data := exportDirs(t)
	const n = 3000 // about 3 MB of NDJSON, far more than the buffers on the way
	seeded := seedApplications(t, data, n, "acme", "acme-extra")
	p := startServe(t, "--config", config, "--data-dir", data)
	key := p.waitForKey(t)

	cmd := exec.Command(binary, "--config", config, "--data-dir", data, "apps", "export", "--org", "acme")
	cmd.Env = childEnv()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	r := bufio.NewReader(stdout)
	firstLine, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read the first line of the export: %v (stderr %s)", err, stderr.String())
	}

	// The export has begun and is held by the unread pipe: writes go on.
	var created []string
	for i := range 20 {
		body := fmt.Sprintf(`{"config_id":"acme-extra","primary_contact":{"email":"w%d@load.example"},"country":"FR","company_number":"W%d","company_name":"Written During Export"}`, i, i)
		var c struct {
			ApplicationID string `json:"application_id"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", key, body)), &c); err != nil {
			t.Fatal(err)
		}
		created = append(created, c.ApplicationID)
		p.wantStatus(t, http.StatusOK, http.MethodPatch, "/api/external/applications/"+seeded[i*70], key, `{"fields":{"vat_number":"GB123"}}`) // created
	}
	select {
	case <-exited:
		t.Fatal("the export ended before the writes: it was not held")
	default: // blocked writing to the pipe, which nobody reads
	}

	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the export did not finish within 30s once read")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || stderr.String() != "" {
		t.Fatalf("export exit code %d, stderr %q", code, stderr.String())
	}
	got := idsOf(ndjsonLines(t, firstLine+string(rest)))
	if diff := cmp.Diff(reversed(seeded), got); diff != "" {
		t.Errorf("exported applications (-seeded newest first +got):\n%s", diff)
	}
	for _, id := range created {
		if slices.Contains(got, id) {
			t.Errorf("application %s, created after the export began, is in it", id)
		}
	}
}

// TestExportFileNames exports, with the store opened directly, documents
// whose names try to leave the directory or hide, and one whose file was
// removed: names are made safe, nothing is written outside DIR, and the
// missing file is reported.
func TestExportFileNames(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	appID := uuid.NewString()
	long := strings.Repeat("é", 150) + ".pdf"
	names := map[string]string{ // file name → the name the copy must have (after "<file_id>-")
		"../../escape.pdf":         ".._.._escape.pdf",
		"..":                       "...pdf", // each name ends in its type's extension
		"statement.html":           "statement.html.pdf",
		"a\x00b\nc\u202egnp.pdf":   "a_b_c_gnp.pdf",
		`back\slash.pdf`:           "back_slash.pdf",
		"bad\xffutf8.pdf":          "bad\ufffdutf8.pdf",              // the record keeps valid UTF-8 only
		long:                       strings.Repeat("é", 79) + ".pdf", // 36 + 1 + 158 + 4 bytes
		"certificate.pdf":          "certificate.pdf",
		"/etc/passwd":              "_etc_passwd.pdf",
		"bank statement (1).pdf":   "bank statement (1).pdf",
		"\u200bzero-width.pdf":     "_zero-width.pdf",
		"trailing-newline.pdf\r\n": "trailing-newline.pdf__.pdf",
	}
	want := map[string]string{}
	withStore(t, data, func(store *storage.Store, files *blobs.Store) {
		now := time.Now().UTC().Add(-time.Hour)
		app := seedApplication(0, "default", "default", now)
		app.ID = appID
		app.Data.Documents = map[string]onboarding.Document{}
		i := 0
		for name, safe := range names {
			body := fmt.Sprintf("%%PDF-1.4 document %d\n", i)
			blob, size, err := files.Put(context.Background(), strings.NewReader(body), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			fileID := uuid.NewString()
			app.Data.Documents[fmt.Sprintf("doc_%02d", i)] = onboarding.Document{FileID: fileID, FileName: name, FileType: "application/pdf",
				UploadedAt: now, Status: onboarding.DocumentAccepted, AcceptanceReason: onboarding.ReasonBaselinePassed, BlobID: blob, Size: size}
			want[filepath.Join(appID, fileID+"-"+safe)] = digest([]byte(body))
			i++
		}
		app.Data.Documents["doc_gone"] = onboarding.Document{FileID: uuid.NewString(), FileName: "gone.pdf", FileType: "application/pdf",
			UploadedAt: now, Status: onboarding.DocumentAccepted, BlobID: "0123456789abcdef0123456789abcdef", Size: 1}
		if err := store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	})
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	r := mustRun(t, "--data-dir", data, "apps", "export", "--org", "default", "--documents", docs, "--out", filepath.Join(root, "apps.ndjson"))
	if want := "1 document file was replaced or removed while exporting and was not copied.\n"; r.stderr != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	if diff := cmp.Diff(want, filesIn(t, docs)); diff != "" {
		t.Errorf("copied documents (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff([]string{"apps.ndjson", "docs"}, got); diff != "" {
		t.Errorf("the export's directory (-want +got):\n%s", diff)
	}
}

// TestExportCSVInjection exports, with the store opened directly, values
// the API would have trimmed (a leading tab or carriage return) beside
// every other formula trigger: each such cell starts with a single quote,
// and the CSV parses back to the values with that quote.
func TestExportCSVInjection(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	values := map[string]string{
		"company_name":         "\tTAB LIMITED",
		"business_description": "\rcarriage\r\nreturn",
		"website":              "=HYPERLINK(\"http://evil.example\",\"x\")",
		"phone":                "+441234567890",
		"company_number":       "-1",
		"industry":             "@SUM(1,2)",
		"incorporation_date":   "2001-02-03",
		"trading_address":      "=not an object, a string",
	}
	var id string
	withStore(t, data, func(store *storage.Store, _ *blobs.Store) {
		app := seedApplication(0, "default", "default", time.Now().UTC())
		id = app.ID
		app.Data.Meta.PrimaryContact.Name = "=cmd|' /C calc'!A0"
		for field, v := range values {
			raw, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			app.Data.Fields[field] = raw
		}
		if err := store.CreateApplication(context.Background(), app, onboarding.Changes{}); err != nil {
			t.Fatal(err)
		}
	})
	out := mustRun(t, "--data-dir", data, "apps", "export", "--org", "default", "--format", "csv").stdout
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(records) != 2 || records[1][0] != id {
		t.Fatalf("CSV export: %v\n%q", err, out)
	}
	values["primary_contact_name"] = "=cmd|' /C calc'!A0"
	for col, v := range values {
		want := "'" + v
		switch col {
		case "incorporation_date":
			want = v
		case "business_description":
			// RFC 4180 breaks lines with CRLF, inside cells too: the
			// writer drops a lone CR, and the reader gives CRLF back as LF.
			want = "'carriage\nreturn"
		}
		if got := records[1][slices.Index(records[0], col)]; got != want {
			t.Errorf("%s = %q, want %q", col, got, want)
		}
	}
}

// TestExportProgress: on a terminal, stderr shows the count each tick and
// ends the line; the command never shows it on a pipe or a file.
func TestExportProgress(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	n.Store(12344)
	var out bytes.Buffer
	w := &signallingWriter{w: &out, wrote: make(chan struct{}, 3)}
	tick := make(chan time.Time)
	p := startProgress(w, &n, tick)
	// Each line is awaited before the count moves, so the lines are
	// exactly the counts at their ticks; stop writes the final count.
	tick <- time.Now()
	<-w.wrote
	n.Add(2)
	tick <- time.Now()
	<-w.wrote
	p.stop()
	if got, want := out.String(), "\rexported 12,344 applications\rexported 12,346 applications\rexported 12,346 applications\n"; got != want {
		t.Errorf("progress = %q, want %q", got, want)
	}

	out.Reset()
	startProgress(&out, &n, make(chan time.Time)).stop()
	if out.Len() != 0 {
		t.Errorf("an export shorter than a tick shows %q, want nothing", out.String())
	}
	for _, tt := range []struct {
		n    int64
		want string
	}{{0, "0 applications"}, {1, "1 application"}, {999, "999 applications"}, {1000, "1,000 applications"}, {1234567, "1,234,567 applications"}} {
		if got := applications(tt.n); got != tt.want {
			t.Errorf("applications(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"pipe": pw, "file": file, "buffer": &out} {
		if isTerminal(w) {
			t.Errorf("%s counts as a terminal", name)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !isTerminal(tty) {
			t.Error("/dev/tty does not count as a terminal")
		}
	}
}

// signallingWriter writes to w and then sends on wrote, so a test can wait
// for a line written by another goroutine.
type signallingWriter struct {
	w     io.Writer
	wrote chan struct{}
}

func (s *signallingWriter) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.wrote <- struct{}{}
	return n, err
}

// TestExportMemory measures apps export of many applications, directly
// and through admin.sock: the time, and the command's memory: its peak RSS
// (the kernel's high-water mark, VmHWM, which it also reports to the parent
// as ru_maxrss), and sampled peaks of its anonymous and file-backed RSS
// (Badger maps its tables: reading them all counts file pages that the
// kernel may drop at any time); and serve's VmHWM before and after. The
// data directory is seeded by another process, so that the test process
// stays small: a child's ru_maxrss counts its parent's RSS at the fork.
// Set ONBOARD_EXPORT_APPS (such as 100000) to run it.
func TestExportMemory(t *testing.T) {
	raw := os.Getenv("ONBOARD_EXPORT_APPS")
	if raw == "" || testing.Short() {
		t.Skip("set ONBOARD_EXPORT_APPS=100000 to measure apps export")
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1000 {
		t.Fatalf("ONBOARD_EXPORT_APPS=%q: want a number of at least 1000", raw)
	}
	config, data := exportDirs(t)
	seedInHelper(t, data, n/2)
	half := measureExport(t, config, data, "ndjson", n/2)
	seedInHelper(t, data, n-n/2)
	var full []exportMemory
	for _, format := range []string{"ndjson", "csv"} {
		full = append(full, measureExport(t, config, data, format, n))
	}
	// The export's own memory does not grow with the applications: twice
	// as many take about the same anonymous memory (heap and Badger's
	// caches, already full at half).
	if full[0].anonKB > half.anonKB*5/4+16<<10 {
		t.Errorf("anonymous RSS %d KiB for %d applications, %d KiB for %d: the export's memory grows", full[0].anonKB, n, half.anonKB, n/2)
	}

	p := startServe(t, "--config", config, "--data-dir", data)
	before := procStatus(t, p.cmd.Process.Pid)
	for _, format := range []string{"ndjson", "csv"} {
		measureExport(t, config, data, format, n)
	}
	after := procStatus(t, p.cmd.Process.Pid)
	t.Logf("serve: VmHWM %d KiB, RssAnon %d KiB before the exports through admin.sock; VmHWM %d KiB, RssAnon %d KiB, RssFile %d KiB after",
		before["VmHWM"], before["RssAnon"], after["VmHWM"], after["RssAnon"], after["RssFile"])
}

// TestExportSeedHelper is no test: TestExportMemory runs the test binary
// with it to seed a data directory in a process of its own.
func TestExportSeedHelper(t *testing.T) {
	data := os.Getenv("ONBOARD_EXPORT_SEED_DIR")
	if data == "" {
		t.Skip("a helper process of TestExportMemory")
	}
	n, err := strconv.Atoi(os.Getenv("ONBOARD_EXPORT_SEED_N"))
	if err != nil {
		t.Fatal(err)
	}
	seedApplications(t, data, n, "acme", "acme-standard")
}

// seedInHelper adds n applications of acme to data from another process.
func seedInHelper(t *testing.T, data string, n int) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportSeedHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ONBOARD_EXPORT_SEED_DIR="+data, "ONBOARD_EXPORT_SEED_N="+strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	t.Logf("seeded %d applications in %v", n, time.Since(start).Round(time.Millisecond))
}

// exportMemory is what measureExport saw of one export command, in KiB.
type exportMemory struct{ hwmKB, maxRSSKB, anonKB, fileKB int64 }

// measureExport runs one export to a file, sampling the command's memory
// every 10 ms, checks its row count and logs the numbers.
func measureExport(t *testing.T, config, data, format string, n int) exportMemory {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export."+format)
	cmd := exec.Command(binary, "--config", config, "--data-dir", data, "apps", "export", "--org", "acme", "--format", format, "--out", out)
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var m exportMemory
	sample := time.NewTicker(10 * time.Millisecond)
	defer sample.Stop()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("export: %v\n%s", err, stderr.String())
			}
			waiting = false
		case <-sample.C:
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
			if err != nil {
				continue // exiting
			}
			s := parseStatus(string(b))
			m.hwmKB = max(m.hwmKB, s["VmHWM"])
			m.anonKB = max(m.anonKB, s["RssAnon"])
			m.fileKB = max(m.fileKB, s["RssFile"])
		}
	}
	took := time.Since(start)
	m.maxRSSKB = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		lines++
	}
	if format == "csv" {
		lines-- // the header
	}
	if lines != n {
		t.Errorf("%s export: %d rows, want %d", format, lines, n)
	}
	via := "direct"
	if _, err := os.Stat(filepath.Join(data, "admin.sock")); err == nil {
		via = "admin.sock"
	}
	self := procStatus(t, os.Getpid())
	t.Logf("%s %s: %d applications, %.1f MiB in %v (%.0f applications/s); peak RSS %d KiB (ru_maxrss; VmHWM sampled %d KiB), "+
		"sampled peaks RssAnon %d KiB, RssFile %d KiB; the test process's VmRSS %d KiB",
		via, format, n, float64(fi.Size())/(1<<20), took.Round(time.Millisecond), float64(n)/took.Seconds(),
		m.maxRSSKB, m.hwmKB, m.anonKB, m.fileKB, self["VmRSS"])
	return m
}

// procStatus reads the memory lines of a running process's status, in KiB.
func procStatus(t *testing.T, pid int) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	return parseStatus(string(b))
}

// parseStatus reads the "Name:  123 kB" lines of /proc/PID/status.
func parseStatus(s string) map[string]int64 {
	out := map[string]int64{}
	for line := range strings.SplitSeq(s, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if v, isKB := strings.CutSuffix(strings.TrimSpace(rest), " kB"); ok && isKB {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[name] = n
			}
		}
	}
	return out
}
