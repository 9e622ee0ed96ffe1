package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/server/form"
	"onboard/storage/storetest"
)

// applicant is a browser at a participant's link: it keeps the session
// cookie and the page's CSRF token between requests.
type applicant struct {
	t      testing.TB
	e      *env
	host   string
	base   string // /a/{slug}
	cookie *http.Cookie
	csrf   string
	last   *httptest.ResponseRecorder
}

// applicantAt opens the form of the participant whose link is link.
func (e *env) applicantAt(t testing.TB, link string) *applicant {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return &applicant{t: t, e: e, host: u.Host, base: u.Path}
}

// primaryLink returns the link of an application's primary participant.
func (e *env) primaryLink(t testing.TB, id string) string {
	t.Helper()
	app, err := e.store.Application(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e.svc.ParticipantLink(app, app.Primary())
}

var csrfPattern = regexp.MustCompile(`name="csrf-token" content="([^"]+)"`)

// send makes one request as the browser would and remembers the cookie
// and the CSRF token of the page it gets.
func (a *applicant) send(r *http.Request) *httptest.ResponseRecorder {
	r.Host = a.host
	if a.cookie != nil {
		r.AddCookie(a.cookie)
	}
	w := httptest.NewRecorder()
	a.e.h.ServeHTTP(w, r)
	for _, c := range w.Result().Cookies() {
		if c.Name == form.SessionCookie {
			a.cookie = c
		}
	}
	if m := csrfPattern.FindSubmatch(w.Body.Bytes()); m != nil {
		a.csrf = html.UnescapeString(string(m[1]))
	}
	a.last = w
	return w
}

func (a *applicant) get(path string) *httptest.ResponseRecorder {
	return a.send(httptest.NewRequest("GET", a.base+path, nil))
}

// post sends a form post with the page's CSRF token (unless form sets one).
func (a *applicant) post(path string, form url.Values) *httptest.ResponseRecorder {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", a.csrf)
	}
	r := httptest.NewRequest("POST", a.base+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return a.send(r)
}

// upload posts a file for a document field as the documents page does.
func (a *applicant) upload(field, person, name, contentType string, content []byte) *httptest.ResponseRecorder {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", a.csrf)
	_ = mw.WriteField("field", field)
	if person != "" {
		_ = mw.WriteField("person", person)
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, name)}
	h["Content-Type"] = []string{contentType}
	part, _ := mw.CreatePart(h)
	_, _ = part.Write(content)
	_ = mw.Close()
	r := httptest.NewRequest("POST", a.base+"/documents", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	return a.send(r)
}

// signIn verifies by email: sends a code and enters the one received.
func (a *applicant) signIn() {
	a.t.Helper()
	a.get("")
	if w := a.post("/verify/send", nil); w.Code != http.StatusSeeOther {
		a.t.Fatalf("send code = %d %s", w.Code, w.Body)
	}
	code := a.e.lastCode(a.t)
	if w := a.post("/verify", url.Values{"code": {code}}); w.Code != http.StatusSeeOther {
		a.t.Fatalf("verify = %d %s", w.Code, w.Body)
	}
	a.get("")
}

var verifyCodePattern = regexp.MustCompile(`\n    ([0-9]{6})\n`)

// lastCode returns the code of the newest verification email.
func (e *env) lastCode(t testing.TB) string {
	t.Helper()
	msgs := e.mail.messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := verifyCodePattern.FindStringSubmatch(msgs[i].Text); m != nil {
			return m[1]
		}
	}
	t.Fatal("no verification email was sent")
	return ""
}

// wantPage asserts a page's status and that its text contains each of want.
func wantPage(t *testing.T, w *httptest.ResponseRecorder, status int, want ...string) {
	t.Helper()
	if w.Code != status {
		t.Errorf("status = %d, want %d", w.Code, status)
	}
	body := html.UnescapeString(w.Body.String())
	for _, s := range want {
		if !strings.Contains(body, s) {
			t.Errorf("page does not contain %q:\n%s", s, pageText(body))
		}
	}
}

// pageText is a page's main element, for failure messages.
func pageText(body string) string {
	if i := strings.Index(body, "<main"); i >= 0 {
		body = body[i:]
	}
	if i := strings.Index(body, "</main>"); i >= 0 {
		body = body[:i]
	}
	return body
}

func wantRedirect(t *testing.T, w *httptest.ResponseRecorder, location string) {
	t.Helper()
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != location {
		t.Errorf("got %d to %q, want 303 to %q\n%s", w.Code, w.Header().Get("Location"), location, w.Body)
	}
}

// wantInvited asserts a redirect to the collaborators page after an
// invitation, naming the invited participant by their id.
func wantInvited(t *testing.T, w *httptest.ResponseRecorder, base string) {
	t.Helper()
	prefix := base + "/collaborators?done=invited&id="
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) || len(loc) == len(prefix) {
		t.Errorf("got %d to %q, want 303 to %s{id}\n%s", w.Code, loc, prefix, w.Body)
	}
}

// wantSaved asserts a redirect to the people page after saving a record
// of kind (person, entity, ownership), naming the record by its id.
func wantSaved(t *testing.T, w *httptest.ResponseRecorder, base, kind string) {
	t.Helper()
	prefix := base + "/s/people?done=" + kind + "&id="
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) || len(loc) == len(prefix) {
		t.Errorf("got %d to %q, want 303 to %s{id}\n%s", w.Code, loc, prefix, w.Body)
	}
}

// apiApp returns get-application's body.
func (e *env) apiApp(t *testing.T, id string) map[string]any {
	t.Helper()
	w := e.do("GET", "/api/external/applications/"+id, "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("get = %d %s", w.Code, w.Body)
	}
	return decode(t, w)
}

func (e *env) activity(t *testing.T, id, action string) int {
	t.Helper()
	acts, err := storetest.Activity(context.Background(), e.store, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range acts {
		if a.Action == action {
			n++
		}
	}
	return n
}

func TestFormUnknownLink(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, path := range []string{"/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/a/short", "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/s/company"} {
		a := e.applicantAt(t, "https://onboard.test"+path)
		w := a.get("")
		wantPage(t, w, http.StatusNotFound, "This link does not work", onboarding.ErrFormNotFound.Message)
	}
}

func TestFormVerification(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))

	w := a.get("")
	wantPage(t, w, http.StatusOK, "Confirm it is you", "j•••@northwind.example", "Send me a code", "Acme Payments")
	if got := e.apiApp(t, id)["status"]; got != "sent" {
		t.Errorf("status before sign-in = %v, want sent", got)
	}
	if a.cookie == nil || a.csrf == "" {
		t.Fatal("the verification page set no session cookie or CSRF token")
	}

	// A form page before sign-in goes back to the start.
	wantRedirect(t, a.get("/s/company"), a.base)
	wantPage(t, a.post("/s/company", url.Values{"industry": {"software"}}), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)

	wantPage(t, a.post("/verify", url.Values{"code": {"123456"}}), http.StatusBadRequest, onboarding.ErrNoCodeSent.Message)
	wantRedirect(t, a.post("/verify/send", nil), a.base+"?done=sent")
	msgs := e.mail.messages()
	last := msgs[len(msgs)-1]
	if last.To != "jane@northwind.example" || !strings.Contains(last.Subject, "verification code") {
		t.Errorf("verification email = %+v", last)
	}
	code := e.lastCode(t)
	wantPage(t, a.get("?done=sent"), http.StatusOK, "We have sent a 6-digit code", "We have sent you a new code.")

	// Asking again at once is refused; after 30 s a new code replaces the old.
	wantPage(t, a.post("/verify/send", nil), http.StatusTooManyRequests, "A code was sent moments ago. Wait 30 seconds before asking for another.")

	wantPage(t, a.post("/verify", url.Values{"code": {"12ab"}}), http.StatusBadRequest, onboarding.ErrCodeFormat.Message)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for i, want := range []string{
		"That code is not right. You have 4 more tries.",
		"That code is not right. You have 3 more tries.",
		"That code is not right. You have 2 more tries.",
		"That code is not right. You have 1 more try.",
		onboarding.ErrCodeExhausted.Message,
	} {
		wantPage(t, a.post("/verify", url.Values{"code": {wrong}}), http.StatusBadRequest, want)
		_ = i
	}
	// Exhausted: even the right code no longer works.
	wantPage(t, a.post("/verify", url.Values{"code": {code}}), http.StatusBadRequest, onboarding.ErrCodeExhausted.Message)

	e.clock.Advance(31 * time.Second)
	wantRedirect(t, a.post("/verify/send", nil), a.base+"?done=sent")
	code = e.lastCode(t)
	e.clock.Advance(onboarding.VerifyCodeTTL)
	wantPage(t, a.post("/verify", url.Values{"code": {code}}), http.StatusBadRequest, onboarding.ErrCodeExpired.Message)

	e.clock.Advance(time.Second)
	a.post("/verify/send", nil)
	code = e.lastCode(t)
	w = a.post("/verify", url.Values{"code": {code[:3] + " " + code[3:]}})
	wantRedirect(t, w, a.base+"?done=verified")
	c := a.cookie
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || !c.Secure || c.Path != a.base || c.MaxAge != int(form.DefaultSessionTimeout.Seconds()) {
		t.Errorf("session cookie = %+v, want HttpOnly, SameSite=Lax, Secure, Path %s, 12 h", c, a.base)
	}
	wantPage(t, a.get("?done=verified"), http.StatusOK, "Your email address is confirmed.", "Company details", "Check your answers and send")

	app := e.apiApp(t, id)
	if app["status"] != "in_progress" {
		t.Errorf("status after sign-in = %v, want in_progress", app["status"])
	}
	// Opening again changes nothing.
	a.get("")
	a.get("/s/company")
	if n := e.activity(t, id, onboarding.ActionOpened); n != 1 {
		t.Errorf("%d application.opened entries, want 1", n)
	}
	// Refresh pre-auth now reports the verified email.
	w = e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", "")
	if got := decode(t, w)["already_verified"]; got != true {
		t.Errorf("already_verified = %v, want true", got)
	}

	// The session ends after 12 hours without use.
	e.clock.Advance(form.DefaultSessionTimeout + time.Second)
	wantRedirect(t, a.get("/s/company"), a.base)
}

func TestFormVerificationMailFailure(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.get("")
	e.mail.mu.Lock()
	e.mail.fail = fmt.Errorf("smtp down")
	e.mail.mu.Unlock()
	wantPage(t, a.post("/verify/send", nil), http.StatusServiceUnavailable, onboarding.ErrCodeSendFailed.Message)
}

func TestFormCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	other := e.applicantAt(t, e.primaryLink(t, id))
	other.get("") // another browser: its own anonymous session and token

	wrong := "x" + a.csrf[1:]
	if wrong == a.csrf { // the token is random: it may start with x
		wrong = "y" + a.csrf[1:]
	}
	for name, token := range map[string]string{"missing": "", "wrong": wrong, "another session's": other.csrf} {
		t.Run(name, func(t *testing.T) {
			w := a.post("/s/business", url.Values{"csrf": {token}, "business_description": {"Payments"}})
			wantPage(t, w, http.StatusForbidden, onboarding.ErrCSRF.Message)
			a.last = nil
		})
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", "forged")
	_ = mw.WriteField("field", "certificate_of_incorporation")
	fw, _ := mw.CreateFormFile("file", "c.pdf")
	_, _ = fw.Write(testPDF(t))
	_ = mw.Close()
	r := httptest.NewRequest("POST", a.base+"/documents", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	wantPage(t, a.send(r), http.StatusForbidden, onboarding.ErrCSRF.Message)

	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["business_description"] != nil {
		t.Errorf("a refused post changed business_description to %v", fields["business_description"])
	}
	if docs := e.apiApp(t, id)["data"].(map[string]any)["documents"].(map[string]any); len(docs) != 0 {
		t.Errorf("a refused upload stored %v", docs)
	}

	// A multipart post anywhere but the upload carries no token the
	// middleware reads: refused before it can clear a stage or submit.
	a.post("/s/business", url.Values{"business_description": {"Kept"}})
	for _, path := range []string{"/s/business", "/submit", "/collaborators", "/verify/send"} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("csrf", a.csrf)
		_ = mw.WriteField("email", "x@example.com")
		_ = mw.Close()
		r := httptest.NewRequest("POST", a.base+path, &body)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		wantPage(t, a.send(r), http.StatusForbidden, onboarding.ErrCSRF.Message)
	}
	if got := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)["business_description"]; got != "Kept" {
		t.Errorf("business_description = %v after multipart posts, want Kept", got)
	}
}

func TestFormPreAuth(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
	created := decode(t, w)
	id, code := created["application_id"].(string), created["pre_auth_code"].(string)
	link := e.primaryLink(t, id)

	// Unknown and expired codes lead to email verification, with no error.
	a := e.applicantAt(t, link)
	wantRedirect(t, a.get("?auth_code=WRONGWRONGWRONGWRONGWRONGWRONGWR"), a.base)
	wantPage(t, a.get(""), http.StatusOK, "Confirm it is you")
	if strings.Contains(a.last.Body.String(), "There is a problem") {
		t.Error("an unknown code shows an error")
	}

	a = e.applicantAt(t, link)
	w = a.get("?auth_code=" + code)
	wantRedirect(t, w, a.base)
	wantPage(t, a.get(""), http.StatusOK, "Company details")
	if got := e.apiApp(t, id)["status"]; got != "in_progress" {
		t.Errorf("status = %v, want in_progress", got)
	}
	// A pre-auth code proves nothing about the email address.
	w = e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", "")
	refreshed := decode(t, w)
	if refreshed["already_verified"] != false {
		t.Errorf("already_verified = %v, want false", refreshed["already_verified"])
	}
	// The refresh revoked the first code; the browser it opened carries
	// on (a partner fetching a new link must not sign out an applicant
	// mid-form).
	b := e.applicantAt(t, link)
	wantRedirect(t, b.get("?auth_code="+code), b.base)
	wantPage(t, b.get(""), http.StatusOK, "Confirm it is you")
	wantPage(t, a.get("/s/company"), http.StatusOK, "Company details")

	// The new code signs in; signing out revokes it, so that the link in
	// the browser's history does not sign the next user in.
	c := e.applicantAt(t, link)
	wantRedirect(t, c.get("?auth_code="+refreshed["pre_auth_code"].(string)), c.base)
	wantPage(t, c.get(""), http.StatusOK, "Company details")
	wantRedirect(t, c.post("/sign-out", nil), c.base+"/signed-out")
	next := e.applicantAt(t, link)
	wantRedirect(t, next.get("?auth_code="+refreshed["pre_auth_code"].(string)), next.base)
	wantPage(t, next.get(""), http.StatusOK, "Confirm it is you")

	// A code works until it expires, then email verification.
	last := decode(t, e.do("POST", "/api/external/applications/"+id+"/pre-auth", "acme", ""))["pre_auth_code"].(string)
	e.clock.Advance(onboarding.PreAuthTTL - time.Second)
	d := e.applicantAt(t, link)
	wantRedirect(t, d.get("?auth_code="+last), d.base)
	wantPage(t, d.get(""), http.StatusOK, "Company details")
	e.clock.Advance(time.Second)
	f := e.applicantAt(t, link)
	wantRedirect(t, f.get("?auth_code="+last), f.base)
	wantPage(t, f.get(""), http.StatusOK, "Confirm it is you")
}

func TestFormCustomDomain(t *testing.T) {
	e := newEnv(t, envOptions{})
	globex := e.create(t, "globex", `{"primary_contact":{"email":"g@globex.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)
	link := e.primaryLink(t, globex)
	if !strings.HasPrefix(link, "https://onboarding.globex.example/a/") {
		t.Fatalf("globex link = %s", link)
	}
	wantPage(t, e.applicantAt(t, link).get(""), http.StatusOK, "Globex", "Confirm it is you")

	// Another organization's link is not served on Globex's domain.
	acme := e.primaryLink(t, e.create(t, "acme", ""))
	u, _ := url.Parse(acme)
	a := e.applicantAt(t, "https://onboarding.globex.example"+u.Path)
	wantPage(t, a.get(""), http.StatusNotFound, onboarding.ErrFormNotFound.Message)
}

// testPDF is a real one-page PDF from the registry fixtures.
func testPDF(t testing.TB) []byte {
	t.Helper()
	paths, _ := filepath.Glob("../testdata/registry/companies-house/documents/*.pdf")
	if len(paths) == 0 {
		t.Fatal("no fixture PDF")
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFormStageSaveUsesPatchRules(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()

	// Every field type, with a wrong value: the form shows PATCH's own
	// message for each field.
	bad := url.Values{
		"business_description":             {strings.Repeat("x", 2001)},
		"countries_of_operation":           {"GB", "XX"},
		"annual_turnover.amount":           {"lots"},
		"annual_turnover.currency":         {"GBP"},
		"high_risk_revenue_percentage":     {"101"},
		"regulated_entity":                 {"maybe"},
		"bank_account_iban":                {"GB00WEST12345698765432"},
		"expected_monthly_volume.amount":   {"10"},
		"expected_monthly_volume.currency": {"JPY"},
	}
	w := a.post("/s/business", bad)
	patchBody := `{"fields":{
		"business_description":"` + strings.Repeat("x", 2001) + `",
		"countries_of_operation":["GB","XX"],
		"annual_turnover":{"amount":"lots","currency":"GBP"},
		"high_risk_revenue_percentage":101,
		"bank_account_iban":"GB00WEST12345698765432",
		"expected_monthly_volume":{"amount":10,"currency":"JPY"}}}`
	patch := e.do("PATCH", "/api/external/applications/"+id, "acme", patchBody)
	details := decode(t, patch)["details"].(map[string]any)
	if len(details) != 6 {
		t.Fatalf("PATCH details = %v", details)
	}
	var patched struct{ Fields map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(patchBody), &patched); err != nil {
		t.Fatal(err)
	}
	// The form says the same in plain words (TestPlainErrors has them all).
	var want []string
	for id, reason := range details {
		f, _ := onboarding.StandardForm().Field(id)
		_, err := f.Normalize(patched.Fields[id], time.Now())
		var pr onboarding.Problem
		if !errors.As(err, &pr) || pr.Message() != reason {
			t.Fatalf("%s: Normalize gives %v, PATCH %q", id, err, reason)
		}
		want = append(want, form.FieldMessages(f, pr)...)
	}
	// A boolean that is neither choice is refused, not taken as no answer.
	want = append(want, `<a href="#regulated_entity">Select yes or no</a>`)
	wantPage(t, w, http.StatusBadRequest, append(want, "There is a problem", `value="lots"`,
		`<a href="#annual_turnover.amount">Enter the annual turnover in numbers, like 250000</a>`,
		"Enter a real IBAN, like GB82 WEST 1234 5698 7654 32")...)
	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["high_risk_revenue_percentage"] != nil {
		t.Error("a failed save stored a value")
	}

	good := url.Values{
		"business_description":             {"We sell accounting software to small firms."},
		"countries_of_operation":           {"GB", "IE"},
		"annual_turnover.amount":           {"250,000"},
		"annual_turnover.currency":         {"GBP"},
		"high_risk_revenue_percentage":     {"2.5"},
		"regulated_entity":                 {"false"},
		"bank_account_iban":                {"GB82 WEST 1234 5698 7654 32"},
		"expected_monthly_volume.amount":   {""},
		"expected_monthly_volume.currency": {"GBP"},
		"action":                           {"save"},
	}
	wantRedirect(t, a.post("/s/business", good), a.base+"?done=saved")
	fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)
	got := map[string]any{}
	for _, k := range []string{"business_description", "countries_of_operation", "annual_turnover", "high_risk_revenue_percentage", "regulated_entity", "bank_account_iban", "expected_monthly_volume"} {
		got[k] = fields[k]
	}
	wantFields := map[string]any{
		"business_description":         "We sell accounting software to small firms.",
		"countries_of_operation":       []any{"GB", "IE"},
		"annual_turnover":              map[string]any{"amount": 250000.0, "currency": "GBP"},
		"high_risk_revenue_percentage": 2.5,
		"regulated_entity":             false,
		"bank_account_iban":            "GB82WEST12345698765432",
		"expected_monthly_volume":      nil,
	}
	if diff := cmp.Diff(wantFields, got); diff != "" {
		t.Errorf("saved fields (-want +got):\n%s", diff)
	}
	// The page shows what was saved; "continue" goes to the next stage.
	wantPage(t, a.get("/s/business"), http.StatusOK, `value="250000"`, `value="GB82WEST12345698765432"`, `id="regulated_entity-no" name="regulated_entity" value="false" checked`)
	wantRedirect(t, a.post("/s/business", good2(good)), a.base+"/s/people")

	// What the partner pre-filled through PATCH is in the controls.
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"retail","website":"https://northwind.example","trading_address":{"line1":"1 Quay St","city":"Bristol","postcode":"BS1 4DJ","country":"GB"}}}`); w.Code != http.StatusOK {
		t.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}
	wantPage(t, a.get("/s/company"), http.StatusOK, `<option value="retail" selected>`, `value="https://northwind.example"`,
		`id="trading_address.line1" name="trading_address.line1" value="1 Quay St"`, `value="BS1 4DJ"`, `value="NORTHWIND TRADING LIMITED"`)

	// The registry's name and number cannot be changed in the form.
	a.get("/s/company")
	a.post("/s/company", url.Values{"company_name": {"SOMETHING ELSE LTD"}, "company_number": {"99999999"}, "industry": {"software"}})
	fields = e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)
	if fields["company_name"] != "NORTHWIND TRADING LIMITED" || fields["company_number"] != "10000001" || fields["industry"] != "software" {
		t.Errorf("company fields = %v %v %v", fields["company_name"], fields["company_number"], fields["industry"])
	}
	wantPage(t, a.get("/s/nowhere"), http.StatusNotFound, onboarding.ErrStageNotFound.Message)
}

func good2(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	out.Set("action", "continue")
	return out
}

// personID returns the id of the person named name in get-application.
func personID(t *testing.T, app map[string]any, name string) string {
	t.Helper()
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		p := p.(map[string]any)
		if p["full_name"] == name {
			return p["id"].(string)
		}
	}
	t.Fatalf("no person %q", name)
	return ""
}

func TestFormPeopleEntitiesOwnership(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	wantPage(t, a.get("/s/people"), http.StatusOK, "From the company register", "Add a person")

	// Adding a person: name and a role are required.
	wantPage(t, a.post("/people/new", url.Values{"person_email": {"not-an-email"}}), http.StatusBadRequest,
		"Roles: choose at least one role", "Enter the full legal name",
		"Enter an email address in the correct format, like name@example.com")
	w := a.post("/people/new", url.Values{
		"roles": {"ubo", "shareholder"}, "person_full_name": {"Maria  de la Cruz"}, "person_date_of_birth.day": {"29"}, "person_date_of_birth.month": {"2"}, "person_date_of_birth.year": {"1980"},
		"person_nationality": {"ES"}, "person_email": {"maria@example.com"}, "person_phone": {"+34 600 000 000"},
		"person_home_address.line1": {"Calle Mayor 1"}, "person_home_address.city": {"Madrid"}, "person_home_address.country": {"es"},
	})
	wantSaved(t, w, a.base, "person")
	wantPage(t, a.get(strings.TrimPrefix(w.Header().Get("Location"), a.base)), http.StatusOK, "Maria de la Cruz has been saved.")
	app := e.apiApp(t, id)
	maria := personID(t, app, "Maria de la Cruz")
	var got map[string]any
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		if p.(map[string]any)["id"] == maria {
			got = p.(map[string]any)
		}
	}
	want := map[string]any{
		"id": maria, "source": "user_added", "roles": []any{"ubo", "shareholder"}, "full_name": "Maria de la Cruz",
		"first_name": "Maria de la", "last_name": "Cruz", "email": "maria@example.com", "phone_number": "+34600000000",
		"date_of_birth": "1980-02-29", "nationality": "ES", "documents": map[string]any{},
		"home_address": map[string]any{"line1": "Calle Mayor 1", "city": "Madrid", "country": "ES"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("added person (-want +got):\n%s", diff)
	}

	// A registry director keeps name and roles but gets other details.
	var director map[string]any
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["source"] == "registry" && director == nil {
			director = p
		}
	}
	did := director["id"].(string)
	wantPage(t, a.get("/people/"+did), http.StatusOK, "This person is on the company register")
	// The register gives only the month and year of birth: the form shows
	// them with the day empty, and they stay partial through an error
	// and a save that leaves them as they were.
	partial := director["date_of_birth"].(string)
	year, month, _ := strings.Cut(partial, "-")
	month = strings.TrimPrefix(month, "0")
	dateShown := []string{`id="person_date_of_birth.day" name="person_date_of_birth.day" value=""`,
		`id="person_date_of_birth.month" name="person_date_of_birth.month" value="` + month + `"`,
		`id="person_date_of_birth.year" name="person_date_of_birth.year" value="` + year + `"`}
	wantPage(t, a.get("/people/"+did), http.StatusOK, dateShown...)
	keep := func(email string) url.Values {
		return url.Values{"person_email": {email}, "person_date_of_birth.month": {month}, "person_date_of_birth.year": {year}}
	}
	wantPage(t, a.post("/people/"+did, keep("nope")), http.StatusBadRequest, append(dateShown, "Enter an email address in the correct format")...)
	wantSaved(t, a.post("/people/"+did, keep("d@northwind.example")), a.base, "person")
	for _, p := range e.apiApp(t, id)["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["id"] == did && p["date_of_birth"] != partial {
			t.Errorf("date of birth after a save = %v, want %s", p["date_of_birth"], partial)
		}
	}
	w = a.post("/people/"+did, url.Values{"person_date_of_birth.month": {"13"}, "person_date_of_birth.year": {year}})
	wantPage(t, w, http.StatusBadRequest, "Date of birth must include a day")
	w = a.post("/people/"+did, url.Values{"person_date_of_birth.day": {"1"}, "person_date_of_birth.month": {"1"}, "person_date_of_birth.year": {"2999"}})
	wantPage(t, w, http.StatusBadRequest, "Date of birth must be today or in the past")
	w = a.post("/people/"+did, url.Values{"roles": {"shareholder"}, "person_full_name": {"Someone Else"}, "person_email": {"d@northwind.example"}})
	wantSaved(t, w, a.base, "person")
	for _, p := range e.apiApp(t, id)["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["id"] == did {
			if p["full_name"] != director["full_name"] || !cmp.Equal(p["roles"], director["roles"]) || p["email"] != "d@northwind.example" {
				t.Errorf("registry person after edit = %v", p)
			}
		}
	}
	wantPage(t, a.post("/people/"+did+"/remove", nil), http.StatusBadRequest, onboarding.ErrRegistryRecord.Message)

	// Entities.
	wantPage(t, a.post("/entities/new", url.Values{"type": {"cousin"}, "country": {"Ireland"}}), http.StatusBadRequest,
		"Enter the legal name", "Select the relationship to your company from the list",
		"Enter the country of registration as a two-letter country code, like GB or IE")
	wantSaved(t, a.post("/entities/new", url.Values{"name": {"Maria Holdings SL"}, "type": {"holding_company"}, "country": {"es"}}), a.base, "entity")
	var holding string
	for _, en := range e.apiApp(t, id)["data"].(map[string]any)["entities"].([]any) {
		if en := en.(map[string]any); en["name"] == "Maria Holdings SL" {
			holding = en["id"].(string)
			if en["country"] != "ES" || en["type"] != "holding_company" || en["source"] != "user_added" {
				t.Errorf("entity = %v", en)
			}
		}
	}

	// Ownership: Northwind's registry PSC already holds 75% (the lower
	// bound of 75-100), so 20% more is fine and 10% more is not.
	wantSaved(t, a.post("/ownership/new", url.Values{"owner": {"entity:" + holding}, "owned": {"target"}, "percentage": {"20"}, "is_direct": {"true"}}), a.base, "ownership")
	w = a.post("/ownership/new", url.Values{"owner": {"person:" + maria}, "owned": {"target"}, "percentage": {"10"}, "is_direct": {"true"}})
	wantPage(t, w, http.StatusBadRequest, "Ownership of NORTHWIND TRADING LIMITED would add up to 105%, more than 100%. Already stated: Eleanor Mary Hargreaves holds at least 75% (from the company register); Maria Holdings SL holds 20%. Check the percentages.")
	// Indirect holdings are counted apart from direct ones.
	wantSaved(t, a.post("/ownership/new", url.Values{"owner": {"person:" + maria}, "owned": {"target"}, "percentage": {"20"}, "is_direct": {"false"}, "is_nominee": {"true"}}), a.base, "ownership")
	wantPage(t, a.post("/ownership/new", url.Values{"owner": {"person:" + maria}, "owned": {"entity:" + holding}, "percentage": {"100.5"}}), http.StatusBadRequest, "Enter the share of the company they own (%) as a number from 0 to 100")
	wantPage(t, a.post("/ownership/new", url.Values{"owner": {"entity:" + holding}, "owned": {"entity:" + holding}, "percentage": {"5"}}), http.StatusBadRequest, "a company cannot own itself")
	wantSaved(t, a.post("/ownership/new", url.Values{"owner": {"person:" + maria}, "owned": {"entity:" + holding}, "percentage": {"100"}}), a.base, "ownership")

	own := e.apiApp(t, id)["data"].(map[string]any)["ownership"].([]any)
	if len(own) != 4 {
		t.Fatalf("ownership rows = %d, want 4: %v", len(own), own)
	}
	last := own[3].(map[string]any)
	if last["owner_id"] != maria || last["owned_type"] != "entity" || last["owned_id"] != holding || last["percentage"] != 100.0 || last["is_direct"] != true {
		t.Errorf("last ownership row = %v", last)
	}

	// Removing the entity removes its ownership rows; removing Maria hers.
	wantRedirect(t, a.post("/entities/"+holding+"/remove", nil), a.base+"/s/people?done=removed")
	if own := e.apiApp(t, id)["data"].(map[string]any)["ownership"].([]any); len(own) != 2 {
		t.Errorf("after removing the entity, %d ownership rows, want 2", len(own))
	}
	wantRedirect(t, a.post("/people/"+maria+"/remove", nil), a.base+"/s/people?done=removed")
	if own := e.apiApp(t, id)["data"].(map[string]any)["ownership"].([]any); len(own) != 1 {
		t.Errorf("after removing Maria, %d ownership rows, want 1 (the registry's)", len(own))
	}
	wantPage(t, a.get("/people/"+maria), http.StatusNotFound, onboarding.ErrPersonNotFound.Message)
}

func TestFormUploads(t *testing.T) {
	e := newEnv(t, envOptions{maxUpload: 64 << 10})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.get("/s/documents")
	pdf := testPDF(t)

	w := a.upload("certificate_of_incorporation", "", `C:\scans\cert.pdf`, "application/pdf", pdf)
	wantRedirect(t, w, a.base+"/s/documents?done=uploaded#doc-certificate_of_incorporation")
	// An HTML file that claims to be a PDF is rejected, shown to the
	// applicant with the reason and never to the API.
	w = a.upload("proof_of_address", "", "bill.pdf", "application/pdf", []byte("<html><script>alert(1)</script></html>"))
	wantRedirect(t, w, a.base+"/s/documents?done=rejected#doc-proof_of_address")
	wantPage(t, a.get("/s/documents?done=rejected"), http.StatusOK, "Not accepted", "bill.pdf: The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC.", "cert.pdf")

	// Over the limit: 413 with the page and nothing stored.
	big := append(append([]byte(nil), pdf...), bytes.Repeat([]byte{' '}, 64<<10)...)
	w = a.upload("bank_statement", "", "statement.pdf", "application/pdf", big)
	wantPage(t, w, http.StatusRequestEntityTooLarge, "The file is larger than 64 KB. Upload a smaller file.")

	// A person's document, for a registry director.
	app := e.apiApp(t, id)
	var director string
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["source"] == "registry" {
			director = p["id"].(string)
			break
		}
	}
	wantRedirect(t, a.upload("person_id_document", director, "passport.pdf", "application/pdf", pdf), a.base+"/s/documents?done=uploaded#doc-person_id_document-"+director)
	// Wrong targets.
	wantPage(t, a.upload("person_id_document", "", "p.pdf", "application/pdf", pdf), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
	wantPage(t, a.upload("certificate_of_incorporation", director, "p.pdf", "application/pdf", pdf), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
	wantPage(t, a.upload("industry", "", "p.pdf", "application/pdf", pdf), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
	wantPage(t, a.upload("certificate_of_incorporation", "", "", "application/pdf", nil), http.StatusBadRequest, onboarding.ErrNoFileChosen.Message)

	app = e.apiApp(t, id)
	docs := app["data"].(map[string]any)["documents"].(map[string]any)
	if len(docs) != 1 || docs["certificate_of_incorporation"] == nil {
		t.Fatalf("company documents in the API = %v, want only the accepted certificate", docs)
	}
	cert := docs["certificate_of_incorporation"].(map[string]any)
	if cert["file_name"] != "cert.pdf" || cert["file_type"] != "application/pdf" || cert["status"] != "accepted" || cert["acceptance_reason"] != "baseline_passed" {
		t.Errorf("certificate = %v", cert)
	}
	// Its download link serves the exact bytes.
	u, _ := url.Parse(cert["download_url"].(string))
	dl := httptest.NewRecorder()
	e.h.ServeHTTP(dl, httptest.NewRequest("GET", u.RequestURI(), nil))
	if dl.Code != http.StatusOK || !bytes.Equal(dl.Body.Bytes(), pdf) {
		t.Errorf("download = %d, %d bytes", dl.Code, dl.Body.Len())
	}
	files, _ := filepath.Glob(filepath.Join(blobDir(t, e), "*", "*", "*"))
	if len(files) != 3 {
		t.Errorf("%d files in the blob store, want 3 (certificate, rejected bill kept for an operator, passport)", len(files))
	}

	// Replacing a document deletes the old file.
	wantRedirect(t, a.upload("certificate_of_incorporation", "", "cert2.pdf", "application/pdf", pdf), a.base+"/s/documents?done=uploaded#doc-certificate_of_incorporation")
	files, _ = filepath.Glob(filepath.Join(blobDir(t, e), "*", "*", "*"))
	if len(files) != 3 {
		t.Errorf("%d files after replacing the certificate, want 3", len(files))
	}

	// The applicant removes the rejected file: its requirement is open
	// again and the file is gone.
	wantPage(t, a.get("/s/documents"), http.StatusOK, `id="remove-proof_of_address"`)
	wantRedirect(t, a.post("/documents/remove", url.Values{"field": {"proof_of_address"}}), a.base+"/s/documents?done=doc-removed#doc-proof_of_address")
	wantPage(t, a.get("/s/documents?done=doc-removed"), http.StatusOK, "The file has been removed.")
	if strings.Contains(a.last.Body.String(), "bill.pdf") {
		t.Error("the documents page still shows the removed file")
	}
	files, _ = filepath.Glob(filepath.Join(blobDir(t, e), "*", "*", "*"))
	if len(files) != 2 {
		t.Errorf("%d files after removing the rejected one, want 2", len(files))
	}
	if n := e.activity(t, id, onboarding.ActionDocumentRemoved); n != 1 {
		t.Errorf("%d document.removed entries, want 1", n)
	}
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"proof_of_address"}}), http.StatusNotFound, onboarding.ErrNoDocumentToRemove.Message)
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"industry"}}), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"certificate_of_incorporation"}, "csrf": {"forged"}}), http.StatusForbidden, onboarding.ErrCSRF.Message)

	// A document an operator forced stays.
	if _, err := e.svc.OverrideDocument(context.Background(), onboarding.DocumentOverride{AppID: id, FieldID: "person_id_document", PersonID: director, Reason: "checked by phone"}); err != nil {
		t.Fatal(err)
	}
	a.get("/s/documents")
	if strings.Contains(a.last.Body.String(), `id="remove-person_id_document-`+director+`"`) {
		t.Error("the documents page offers to remove a forced document")
	}
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"person_id_document"}, "person": {director}}), http.StatusBadRequest, onboarding.ErrDocumentSettled.Message)
	// A file that fails validation does not replace it either; one that
	// passes does.
	wantPage(t, a.upload("person_id_document", director, "scan.pdf", "application/pdf", []byte("not a pdf")), http.StatusBadRequest,
		"The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC. The document already settled by the team reviewing your application has been kept.")
	personDoc := func() map[string]any {
		for _, p := range e.apiApp(t, id)["data"].(map[string]any)["people"].([]any) {
			if p := p.(map[string]any); p["id"] == director {
				d, _ := p["documents"].(map[string]any)["person_id_document"].(map[string]any)
				return d
			}
		}
		return nil
	}
	if d := personDoc(); d == nil || d["status"] != "forced" || d["file_name"] != "passport.pdf" {
		t.Errorf("after a rejected upload over a forced document: %v", d)
	}
	a.get("/s/documents")
	wantRedirect(t, a.upload("person_id_document", director, "passport2.pdf", "application/pdf", pdf), a.base+"/s/documents?done=uploaded#doc-person_id_document-"+director)
	if d := personDoc(); d == nil || d["status"] != "accepted" || d["file_name"] != "passport2.pdf" {
		t.Errorf("after an accepted upload over a forced document: %v", d)
	}
	if docs := e.apiApp(t, id)["data"].(map[string]any)["documents"].(map[string]any); docs["certificate_of_incorporation"] == nil {
		t.Error("a refused removal changed the documents")
	}
}

// blobDir finds the blob store's directory.
func blobDir(t *testing.T, e *env) string {
	t.Helper()
	return e.blobsDir
}

func TestFormSubmission(t *testing.T) {
	e := newEnv(t, envOptions{})
	// Emerald (IE): the registry gives company fields only, so the
	// applicant adds every person.
	id := e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()

	// While anything is missing, the check-answers page lists it and
	// offers neither the declarations nor sending; the declarations are
	// not among the things still to do.
	w := a.get("/review")
	wantPage(t, w, http.StatusOK, "Check your answers before sending your application", "Now send your application",
		`<a href="`+a.base+`/s/company#industry">Add<span class="visually-hidden"> Industry</span></a>`,
		`<a href="`+a.base+`/s/documents#doc-certificate_of_incorporation">Upload<span class="visually-hidden"> Certificate of incorporation</span></a>`,
		"You cannot send your application yet. Complete the 5 things under “Still to do” first")
	if body := w.Body.String(); strings.Contains(body, "Confirm:") || strings.Contains(body, "submit-application") {
		t.Error("an incomplete application offers the declarations, or lists them as things to do")
	}
	if strings.Contains(w.Body.String(), "#company_name\">Change") {
		t.Error("the register's company name offers a Change link")
	}
	// A post anyway (a page left open) says what is missing first, not
	// which declarations to tick.
	w = a.post("/submit", url.Values{"confirm_terms": {"true"}})
	wantPage(t, w, http.StatusBadRequest, "The application cannot be submitted yet: 5 things are missing.")
	if strings.Contains(w.Body.String(), "Confirm that the information you have given") {
		t.Error("an incomplete application's send asks for the declarations before what is missing")
	}
	w = a.post("/submit", url.Values{"confirm_accuracy": {"true"}, "confirm_terms": {"true"}})
	wantPage(t, w, http.StatusBadRequest,
		"The application cannot be submitted yet: 5 things are missing.",
		"Industry is missing", "What the business does is missing", "Add at least one director",
		"Certificate of incorporation is missing", "Proof of business address is missing")
	if f := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); f["confirm_accuracy"] != nil {
		t.Errorf("a refused send stored the declarations: %v", f)
	}
	// accept is a post that ticks every declaration (each post adds its
	// CSRF token to the values, so each gets its own).
	accept := func() url.Values { return url.Values{"confirm_accuracy": {"true"}, "confirm_terms": {"true"}} }

	a.post("/s/company", url.Values{"industry": {"software"}, "registered_address.line1": {"1 Grand Canal Sq"}, "registered_address.city": {"Dublin"}, "registered_address.country": {"IE"}})
	a.post("/s/business", url.Values{"business_description": {"Software"}})
	wantSaved(t, a.post("/people/new", url.Values{"roles": {"director"}, "person_full_name": {"Ciara Byrne"}}), a.base, "person")
	ciara := personID(t, e.apiApp(t, id), "Ciara Byrne")
	pdf := testPDF(t)
	a.get("/s/documents")
	a.upload("certificate_of_incorporation", "", "cert.pdf", "application/pdf", pdf)
	a.upload("proof_of_address", "", "bill.pdf", "application/pdf", pdf)
	a.upload("person_id_document", ciara, "id.png", "image/png", []byte("not a png"))
	// The rejected file is an error: in the summary, linked to its input.
	w = a.get("/s/documents?done=rejected")
	wantPage(t, w, http.StatusOK, "There is a problem",
		`<a href="#file-person_id_document-`+ciara+`">Identity document for Ciara Byrne: id.png was not accepted.`,
		`Choose a file<span class="visually-hidden"> for Business bank statement</span>`,
		`Choose another file<span class="visually-hidden"> for Identity document for Ciara Byrne</span>`,
		// An uploaded file is one compact line: its name, Replace, Remove.
		`>cert.pdf<span class="visually-hidden"> (opens in a new tab)</span></a>, uploaded</p>`,
		`Replace<span class="visually-hidden"> cert.pdf, Certificate of incorporation</span>`,
		`Remove<span class="visually-hidden"> cert.pdf, Certificate of incorporation</span>`)
	if strings.Contains(w.Body.String(), `class="notice`) {
		t.Error("a rejection is shown as a notice as well as an error")
	}
	// The old declarations page leads to the check-answers page.
	wantRedirect(t, a.get("/s/confirmation"), a.base+"/review")
	wantRedirect(t, a.post("/s/confirmation", accept()), a.base+"/review")

	// The rejected identity document cannot slip through.
	wantPage(t, a.post("/submit", accept()), http.StatusBadRequest, "1 thing is missing", "Identity document for Ciara Byrne was not accepted: upload it again")
	a.get("/s/documents")
	a.upload("person_id_document", ciara, "id.pdf", "application/pdf", pdf)

	// Complete: the declarations come last, on the check-answers page.
	wantPage(t, a.get("/review"), http.StatusOK, "Now send your application",
		"I confirm that the information I have given is accurate and complete",
		"I accept the terms and conditions of Acme Payments", `href="https://acme.example/terms"`, "Accept and send")
	// Unticked declarations are errors; nothing is stored.
	w = a.post("/submit", url.Values{"confirm_terms": {"true"}})
	wantPage(t, w, http.StatusBadRequest, "There is a problem",
		`<a href="#confirm_accuracy">Confirm that the information you have given is accurate and complete</a>`,
		`id="confirm_terms" name="confirm_terms" value="true" checked`)
	if strings.Contains(w.Body.String(), "Confirm that you accept the terms") {
		t.Error("a ticked declaration is reported unticked")
	}
	if f := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); f["confirm_terms"] != nil {
		t.Errorf("a refused send stored a declaration: %v", f)
	}

	// A collaborator cannot submit.
	w = a.post("/collaborators", url.Values{"email": {"sean@emerald.example"}, "name": {"Seán"}})
	wantInvited(t, w, a.base)
	var seanLink string
	for _, p := range e.apiApp(t, id)["participants"].([]any) {
		if p := p.(map[string]any); p["email"] == "sean@emerald.example" {
			seanLink = p["link"].(string)
		}
	}
	sean := e.applicantAt(t, seanLink)
	sean.signIn()
	wantPage(t, sean.post("/submit", accept()), http.StatusForbidden, onboarding.ErrPrimaryOnly.Message)
	wantPage(t, a.get("/review"), http.StatusOK, `<a href="`+a.base+`/people/`+ciara+`">Change<span class="visually-hidden"> Ciara Byrne</span></a>`)
	w = sean.get("/review")
	wantPage(t, w, http.StatusOK, "Ciara, the primary contact, will make the declarations and send the application.")
	if strings.Contains(w.Body.String(), "submit-application") {
		t.Error("a collaborator is offered the declarations")
	}
	wantPage(t, sean.get(""), http.StatusOK, "Declarations and sending", "Ciara, the primary contact, will make the declarations")

	w = a.post("/submit", accept())
	wantRedirect(t, w, a.base+"?done=submitted")
	ref := onboarding.Reference(id)
	w = a.get("?done=submitted")
	wantPage(t, w, http.StatusOK, "<title>Application sent – Acme Payments</title>", `id="sent"><h1>Application sent</h1>`,
		`<strong class="reference" id="reference">`+ref+`</strong>`,
		"What happens next", "We have sent a confirmation email to ciara@emerald.example.")
	for _, gone := range []string{"Invite colleagues", "Your answers are kept", "Your application has been sent.", `class="tasks"`} {
		if strings.Contains(w.Body.String(), gone) {
			t.Errorf("the overview after sending still says %q", gone)
		}
	}
	// A receipt to each participant who proved their address.
	var receipts []string
	for _, m := range e.mail.messages() {
		if strings.Contains(m.Subject, "application sent") {
			receipts = append(receipts, m.To+": "+m.Subject)
			if !strings.Contains(m.Text, "Your reference is "+ref+".") || !strings.Contains(m.Text, "What happens next") || !strings.Contains(m.Text, "application for EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY was sent to Acme Payments on 21 November 2026.") {
				t.Errorf("receipt text:\n%s", m.Text)
			}
		}
	}
	wantReceipts := []string{"ciara@emerald.example: Acme Payments: application sent (reference " + ref + ")", "sean@emerald.example: Acme Payments: application sent (reference " + ref + ")"}
	if diff := cmp.Diff(wantReceipts, receipts); diff != "" {
		t.Errorf("receipts (-want +got):\n%s", diff)
	}
	app := e.apiApp(t, id)
	if app["status"] != "submitted" || app["submitted_at"] != "2026-11-21T09:30:00.000Z" {
		t.Errorf("after submit: status %v, submitted_at %v", app["status"], app["submitted_at"])
	}
	if f := app["data"].(map[string]any)["fields"].(map[string]any); f["confirm_accuracy"] != true || f["confirm_terms"] != true {
		t.Errorf("declarations after submit: %v %v", f["confirm_accuracy"], f["confirm_terms"])
	}
	if n := e.activity(t, id, onboarding.ActionSubmitted); n != 1 {
		t.Errorf("%d submitted entries", n)
	}

	// Frozen: PATCH is refused, the form refuses changes and shows the
	// answers read-only.
	wantError(t, e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"industry":"retail"}}`), http.StatusBadRequest, errBody("Cannot update application in submitted status"))
	wantPage(t, a.post("/s/company", url.Values{"industry": {"retail"}}), http.StatusConflict, onboarding.ErrApplicationFrozen.Message)
	wantPage(t, a.upload("bank_statement", "", "s.pdf", "application/pdf", pdf), http.StatusConflict, onboarding.ErrApplicationFrozen.Message)
	wantPage(t, a.post("/submit", accept()), http.StatusConflict, onboarding.ErrApplicationFrozen.Message)
	wantRedirect(t, a.get("/s/company"), a.base+"/review")
	w = a.get("/review")
	wantPage(t, w, http.StatusOK, "Your application", "Software", "Ciara Byrne")
	for _, offer := range []string{"submit-application", ">Change<"} {
		if strings.Contains(w.Body.String(), offer) {
			t.Errorf("the submitted review page still offers %s", offer)
		}
	}
}

func TestFormCollaborators(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.get("/collaborators")
	wantPage(t, a.post("/collaborators", url.Values{"email": {"nope"}}), http.StatusBadRequest, onboarding.ErrCollaboratorEmail.Message)
	wantPage(t, a.post("/collaborators", url.Values{"email": {"JANE@northwind.example"}}), http.StatusBadRequest, "JANE@northwind.example already has a link to this application.")
	w := a.post("/collaborators", url.Values{"email": {"tom@northwind.example"}, "name": {"Tom"}})
	wantInvited(t, w, a.base)
	wantPage(t, a.get(strings.TrimPrefix(w.Header().Get("Location"), a.base)), http.StatusOK,
		"An invitation has been sent to tom@northwind.example.", "Invited: has not confirmed their email yet")

	msgs := e.mail.messages()
	invite := msgs[len(msgs)-1]
	if invite.To != "tom@northwind.example" || !strings.Contains(invite.Text, invite.Link) || !strings.Contains(invite.Text, "Jane Smith has asked you") {
		t.Errorf("invite = %+v", invite)
	}
	parts := e.apiApp(t, id)["participants"].([]any)
	want := []any{
		map[string]any{"email": "jane@northwind.example", "name": "Jane Smith", "role": "primary", "link": e.primaryLink(t, id)},
		map[string]any{"email": "tom@northwind.example", "name": "Tom", "role": "collaborator", "link": invite.Link},
	}
	if diff := cmp.Diff(want, parts); diff != "" {
		t.Errorf("participants (-want +got):\n%s", diff)
	}

	// Tom verifies with his own code, edits, but cannot invite.
	tom := e.applicantAt(t, invite.Link)
	wantPage(t, tom.get(""), http.StatusOK, "t•••@northwind.example")
	tom.signIn()
	wantRedirect(t, tom.post("/s/business", url.Values{"business_description": {"Tom wrote this"}, "action": {"save"}}), tom.base+"?done=saved")
	wantPage(t, tom.get("/collaborators"), http.StatusForbidden, onboarding.ErrPrimaryOnly.Message)
	wantRedirect(t, tom.post("/s/confirmation", url.Values{"confirm_terms": {"true"}}), tom.base+"/review")
	if n := e.activity(t, id, onboarding.ActionOpened); n != 1 {
		t.Errorf("%d application.opened entries after two participants, want 1", n)
	}

	// Removing Tom ends his access at once.
	var tomID string
	app, _ := e.store.Application(context.Background(), id)
	for _, p := range app.Participants {
		if p.Role == onboarding.RoleCollaborator {
			tomID = p.ID
		}
	}
	wantRedirect(t, a.post("/collaborators/"+tomID+"/remove", nil), a.base+"/collaborators?done=removed")
	wantPage(t, tom.get(""), http.StatusNotFound, onboarding.ErrFormNotFound.Message)

	// Inviting and removing in turn stops at the day's limit, on the
	// page, with what was typed kept.
	if _, err := e.store.UpdateApplication(context.Background(), id, func(a *onboarding.Application) (onboarding.Changes, error) {
		for len(a.CollaboratorInvites) < onboarding.MaxCollaboratorInvites {
			a.CollaboratorInvites = append(a.CollaboratorInvites, e.clock.Now())
		}
		return onboarding.Changes{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	mailed := len(e.mail.messages())
	w = a.post("/collaborators", url.Values{"email": {"again@northwind.example"}, "name": {"Again"}})
	wantPage(t, w, http.StatusTooManyRequests, onboarding.ErrTooManyInvites.Message, `value="again@northwind.example"`)
	if n := len(e.mail.messages()) - mailed; n != 0 {
		t.Errorf("a refused invitation sent %d emails", n)
	}
}

func TestFormCompanySelection(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", `{"primary_contact":{"email":"sam@example.com"},"country":"GB","config_id":"acme-select"}`)
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	wantRedirect(t, a.get(""), a.base+"/company")
	// The company comes only from the register: typing a name and number
	// on the company page neither sets them nor skips the search.
	a.get("/s/company")
	if w := a.post("/s/company", url.Values{"company_name": {"TOTALLY MADE UP LTD"}, "company_number": {"10000003"}, "industry": {"retail"}, "action": {"save"}}); w.Code != http.StatusSeeOther {
		t.Errorf("save company page = %d\n%s", w.Code, pageText(w.Body.String()))
	}
	fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)
	if fields["company_name"] != nil || fields["company_number"] != nil || fields["industry"] != "retail" {
		t.Errorf("fields after typing a company = %v", fields)
	}
	wantRedirect(t, a.get(""), a.base+"/company")
	wantPage(t, a.get("/s/company"), http.StatusOK, `id="company_number" name="company_number" type="text" value="" autocomplete="off" maxlength="20" readonly`)
	wantPage(t, a.get("/company?q=no"), http.StatusBadRequest, onboarding.ErrSearchQueryTooShort.Message)
	wantPage(t, a.get("/company?q=north"), http.StatusOK, "NORTHWIND TRADING LIMITED", "10000001")
	wantPage(t, a.get("/company?q=zzzz"), http.StatusOK, "No company was found")
	// Choosing a result first shows the register's details to confirm;
	// a number is looked up directly; "I can't find my company" helps.
	w := a.get("/company?q=north")
	wantPage(t, w, http.StatusOK, `href="`+a.base+`/company/confirm?number=10000001&q=north" id="choose-10000001"`, "<summary>I can't find my company</summary>")
	if strings.Contains(w.Body.String(), "Back to the overview") {
		t.Error("the search offers a Back link to the overview, which leads back to the search")
	}
	w = a.get("/company/confirm?number=10000001&q=north")
	wantPage(t, w, http.StatusOK, "Is this your company?", "NORTHWIND TRADING LIMITED", "10000001", "16 April 2018", "Private limited company",
		`<a href="`+a.base+`/company?q=north">Back to the search</a>`, `id="confirm-company">Yes, this is my company</button>`)
	wantRedirect(t, a.get("/company?q=1000+0001"), a.base+"/company/confirm?number=10000001")
	wantPage(t, a.get("/company/confirm?number=10000003"), http.StatusBadRequest, "Company 10000003 is not active (status: dissolved)")
	wantPage(t, a.get("/company/confirm?number=99999999"), http.StatusBadRequest, "There is a problem")
	if fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any); fields["company_number"] != nil {
		t.Error("looking at a company chose it")
	}

	// A tampered choice goes through the same registry check as create.
	wantPage(t, a.post("/company", url.Values{"number": {"10000003"}, "name": {"OLDCO LIMITED"}}), http.StatusBadRequest, "Company 10000003 is not active (status: dissolved)")
	wantRedirect(t, a.post("/company", url.Values{"number": {"10000001"}, "name": {"NORTHWIND TRADING LIMITED"}}), a.base+"?done=company")

	app := e.apiApp(t, id)
	fields = app["data"].(map[string]any)["fields"].(map[string]any)
	if fields["company_number"] != "10000001" || fields["company_name"] != "NORTHWIND TRADING LIMITED" || fields["registered_address"] == nil {
		t.Errorf("fields after choosing = %v", fields)
	}
	if people := app["data"].(map[string]any)["people"].([]any); len(people) == 0 {
		t.Error("no people pre-filled from the registry")
	}
	if got := app["data"].(map[string]any)["meta"].(map[string]any)["registry_sources"]; !cmp.Equal(got, []any{"uk_registry"}) {
		t.Errorf("registry_sources = %v", got)
	}
	wantPage(t, a.get("?done=company"), http.StatusOK, "Your company has been found on the register.")
	wantPage(t, a.post("/company", url.Values{"number": {"10000008"}, "name": {"BLUEBELL GROUP LIMITED"}}), http.StatusConflict, onboarding.ErrCompanyAlreadyChosen.Message)
}

func TestFormSecurityHeadersAndAssets(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.applicantAt(t, e.primaryLink(t, e.create(t, "acme", "")))
	w := a.get("")
	for k, want := range map[string]string{
		"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		"Content-Type": "text/html; charset=UTF-8",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	for path, ctype := range map[string]string{
		"/assets/form.css": "text/css; charset=utf-8", "/assets/form.js": "text/javascript; charset=utf-8",
		"/assets/favicon.svg": "image/svg+xml", "/favicon.ico": "image/svg+xml",
	} {
		w := e.do("GET", path, "", "")
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != ctype || w.Body.Len() < 200 {
			t.Errorf("%s = %d %q, %d bytes", path, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
	}
	if w := e.do("GET", "/assets/nope.js", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("missing asset = %d", w.Code)
	}
}

var shownPattern = regexp.MustCompile(`<input type="hidden" name="(shown\.[a-z0-9_]+)" value="([^"]*)">`)

// shownInputs returns the hidden fingerprints of the last page, as its
// form posts them.
func (a *applicant) shownInputs() url.Values {
	form := url.Values{}
	for _, m := range shownPattern.FindAllStringSubmatch(a.last.Body.String(), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if len(form) == 0 {
		a.t.Fatalf("the page has no shown.* inputs:\n%s", pageText(a.last.Body.String()))
	}
	return form
}

// TestFormSaveKeepsOthersChanges: saving a page keeps what someone else
// (the partner, a colleague) changed since it was opened, in the fields
// the applicant left as they were; a field the applicant changed is
// theirs.
func TestFormSaveKeepsOthersChanges(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	wantRedirect(t, a.post("/s/business", url.Values{"business_description": {"Tea"}, "regulated_entity": {"false"}, "action": {"save"}}), a.base+"?done=saved")

	a.get("/s/business")
	form := a.shownInputs()
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"business_description":"Tea and coffee","annual_turnover":{"amount":9000,"currency":"EUR"}}}`); w.Code != http.StatusOK {
		t.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}
	// The page still shows "Tea" and no turnover; the applicant answers
	// the percentage and unticks nothing else.
	form.Set("business_description", "Tea")
	form.Set("regulated_entity", "false")
	form.Set("high_risk_revenue_percentage", "5")
	form.Set("action", "save")
	wantRedirect(t, a.post("/s/business", form), a.base+"?done=saved")
	fields := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)
	got := map[string]any{"business_description": fields["business_description"], "annual_turnover": fields["annual_turnover"], "high_risk_revenue_percentage": fields["high_risk_revenue_percentage"], "regulated_entity": fields["regulated_entity"]}
	want := map[string]any{"business_description": "Tea and coffee", "annual_turnover": map[string]any{"amount": 9000.0, "currency": "EUR"}, "high_risk_revenue_percentage": 5.0, "regulated_entity": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after saving a page opened before the PATCH (-want +got):\n%s", diff)
	}

	// A field the applicant changed on the page wins.
	a.get("/s/business")
	form = a.shownInputs()
	e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"business_description":"From the partner again"}}`)
	form.Set("business_description", "Loose-leaf tea")
	form.Set("action", "save")
	a.post("/s/business", form)
	if got := e.apiApp(t, id)["data"].(map[string]any)["fields"].(map[string]any)["business_description"]; got != "Loose-leaf tea" {
		t.Errorf("business_description = %v, want the applicant's change", got)
	}

	// The same for a person: a colleague adds the email while the
	// applicant has the page open to add the phone number.
	wantSaved(t, a.post("/people/new", url.Values{"roles": {"director"}, "person_full_name": {"Ann Lee"}}), a.base, "person")
	ann := personID(t, e.apiApp(t, id), "Ann Lee")
	a.get("/people/" + ann)
	form = a.shownInputs()
	if form.Get("shown.roles") == "" {
		t.Error("the person page does not say which roles it showed")
	}
	wantInvited(t, a.post("/collaborators", url.Values{"email": {"tom@northwind.example"}}), a.base)
	msgs := e.mail.messages()
	tom := e.applicantAt(t, msgs[len(msgs)-1].Link)
	tom.signIn()
	tom.get("/people/" + ann)
	tomForm := tom.shownInputs()
	tomForm.Set("roles", "director")
	tomForm.Add("roles", "ubo")
	tomForm.Set("person_full_name", "Ann Lee")
	tomForm.Set("person_email", "ann@example.com")
	wantSaved(t, tom.post("/people/"+ann, tomForm), tom.base, "person")
	form.Set("roles", "director")
	form.Set("person_full_name", "Ann Lee")
	form.Set("person_phone", "+44 7700 900123")
	wantSaved(t, a.post("/people/"+ann, form), a.base, "person")
	for _, p := range e.apiApp(t, id)["data"].(map[string]any)["people"].([]any) {
		if p := p.(map[string]any); p["id"] == ann {
			if p["email"] != "ann@example.com" || p["phone_number"] != "+447700900123" || !cmp.Equal(p["roles"], []any{"director", "ubo"}) {
				t.Errorf("person after two saves = %v", p)
			}
		}
	}
}

// TestFormStaleOwnership: an ownership statement saved from a page read
// before its owner was removed is refused, not stored pointing at nobody.
func TestFormStaleOwnership(t *testing.T) {
	e := newEnv(t, envOptions{})
	created := decode(t, e.do("POST", "/api/external/applications", "acme", `{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`))
	id, code := created["application_id"].(string), created["pre_auth_code"].(string)
	slug := strings.TrimPrefix(e.primaryLink(t, id), "https://onboard.test/a/")
	ctx := context.Background()
	v, err := e.svc.Visit(ctx, "onboard.test", slug, code, nil)
	if err != nil || !v.SignedIn {
		t.Fatalf("visit with the pre-auth code: %v, signed in %v", err, v != nil && v.SignedIn)
	}
	bob, err := e.svc.SavePerson(ctx, v, "", onboarding.PersonInput{Roles: []onboarding.PersonRole{"shareholder"}, Values: map[string]json.RawMessage{"person_full_name": json.RawMessage(`"Bob Stone"`)}})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := e.svc.Visit(ctx, "onboard.test", slug, code, nil) // has Bob
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RemovePerson(ctx, v, bob); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.SaveOwnership(ctx, stale, "", onboarding.OwnershipInput{Owner: "person:" + bob, Owned: string(onboarding.OwnedTarget), Percentage: "10", IsDirect: true})
	if e := onboarding.AsError(err); e == nil || e.Details["owner"] != "choose who owns the shares" {
		t.Errorf("ownership by a removed person: %v, want the owner refused", err)
	}
	for _, o := range e.apiApp(t, id)["data"].(map[string]any)["ownership"].([]any) {
		if o.(map[string]any)["owner_id"] == bob {
			t.Errorf("an ownership row points at the removed person: %v", o)
		}
	}
}

// TestFormVerificationDailyCap: a participant gets at most 10 codes a day,
// so at most 50 guesses a day at a 6-digit code.
func TestFormVerificationDailyCap(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.applicantAt(t, e.primaryLink(t, e.create(t, "acme", "")))
	a.get("")
	for i := 0; i < onboarding.VerifyCodesPerDay; i++ {
		wantRedirect(t, a.post("/verify/send", nil), a.base+"?done=sent")
		e.clock.Advance(31 * time.Second)
	}
	sent := len(e.mail.messages())
	wantPage(t, a.post("/verify/send", nil), http.StatusTooManyRequests, onboarding.ErrTooManyCodes.Message)
	if n := len(e.mail.messages()); n != sent {
		t.Errorf("a refused send still sent an email (%d, then %d)", sent, n)
	}
	e.clock.Advance(24 * time.Hour)
	a.get("") // the anonymous session has ended too: a fresh page
	wantRedirect(t, a.post("/verify/send", nil), a.base+"?done=sent")
	wantRedirect(t, a.post("/verify", url.Values{"code": {e.lastCode(t)}}), a.base+"?done=verified")
}

// TestFormTaskStates: a section is "Completed" only once the applicant
// has been through it and it lacks nothing; what the registry filled in
// does not count.
func TestFormTaskStates(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	state := func(task string) string {
		t.Helper()
		body := a.get("").Body.String()
		_, rest, ok := strings.Cut(body, `id="task-`+task+`"`)
		if !ok {
			t.Fatalf("no task %s", task)
		}
		_, rest, _ = strings.Cut(rest, `<strong class="tag `)
		_, rest, _ = strings.Cut(rest, `">`)
		s, _, _ := strings.Cut(rest, "<")
		return s
	}
	// The registry filled the company and its people: nothing is started.
	for _, task := range []string{"company", "business", "people", "documents"} {
		if got := state(task); got != "Not yet started" {
			t.Errorf("%s = %q before anything, want Not yet started", task, got)
		}
	}
	// Saved with the description still missing: in progress; then
	// complete.
	a.post("/s/business", url.Values{"countries_of_operation": {"GB"}})
	if got := state("business"); got != "In progress" {
		t.Errorf("business = %q after a save lacking the description, want In progress", got)
	}
	a.post("/s/business", url.Values{"business_description": {"Software"}})
	if got := state("business"); got != "Completed" {
		t.Errorf("business = %q once complete, want Completed", got)
	}
	// Seeing the people page is going through it; the registry's people
	// lack nothing the form requires.
	a.get("/s/people")
	if got := state("people"); got != "Completed" {
		t.Errorf("people = %q after seeing the page, want Completed", got)
	}
	a.get("/s/documents")
	if got := state("documents"); got != "In progress" {
		t.Errorf("documents = %q with none uploaded, want In progress", got)
	}
	if n := e.activity(t, id, onboarding.ActionFormSaved); n != 2 {
		t.Errorf("%d form.saved entries: seeing a page must log nothing", n)
	}
}

// TestFormSignOut: "Sign out" ends the participant's sessions (a copy of
// the old cookie no longer signs in) and says how to come back.
func TestFormSignOut(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	wantPage(t, a.get(""), http.StatusOK, `<form method="post" action="`+a.base+`/sign-out" class="sign-out">`, `id="sign-out">Sign out</button>`)
	old := a.cookie
	w := a.post("/sign-out", nil)
	wantRedirect(t, w, a.base+"/signed-out")
	if a.cookie.MaxAge >= 0 || a.cookie.Value != "" {
		t.Errorf("cookie after sign-out = %+v, want it removed", a.cookie)
	}
	w = a.get("/signed-out")
	wantPage(t, w, http.StatusOK, "You have signed out", "Your answers are saved.", "You will be asked for a new code.")
	if strings.Contains(w.Body.String(), "Sign out</button>") {
		t.Error("the signed-out page offers to sign out")
	}
	// The old session token is void.
	stolen := e.applicantAt(t, e.primaryLink(t, id))
	stolen.cookie = old
	wantRedirect(t, stolen.get("/s/company"), a.base)
	// Signing out needs a session and its CSRF token.
	wantPage(t, a.post("/sign-out", nil), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)
}
