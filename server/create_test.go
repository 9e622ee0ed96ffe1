package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/notify"
	"onboard/onboarding"
	"onboard/storage/storetest"
)

func TestCreateErrors(t *testing.T) {
	e := newEnv(t, envOptions{maxJSON: 4096})
	tests := []struct {
		name   string
		key    string
		body   string
		status int
		want   map[string]any
	}{
		{"empty body", "acme", ``, 400, errBody("primary_contact.email is required")},
		{"no contact", "acme", `{"country":"GB"}`, 400, errBody("primary_contact.email is required")},
		{"no email", "acme", `{"primary_contact":{"name":"Jane"}}`, 400, errBody("primary_contact.email is required")},
		{"blank email", "acme", `{"primary_contact":{"email":"  "}}`, 400, errBody("primary_contact.email is required")},
		{"invalid email", "acme", `{"primary_contact":{"email":"jane.example.com"}}`, 400, errBody("Invalid email address for primary_contact.email")},
		{"email with display name", "acme", `{"primary_contact":{"email":"Jane <jane@example.com>"}}`, 400, errBody("Invalid email address for primary_contact.email")},
		{"email without domain dot", "acme", `{"primary_contact":{"email":"jane@localhost"}}`, 400, errBody("Invalid email address for primary_contact.email")},
		{"unknown config", "acme", `{"primary_contact":{"email":"a@example.com"},"config_id":"nope"}`, 400, errBody("Invalid config_id")},
		{"other org's config", "acme", `{"primary_contact":{"email":"a@example.com"},"config_id":"globex-standard"}`, 403, errBody("Config not available for this organization")},
		{"no default config", "empty", `{"primary_contact":{"email":"a@example.com"},"country":"GB"}`, 400, errBody("No active configuration found for this organization")},
		{"no company number", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB"}`, 400, errBody("company_number is required")},
		{"no country", "acme", `{"primary_contact":{"email":"a@example.com"},"company_number":"10000001","company_name":"X"}`, 400, errBody("country is required for this application configuration")},
		{"selection without country", "acme", `{"primary_contact":{"email":"a@example.com"},"config_id":"acme-select"}`, 400, errBody("country is required for this application configuration")},
		{"country not allowed", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"DE","company_number":"1","company_name":"X"}`, 400, errBody("Country 'DE' is not supported by this application configuration")},
		{"country not a code", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GBR","company_number":"1","company_name":"X"}`, 400, errBody("Country 'GBR' is not supported by this application configuration")},
		{"selection without search", "acme", `{"primary_contact":{"email":"a@example.com"},"config_id":"acme-select","country":"FR"}`, 400, errBody("Company search is not available for country 'FR'")},
		{"number without name", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001"}`, 400, errBody("company_name is required when company_number is provided")},
		{"malformed GB number", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"ABC-1","company_name":"X"}`, 400, errBody("Invalid company number 'ABC-1' for UK company registry")},
		{"malformed IE number", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"IE","company_number":"1234567","company_name":"X"}`, 400, errBody("Invalid company number '1234567' for Irish company registry")},
		{"GB not found", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000004","company_name":"X"}`, 400, errBody("Company 10000004 was not found in the UK company registry")},
		{"GB unknown number padded", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"4242","company_name":"X"}`, 400, errBody("Company 00004242 was not found in the UK company registry")},
		{"GB dissolved", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000003","company_name":"Oldco Limited"}`, 400, errBody("Company 10000003 is not active (status: dissolved)")},
		{"GB name mismatch", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Ltd"}`, 400, map[string]any{
			"error":          "Company name 'Northwind Ltd' does not match the registered name for 10000001. Did you mean 'NORTHWIND TRADING LIMITED'?",
			"suggested_name": "NORTHWIND TRADING LIMITED",
		}},
		{"GB legal form mismatch", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000002","company_name":"Bluebell Holdings Ltd"}`, 400, map[string]any{
			"error":          "Company name 'Bluebell Holdings Ltd' does not match the registered name for 10000002. Did you mean 'BLUEBELL HOLDINGS PLC'?",
			"suggested_name": "BLUEBELL HOLDINGS PLC",
		}},
		{"GB registry throttling", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000005","company_name":"X"}`, 503, map[string]any{
			"error": "The UK company registry is temporarily unavailable; retry in a few minutes", "retryable": true,
		}},
		{"GB registry failing", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000006","company_name":"X"}`, 502, map[string]any{
			"error": "Registry validation failed", "retryable": true,
		}},
		{"IE strike off listed", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"IE","company_number":"100002","company_name":"Shamrock Consulting Limited"}`, 400, errBody("Company 100002 is not active (status: Strike Off Listed)")},
		{"IE not found", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"IE","company_number":"100004","company_name":"X"}`, 400, errBody("Company 100004 was not found in the Irish company registry")},
		{"invalid JSON", "acme", `{"primary_contact":`, 400, errBody("Invalid JSON body")},
		{"not an object", "acme", `[1,2]`, 400, errBody("Invalid request body: must be a JSON object")},
		{"null", "acme", `null`, 400, errBody("Invalid request body: must be a JSON object")},
		{"wrong type", "acme", `{"primary_contact":{"email":"a@example.com"},"country":5}`, 400, errBody("Invalid request body: country must be a string")},
		{"wrong nested type", "acme", `{"primary_contact":{"email":true}}`, 400, errBody("Invalid request body: primary_contact.email must be a string")},
		{"too large", "acme", `{"primary_contact":{"name":"` + strings.Repeat("x", 5000) + `"}}`, 413, errBody("Request body too large")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("POST", "/api/external/applications", tt.key, tt.body), tt.status, tt.want)
		})
	}
	if n := len(e.mail.messages()); n != 0 {
		t.Errorf("%d invites sent for refused creates", n)
	}
}

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	slugPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{32}$`)
	codePattern = regexp.MustCompile(`^[A-Za-z0-9]{32}$`)
)

func TestCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	tests := []struct {
		name       string
		key        string
		body       string
		wantFields map[string]any
		wantLink   string // prefix
		preAuth    bool
	}{
		{
			name: "GB registry company, pre-filled",
			key:  "acme",
			body: `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"gb","company_number":"10000001","company_name":"Northwind Trading Ltd","pre_auth":true}`,
			wantFields: map[string]any{
				"company_name": "NORTHWIND TRADING LIMITED", "company_number": "10000001", "company_country": "GB",
				"company_type": "private_limited", "incorporation_date": "2018-04-16",
				"registered_address": map[string]any{"line1": "Unit 2, 14 Harbour Road", "line2": "Spike Island", "city": "Bristol", "postcode": "BS1 6XX", "country": "GB"},
			},
			wantLink: "https://onboard.test/a/",
			preAuth:  true,
		},
		{
			name: "IE name with accents folded",
			key:  "acme",
			body: `{"primary_contact":{"email":"eoin@example.ie"},"country":"IE","company_number":"100003","company_name":"Baile Atha Cliath Teo"}`,
			wantFields: map[string]any{
				"company_name": "BAILE ÁTHA CLIATH TEORANTA", "company_number": "100003", "company_country": "IE",
				"company_type": "private_limited", "incorporation_date": "2004-11-08",
				"registered_address": map[string]any{"line1": "4 SRÁID NA MAINISTREACH", "city": "BAILE ÁTHA CLIATH 1", "region": "BAILE ÁTHA CLIATH, Ireland", "postcode": "D01 XX03", "country": "IE"},
			},
			wantLink: "https://onboard.test/a/",
		},
		{
			name:       "country without a registry keeps the partner's values",
			key:        "acme",
			body:       `{"primary_contact":{"email":"marie@example.fr"},"country":"FR","company_number":"552 100 554","company_name":"Exemple SARL"}`,
			wantFields: map[string]any{"company_name": "Exemple SARL", "company_number": "552 100 554", "company_country": "FR"},
			wantLink:   "https://onboard.test/a/",
		},
		{
			name:       "company selection without a number",
			key:        "acme",
			body:       `{"primary_contact":{"email":"a@example.com"},"config_id":"acme-select","country":"GB"}`,
			wantFields: map[string]any{"company_country": "GB"},
			wantLink:   "https://onboard.test/a/",
		},
		{
			name: "custom domain link",
			key:  "globex",
			body: `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"SC100007","company_name":"Highland Fisheries Limited"}`,
			wantFields: map[string]any{
				"company_name": "HIGHLAND FISHERIES LTD", "company_number": "SC100007", "company_country": "GB",
				"company_type": "private_limited", "incorporation_date": "2015-06-22",
				"registered_address": map[string]any{"line1": "Pier Office, 3 Shore Street", "city": "Ullapool", "region": "Ross-shire", "postcode": "IV26 2XX", "country": "GB"},
			},
			wantLink: "https://onboarding.globex.example/a/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.mail.messages())
			w := e.do("POST", "/api/external/applications", tt.key, tt.body)
			if w.Code != http.StatusCreated {
				t.Fatalf("status = %d: %s", w.Code, w.Body)
			}
			res := decode(t, w)
			id, _ := res["application_id"].(string)
			if !uuidPattern.MatchString(id) {
				t.Errorf("application_id %q is not a UUID", id)
			}
			parts := res["participants"].([]any)
			if len(parts) != 1 {
				t.Fatalf("participants = %v, want one", parts)
			}
			p := parts[0].(map[string]any)
			slug := p["link_slug"].(string)
			if !slugPattern.MatchString(slug) || p["role"] != "primary" || !uuidPattern.MatchString(p["id"].(string)) {
				t.Errorf("participant = %v", p)
			}
			if got, want := res["link"], tt.wantLink+slug; got != want {
				t.Errorf("link = %v, want %v", got, want)
			}
			code, hasCode := res["pre_auth_code"].(string)
			if hasCode != tt.preAuth || (tt.preAuth && !codePattern.MatchString(code)) {
				t.Errorf("pre_auth_code = %q (present %v), want present %v", code, hasCode, tt.preAuth)
			}
			if _, ok := res["warning"]; ok {
				t.Errorf("unexpected warning %v", res["warning"])
			}
			got := decode(t, e.do("GET", "/api/external/applications/"+id, tt.key, ""))
			if got["status"] != "sent" {
				t.Errorf("status = %v, want sent (the invite was accepted)", got["status"])
			}
			if diff := cmp.Diff(tt.wantFields, got["data"].(map[string]any)["fields"]); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			msgs := e.mail.messages()
			if len(msgs) != before+1 {
				t.Fatalf("invites sent = %d, want 1", len(msgs)-before)
			}
			if m := msgs[len(msgs)-1]; m.Link != res["link"] || !strings.Contains(m.Text, m.Link) {
				t.Errorf("invite link %q / text %q, want the application link %v", m.Link, m.Text, res["link"])
			}
		})
	}
}

// refusingSMTP accepts connections and refuses them with 554, as a mail
// server that will not take our mail does.
func refusingSMTP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("554 5.7.1 no mail accepted here\r\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestCreateWhenTheInviteFails(t *testing.T) {
	smtp, err := notify.NewSMTP("smtp://"+refusingSMTP(t), "onboard@example.com", notify.SMTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{mailer: smtp})
	w := e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("status = %d: %s", w.Code, w.Body)
	}
	res := decode(t, w)
	if res["warning"] != onboarding.InviteWarning {
		t.Errorf("warning = %v, want %q", res["warning"], onboarding.InviteWarning)
	}
	id := res["application_id"].(string)
	got := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))
	if got["status"] != "created" {
		t.Errorf("status = %v, want created", got["status"])
	}
	log, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range log {
		actions = append(actions, a.Action)
	}
	if diff := cmp.Diff([]string{onboarding.ActionCreated, onboarding.ActionInviteFailed}, actions); diff != "" {
		t.Errorf("activity (-want +got):\n%s", diff)
	}
	if !strings.Contains(log[1].Detail, "554") {
		t.Errorf("invite failure detail %q does not carry the server's reply", log[1].Detail)
	}
}

func TestCreateWithoutMailTransport(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mail.fail = errors.New("relay down")
	res := decode(t, e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`))
	if res["warning"] != onboarding.InviteWarning {
		t.Errorf("warning = %v", res["warning"])
	}
}
