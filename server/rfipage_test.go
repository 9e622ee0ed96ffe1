package server

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/server/form"
)

// rfiRequest creates an RFI request through the domain, as the API does,
// for the organization of the env key key: Northwind (GB), whose contact
// is jane@northwind.example. Its Link carries auth_code when preAuth.
func (e *env) rfiRequest(t testing.TB, key string, preAuth bool) *onboarding.RFICreated {
	t.Helper()
	ctx := context.Background()
	k, err := e.svc.Authenticate(ctx, e.keys[key])
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.CreateRFIRequest(ctx, k, onboarding.RFICreateRequest{
		CompanyName: "Northwind Trading Ltd", Country: "GB", CompanyNumber: "10000001",
		PrimaryContact:   &onboarding.RFIContactInput{Name: "Jane Smith", Email: "jane@northwind.example"},
		PreAuthenticated: preAuth,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rfiLinkOf is the request's link without auth_code.
func rfiLinkOf(c *onboarding.RFICreated) string {
	link, _, _ := strings.Cut(c.Link, "?")
	return link
}

// rfiStored reads the request as the store holds it.
func (e *env) rfiStored(t testing.TB, id string) *onboarding.RFIRequest {
	t.Helper()
	r, err := e.store.RFIRequest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// signedInRFI is a contact signed in at a new RFI request of acme, by its
// pre-auth code.
func (e *env) signedInRFI(t *testing.T) (*applicant, *onboarding.RFICreated) {
	t.Helper()
	c := e.rfiRequest(t, "acme", true)
	a := e.applicantAt(t, rfiLinkOf(c))
	wantRedirect(t, a.get("?auth_code="+c.PreAuthCode), a.base)
	wantPage(t, a.get(""), http.StatusOK, "Send your documents")
	return a, c
}

func TestRFIPageUnknownLink(t *testing.T) {
	e := newEnv(t, envOptions{})
	formLink, _ := url.Parse(e.primaryLink(t, e.create(t, "acme", "")))
	slug := strings.TrimPrefix(formLink.Path, "/a/")
	for _, path := range []string{
		"/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"/r/short",
		"/r/" + slug, // an application's link is not an RFI request's
		"/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/complete",
	} {
		t.Run(path, func(t *testing.T) {
			a := e.applicantAt(t, "https://onboard.test"+path)
			w := a.get("")
			if strings.HasSuffix(path, "/complete") {
				w = a.post("", nil)
			}
			wantPage(t, w, http.StatusNotFound, "This link does not work", onboarding.ErrFormNotFound.Message, "Document request")
		})
	}
	// And an RFI request's link is not an application's.
	c := e.rfiRequest(t, "acme", false)
	u, _ := url.Parse(rfiLinkOf(c))
	a := e.applicantAt(t, "https://onboard.test/a/"+strings.TrimPrefix(u.Path, "/r/"))
	wantPage(t, a.get(""), http.StatusNotFound, onboarding.ErrFormNotFound.Message)
}

func TestRFIPageVerification(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.rfiRequest(t, "acme", false)
	link := rfiLinkOf(c)
	if !strings.HasPrefix(link, "https://onboard.test/r/") {
		t.Fatalf("link = %s", link)
	}
	a := e.applicantAt(t, link)

	w := a.get("")
	wantPage(t, w, http.StatusOK, "Confirm it is you", "Acme Payments has asked you for documents about <strong>NORTHWIND TRADING LIMITED</strong>.",
		"j•••@northwind.example", "Send me a code")
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-store",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if a.cookie == nil || a.csrf == "" || a.cookie.Path != a.base {
		t.Fatalf("the verification page set cookie %+v and CSRF %q, want a cookie for %s", a.cookie, a.csrf, a.base)
	}
	if r := e.rfiStored(t, c.Request.ID); r.OpenedAt != nil {
		t.Errorf("opened_at = %v before sign-in", r.OpenedAt)
	}

	// Nothing but verification before sign-in.
	wantPage(t, a.upload("bank_statement", "", "c.pdf", "application/pdf", testPDF(t)), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)
	wantPage(t, a.post("/complete", nil), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"bank_statement"}}), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)

	wantPage(t, a.post("/verify", url.Values{"code": {"123456"}}), http.StatusBadRequest, onboarding.ErrNoCodeSent.Message)
	wantRedirect(t, a.post("/verify/send", nil), a.base+"?done=sent")
	msgs := e.mail.messages()
	if last := msgs[len(msgs)-1]; last.To != "jane@northwind.example" || !strings.Contains(last.Subject, "verification code") {
		t.Errorf("verification email = %+v", last)
	}
	code := e.lastCode(t)
	wantPage(t, a.get("?done=sent"), http.StatusOK, "We have sent you a new code.", "We have sent a 6-digit code to <strong>j•••@northwind.example</strong>")
	wantPage(t, a.post("/verify/send", nil), http.StatusTooManyRequests, "A code was sent moments ago. Wait 30 seconds before asking for another.")
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	wantPage(t, a.post("/verify", url.Values{"code": {wrong}}), http.StatusBadRequest, "That code is not right. You have 4 more tries.", `<a href="#code">`)

	wantRedirect(t, a.post("/verify", url.Values{"code": {code}}), a.base+"?done=verified")
	ck := a.cookie
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || !ck.Secure || ck.Path != a.base || ck.MaxAge != int(form.DefaultSessionTimeout.Seconds()) {
		t.Errorf("session cookie = %+v, want HttpOnly, SameSite=Lax, Secure, Path %s, 12 h", ck, a.base)
	}
	wantPage(t, a.get("?done=verified"), http.StatusOK, "Your email address is confirmed.", "Send your documents",
		"Business bank statement", "A recent statement of the company's bank account, showing the account name and number.",
		"Proof of business address", "A utility bill, bank statement or lease from the last 3 months",
		"This link works until 5 December 2026.", "0 of 2 documents uploaded.", "Signed in as jane@northwind.example")
	if strings.Contains(a.last.Body.String(), "Certificate of incorporation") {
		t.Error("the page lists a document the agent does not ask for")
	}
	r := e.rfiStored(t, c.Request.ID)
	if r.OpenedAt == nil || !r.OpenedAt.Equal(testNow) || r.Status != onboarding.RFIActive {
		t.Errorf("after sign-in: opened_at %v, status %s", r.OpenedAt, r.Status)
	}

	// The session ends after 12 hours without use.
	e.clock.Advance(form.DefaultSessionTimeout + time.Second)
	wantPage(t, a.get(""), http.StatusOK, "Confirm it is you")
}

func TestRFIPagePreAuth(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.rfiRequest(t, "acme", true)
	if len(c.PreAuthCode) != 16 || c.Link != rfiLinkOf(c)+"?auth_code="+c.PreAuthCode {
		t.Fatalf("pre-auth code %q, link %s", c.PreAuthCode, c.Link)
	}

	// A wrong code leads to verification, with no error.
	b := e.applicantAt(t, rfiLinkOf(c))
	wantRedirect(t, b.get("?auth_code=WRONGWRONGWRONG1"), b.base)
	wantPage(t, b.get(""), http.StatusOK, "Confirm it is you")
	if strings.Contains(b.last.Body.String(), "There is a problem") {
		t.Error("an unknown code shows an error")
	}

	// The code signs in and is taken out of the address bar.
	a := e.applicantAt(t, c.Link)
	if a.base != strings.TrimPrefix(rfiLinkOf(c), "https://onboard.test") {
		t.Fatalf("base = %s", a.base)
	}
	wantRedirect(t, a.send(httptest.NewRequest("GET", a.base+"?auth_code="+c.PreAuthCode+"&x=1", nil)), a.base+"?x=1")
	if a.cookie == nil || a.cookie.Path != a.base {
		t.Fatalf("cookie after the code = %+v", a.cookie)
	}
	wantPage(t, a.get(""), http.StatusOK, "Send your documents", "Business bank statement")
	if r := e.rfiStored(t, c.Request.ID); r.OpenedAt == nil {
		t.Error("opened_at not set by the pre-auth code")
	}

	// The code lasts 10 minutes: then it is ignored.
	e.clock.Advance(onboarding.RFIPreAuthTTL)
	late := e.applicantAt(t, rfiLinkOf(c))
	wantRedirect(t, late.get("?auth_code="+c.PreAuthCode), late.base)
	wantPage(t, late.get(""), http.StatusOK, "Confirm it is you")
	// The session it started carries on.
	wantPage(t, a.get(""), http.StatusOK, "Send your documents")
}

// TestRFIPageSignOut: an RFI link signs out as an application's does:
// every session of the contact ends, the pre-auth code is revoked (the
// link in the history signs nobody in), and the page says how to come
// back.
func TestRFIPageSignOut(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.rfiRequest(t, "acme", true)
	a := e.applicantAt(t, c.Link)
	a.get("?auth_code=" + c.PreAuthCode)
	wantPage(t, a.get(""), http.StatusOK, `<form method="post" action="`+a.base+`/sign-out" class="sign-out">`, `id="sign-out">Sign out</button>`)
	old := a.cookie
	wantRedirect(t, a.post("/sign-out", nil), a.base+"/signed-out")
	if a.cookie.MaxAge >= 0 || a.cookie.Value != "" {
		t.Errorf("cookie after sign-out = %+v, want it removed", a.cookie)
	}
	w := a.get("/signed-out")
	wantPage(t, w, http.StatusOK, "You have signed out", "The documents you uploaded are saved.", "You will be asked for a new code.")
	if strings.Contains(w.Body.String(), "Sign out</button>") {
		t.Error("the signed-out page offers to sign out")
	}
	stolen := e.applicantAt(t, rfiLinkOf(c))
	stolen.cookie = old
	wantPage(t, stolen.get(""), http.StatusOK, "Confirm it is you")
	again := e.applicantAt(t, rfiLinkOf(c))
	wantRedirect(t, again.get("?auth_code="+c.PreAuthCode), again.base)
	wantPage(t, again.get(""), http.StatusOK, "Confirm it is you")
	wantPage(t, a.post("/sign-out", nil), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)
}

func TestRFIPageCSRF(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, c := e.signedInRFI(t)
	if w := a.upload("bank_statement", "", "statement.pdf", "application/pdf", testPDF(t)); w.Code != http.StatusSeeOther {
		t.Fatalf("upload = %d %s", w.Code, w.Body)
	}
	a.get("")
	other := e.applicantAt(t, rfiLinkOf(c))
	other.get("") // another browser: its own anonymous session and token

	good := a.csrf
	for name, token := range map[string]string{"missing": "", "wrong": "x" + good, "another session's": other.csrf} {
		t.Run(name, func(t *testing.T) {
			wantPage(t, a.post("/documents/remove", url.Values{"csrf": {token}, "field": {"bank_statement"}}), http.StatusForbidden, onboarding.ErrCSRF.Message)
			wantPage(t, a.post("/complete", url.Values{"csrf": {token}}), http.StatusForbidden, onboarding.ErrCSRF.Message)
			// The upload's token is checked while its body is read.
			a.csrf = token
			wantPage(t, a.upload("proof_of_address", "", "bill.pdf", "application/pdf", testPDF(t)), http.StatusForbidden, onboarding.ErrCSRF.Message)
			a.csrf = good
		})
	}

	// A multipart post anywhere but the upload is refused.
	for _, path := range []string{"/complete", "/documents/remove", "/verify/send"} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("csrf", a.csrf)
		_ = mw.WriteField("field", "bank_statement")
		_ = mw.Close()
		r := httptest.NewRequest("POST", a.base+path, &body)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		wantPage(t, a.send(r), http.StatusForbidden, onboarding.ErrCSRF.Message)
	}
	r := e.rfiStored(t, c.Request.ID)
	if _, ok := r.Documents["bank_statement"]; !ok || len(r.Documents) != 1 || r.Status != onboarding.RFIActive {
		t.Errorf("after refused posts: documents %v, status %s", r.Documents, r.Status)
	}
	// The right token still works.
	wantRedirect(t, a.post("/documents/remove", url.Values{"field": {"bank_statement"}}), a.base+"?done=doc-removed#doc-bank_statement")
}

// regexpFind returns the first group of pattern in s.
func regexpFind(t *testing.T, s, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", pattern, pageText(s))
	}
	return m[1]
}

func TestRFIPageUploads(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, c := e.signedInRFI(t)
	pdf := testPDF(t)

	wantRedirect(t, a.upload("bank_statement", "", `C:\scans\statement.pdf`, "application/pdf", pdf), a.base+"?done=uploaded#doc-bank_statement")
	wantPage(t, a.get("?done=uploaded"), http.StatusOK, "The document has been uploaded.", "statement.pdf<span class=\"visually-hidden\"> (opens in a new tab)</span></a>, uploaded", ">Replace<", ">Remove<", "Replace it with another file", "1 of 2 documents uploaded.")
	view := regexpFind(t, a.last.Body.String(), `<a href="(/files/[^"]+)" target="_blank"`)
	dl := httptest.NewRecorder()
	e.h.ServeHTTP(dl, httptest.NewRequest("GET", strings.ReplaceAll(view, "&amp;", "&"), nil))
	if dl.Code != http.StatusOK || !bytes.Equal(dl.Body.Bytes(), pdf) {
		t.Errorf("the page's view link %s = %d, %d bytes", view, dl.Code, dl.Body.Len())
	}

	// A text file named .pdf is refused with its reason: in the error
	// summary, linked to its file input, and at the document.
	wantRedirect(t, a.upload("proof_of_address", "", "notes.pdf", "application/pdf", []byte("Just some notes, not a PDF.\n")), a.base+"?done=rejected#doc-proof_of_address")
	reason := "The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC."
	wantPage(t, a.get("?done=rejected"), http.StatusOK, "The document was not accepted. See the reason below.", "There is a problem",
		`<a href="#file-proof_of_address">Proof of business address: notes.pdf: `+reason+`</a>`,
		`Not accepted</strong> notes.pdf: `+reason, `aria-describedby="file-proof_of_address-status"`)
	r := e.rfiStored(t, c.Request.ID)
	if d := r.Documents["proof_of_address"]; d.Status != onboarding.DocumentRejected || d.RejectReason != reason || d.FileName != "notes.pdf" {
		t.Errorf("rejected document = %+v", d)
	}
	if d := r.Documents["bank_statement"]; d.Status != onboarding.DocumentAccepted || d.FileName != "statement.pdf" {
		t.Errorf("accepted document = %+v", d)
	}

	// Remove, then remove again.
	wantRedirect(t, a.post("/documents/remove", url.Values{"field": {"proof_of_address"}}), a.base+"?done=doc-removed#doc-proof_of_address")
	wantPage(t, a.get("?done=doc-removed"), http.StatusOK, "The file has been removed.")
	if strings.Contains(a.last.Body.String(), "notes.pdf") || strings.Contains(a.last.Body.String(), "There is a problem") {
		t.Error("the removed file is still shown")
	}
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"proof_of_address"}}), http.StatusNotFound,
		`<a href="#file-proof_of_address">Proof of business address: `+onboarding.ErrNoDocumentToRemove.Message+`</a>`)

	// Replacing keeps one file per document.
	wantRedirect(t, a.upload("bank_statement", "", "statement2.pdf", "application/pdf", pdf), a.base+"?done=uploaded#doc-bank_statement")
	if d := e.rfiStored(t, c.Request.ID).Documents["bank_statement"]; d.FileName != "statement2.pdf" {
		t.Errorf("after replacing: %+v", d)
	}

	// What cannot be uploaded.
	wantPage(t, a.upload("certificate_of_incorporation", "", "s.pdf", "application/pdf", pdf), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
	wantPage(t, a.upload("proof_of_address", "", "", "application/pdf", nil), http.StatusBadRequest,
		`<a href="#file-proof_of_address">Proof of business address: `+onboarding.ErrNoFileChosen.Message+`</a>`)
	wantPage(t, a.post("/documents/remove", url.Values{"field": {"industry"}}), http.StatusNotFound, onboarding.ErrNoSuchDocument.Message)
}

func TestRFIPageUploadTooLarge(t *testing.T) {
	e := newEnv(t, envOptions{maxUpload: 1024})
	a, _ := e.signedInRFI(t)
	wantPage(t, a.upload("proof_of_address", "", "big.pdf", "application/pdf", bytes.Repeat([]byte("x"), 4096)), http.StatusRequestEntityTooLarge,
		`<a href="#file-proof_of_address">Proof of business address: `+onboarding.ErrUploadTooLarge(1024).Message+`</a>`)
}

func TestRFIPageComplete(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, c := e.signedInRFI(t)
	pdf := testPDF(t)
	a.upload("bank_statement", "", "statement.pdf", "application/pdf", pdf)

	// Refused while a document is missing; a rejected upload does not count.
	wantPage(t, a.post("/complete", nil), http.StatusBadRequest, "There is a problem",
		"Upload every requested document before you send them: 1 is missing.",
		`<a href="#file-proof_of_address">Upload the Proof of business address</a>`,
		`<p class="error-message" id="file-proof_of_address-error"><span class="visually-hidden">Error:</span> Upload the Proof of business address</p>`)
	a.upload("proof_of_address", "", "notes.pdf", "application/pdf", []byte("not a pdf"))
	wantPage(t, a.post("/complete", nil), http.StatusBadRequest, "Upload every requested document before you send them: 1 is missing.",
		`<a href="#file-proof_of_address">Proof of business address: notes.pdf: The file is not a PDF that can be opened`)
	if r := e.rfiStored(t, c.Request.ID); r.Status != onboarding.RFIActive || r.CompletedAt != nil {
		t.Fatalf("after refused sends: status %s, completed_at %v", r.Status, r.CompletedAt)
	}

	a.upload("proof_of_address", "", "bill.pdf", "application/pdf", pdf)
	e.clock.Advance(time.Hour)
	wantRedirect(t, a.post("/complete", nil), a.base)
	wantPage(t, a.get(""), http.StatusOK, "Documents sent", "Acme Payments has received your documents", "You sent them on 21 November 2026",
		"<li>Business bank statement</li>", "<li>Proof of business address</li>", "Nothing more can be changed with this link.")
	if strings.Contains(a.last.Body.String(), "statement.pdf") || strings.Contains(a.last.Body.String(), `type="file"`) {
		t.Error("the confirmation shows file names or upload controls")
	}
	r := e.rfiStored(t, c.Request.ID)
	if r.Status != onboarding.RFICompleted || r.CompletedAt == nil || !r.CompletedAt.Equal(testNow.Add(time.Hour)) {
		t.Errorf("after sending: status %s, completed_at %v", r.Status, r.CompletedAt)
	}

	// Its events, newest first.
	var got []string
	for _, ev := range e.events(t, "acme", "").Events {
		var data struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data.ID == c.Request.ID {
			got = append(got, ev.Type+" "+data.Status)
		}
	}
	want := []string{"rfi_request.completed completed", "rfi_request.opened active", "rfi_request.created active"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Later: read-only. Posts are refused with the confirmation.
	for name, w := range map[string]*httptest.ResponseRecorder{
		"send again": a.post("/complete", nil),
		"remove":     a.post("/documents/remove", url.Values{"field": {"proof_of_address"}}),
		"upload":     a.upload("proof_of_address", "", "other.pdf", "application/pdf", pdf),
		"send code":  a.post("/verify/send", nil),
	} {
		t.Run(name, func(t *testing.T) {
			wantPage(t, w, http.StatusConflict, "Documents sent", onboarding.ErrRFIClosedCompleted.Message)
		})
	}
	if d := e.rfiStored(t, c.Request.ID).Documents["proof_of_address"]; d.FileName != "bill.pdf" {
		t.Errorf("after completion the document became %+v", d)
	}
	// Another browser, not signed in, sees the same confirmation.
	wantPage(t, e.applicantAt(t, rfiLinkOf(c)).get(""), http.StatusOK, "Documents sent", "<li>Proof of business address</li>")
}

func TestRFIPageExpiry(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, c := e.signedInRFI(t)
	a.upload("bank_statement", "", "statement.pdf", "application/pdf", testPDF(t))
	if want := testNow.AddDate(0, 0, 14); !c.Request.ExpiresAt.Equal(want) {
		t.Fatalf("expires_at = %v, want %v", c.Request.ExpiresAt, want)
	}
	// Used every 11 hours, the session lasts until the request expires.
	for e.clock.Now().Add(11 * time.Hour).Before(c.Request.ExpiresAt) {
		e.clock.Advance(11 * time.Hour)
		a.get("")
	}
	e.clock.Advance(c.Request.ExpiresAt.Sub(e.clock.Now()) - time.Second)
	wantPage(t, a.get(""), http.StatusOK, "Send your documents")

	// At expires_at (before any sweep): the expiry page, 410, for everything.
	e.clock.Advance(time.Second)
	expired := []string{"This link has expired", "The request from Acme Payments for documents about <strong>NORTHWIND TRADING LIMITED</strong> closed on 5 December 2026.",
		"contact Acme Payments and ask for a new link"}
	wantPage(t, a.get(""), http.StatusGone, expired...)
	if strings.Contains(a.last.Body.String(), `type="file"`) || strings.Contains(a.last.Body.String(), "send-documents") {
		t.Error("the expiry page has controls")
	}
	for name, w := range map[string]*httptest.ResponseRecorder{
		"upload":    a.upload("proof_of_address", "", "bill.pdf", "application/pdf", testPDF(t)),
		"remove":    a.post("/documents/remove", url.Values{"field": {"bank_statement"}}),
		"send":      a.post("/complete", nil),
		"send code": a.post("/verify/send", nil),
		"verify":    a.post("/verify", url.Values{"code": {"123456"}}),
	} {
		t.Run(name, func(t *testing.T) { wantPage(t, w, http.StatusGone, expired...) })
	}
	// A new visitor with the pre-auth code gets the same page.
	b := e.applicantAt(t, c.Link)
	wantRedirect(t, b.get("?auth_code="+c.PreAuthCode), b.base)
	wantPage(t, b.get(""), http.StatusGone, expired...)

	r := e.rfiStored(t, c.Request.ID)
	if len(r.Documents) != 1 || r.Status == onboarding.RFICompleted {
		t.Errorf("after expiry: documents %v, status %s", r.Documents, r.Status)
	}

	// Expired early (the sandbox test helper, as the sweep): the page gives
	// the day it closed.
	early, ec := e.signedInRFI(t)
	if w := e.do("POST", "/api/external/test-helpers/rfi-requests/"+ec.Request.ID+"/expire", "acme", ""); w.Code != http.StatusOK {
		t.Fatalf("expire = %d %s", w.Code, w.Body)
	}
	wantPage(t, early.get(""), http.StatusGone, "This link has expired", "closed on 5 December 2026.")
	wantPage(t, early.upload("bank_statement", "", "statement.pdf", "application/pdf", testPDF(t)), http.StatusGone, "This link has expired")
	if r := e.rfiStored(t, ec.Request.ID); r.Status != onboarding.RFIExpired || len(r.Documents) != 0 {
		t.Errorf("after the test helper: status %s, documents %v", r.Status, r.Documents)
	}
}

// TestRFIPageSessionsAreSeparate: a session of the form does not open an
// RFI request's page, nor one of an RFI request the form: each names its
// own subject, and its cookie is scoped to its own link.
func TestRFIPageSessionsAreSeparate(t *testing.T) {
	e := newEnv(t, envOptions{})
	formUser := e.applicantAt(t, e.primaryLink(t, e.create(t, "acme", "")))
	formUser.signIn()
	wantPage(t, formUser.get(""), http.StatusOK, "Company details")
	rfiUser, c := e.signedInRFI(t)
	other := e.rfiRequest(t, "acme", false)
	if formUser.cookie.Path == rfiUser.cookie.Path {
		t.Fatalf("both cookies have path %s", formUser.cookie.Path)
	}

	// The form's session at the RFI page, and the RFI page's at the form:
	// its token does not count there, and it signs nobody in.
	intruder := e.applicantAt(t, rfiLinkOf(c))
	intruder.cookie, intruder.csrf = formUser.cookie, formUser.csrf
	wantPage(t, intruder.post("/complete", nil), http.StatusForbidden, onboarding.ErrCSRF.Message)
	intruder.cookie = formUser.cookie
	wantPage(t, intruder.get(""), http.StatusOK, "Confirm it is you")
	wantPage(t, intruder.post("/complete", nil), http.StatusUnauthorized, onboarding.ErrNotSignedIn.Message)

	intruder = e.applicantAt(t, "https://onboard.test"+formUser.base)
	intruder.cookie = rfiUser.cookie
	wantPage(t, intruder.get(""), http.StatusOK, "Confirm it is you")

	// One RFI request's session at another's page.
	intruder = e.applicantAt(t, rfiLinkOf(other))
	intruder.cookie = rfiUser.cookie
	wantPage(t, intruder.get(""), http.StatusOK, "Confirm it is you")
	if r := e.rfiStored(t, other.Request.ID); r.OpenedAt != nil {
		t.Error("another request's session opened this one")
	}
}

func TestRFIPageCustomDomain(t *testing.T) {
	e := newEnv(t, envOptions{})
	g := e.rfiRequest(t, "globex", true)
	if !strings.HasPrefix(g.Link, "https://onboarding.globex.example/r/") {
		t.Fatalf("globex link = %s", g.Link)
	}
	a := e.applicantAt(t, g.Link)
	wantRedirect(t, a.get("?auth_code="+g.PreAuthCode), a.base)
	wantPage(t, a.get(""), http.StatusOK, "Globex", "Proof of business address", "0 of 1 document uploaded.")

	// Another organization's link is not served on Globex's domain.
	u, _ := url.Parse(rfiLinkOf(e.rfiRequest(t, "acme", false)))
	b := e.applicantAt(t, "https://onboarding.globex.example"+u.Path)
	wantPage(t, b.get(""), http.StatusNotFound, onboarding.ErrFormNotFound.Message)
}
