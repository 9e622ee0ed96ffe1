package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"onboard/onboarding"
)

// The browser tests drive the applicant's form in headless Chromium against
// the real binary: `onboard serve` on a loopback port, its sandbox outbox for
// the emails, and the API for what the partner sees. Each step saves a
// screenshot under test-output/browser/<test>/ (or $ONBOARD_TEST_OUTPUT).
// Without Chromium they skip and say why; with CI=true they fail instead.

// browserConfig is the configuration the browser tests serve: an
// organization with a display name, its standard configuration and one with
// company selection.
const browserConfig = `
[[organizations]]
id = "acme"
name = "Acme Payments"
default_config = "acme-standard"
terms_url = "https://acme.example/terms"

  [[organizations.configs]]
  id = "acme-standard"
  form = "standard"
  countries = ["GB", "IE"]
  registry_documents = true

  [[organizations.configs]]
  id = "acme-select"
  form = "standard"
  countries = ["GB"]
  company_selection = true
  registry_documents = true
`

// chromiumPath finds Chromium, or skips the test (fails it in CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is required for the browser tests in CI (apt-get install -y chromium)")
	}
	t.Skip("browser test skipped: Chromium is not installed (apt-get install -y chromium)")
	return ""
}

// browserServer is `onboard serve` for a browser: its public URL is the
// address it listens on, so the links it mails open in the browser.
type browserServer struct {
	*serveProc
	data string // the data directory
	key  string // the sandbox API key, for organization acme
}

func startBrowserServer(t *testing.T) *browserServer {
	t.Helper()
	return startBrowserServerWith(t, browserConfig)
}

// startBrowserServerWith is startBrowserServer serving config.
func startBrowserServerWith(t *testing.T, config string) *browserServer {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "onboard.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := filepath.Join(dir, "data")
	p := startServeOn(t, addr, "http://"+addr, "--config", cfg, "--data-dir", data)
	return &browserServer{serveProc: p, data: data, key: p.waitForKey(t)}
}

// createApplication creates an application through the API and returns
// create's answer.
func (s *browserServer) createApplication(t *testing.T, body string) map[string]any {
	t.Helper()
	return decodeJSON(t, s.wantStatus(t, http.StatusCreated, http.MethodPost, "/api/external/applications", s.key, body))
}

// application returns get-application's answer.
func (s *browserServer) application(t *testing.T, id string) map[string]any {
	t.Helper()
	return decodeJSON(t, s.wantStatus(t, http.StatusOK, http.MethodGet, "/api/external/applications/"+id, s.key, ""))
}

// sentMail is one message of the sandbox outbox.
type sentMail struct {
	To, Subject, Body string
}

// mailsTo returns the outbox's messages to addr, oldest first.
func mailsTo(t *testing.T, data, addr string) []sentMail {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(data, "outbox", "mail", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths) // names start with the UTC time of sending
	var out []sentMail
	dec := new(mime.WordDecoder)
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		to, err := mail.ParseAddress(msg.Header.Get("To"))
		if err != nil || !strings.EqualFold(to.Address, addr) {
			continue
		}
		subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
		if err != nil {
			t.Fatalf("%s: subject: %v", path, err)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, sentMail{To: to.Address, Subject: subject, Body: string(body)})
	}
	return out
}

// nthMailTo returns the n-th message (from 1) to addr. The server writes a
// message to the outbox before it answers the request that sends it, so the
// message is there once that answer (an API response, or the page it
// loads) has arrived: callers ask only then.
func nthMailTo(t *testing.T, data, addr string, n int) sentMail {
	t.Helper()
	msgs := mailsTo(t, data, addr)
	if len(msgs) < n {
		t.Fatalf("the outbox holds %d messages to %s, want at least %d", len(msgs), addr, n)
	}
	return msgs[n-1]
}

var (
	mailLinkPattern = regexp.MustCompile(`http://127\.0\.0\.1:\d+/a/[A-Za-z0-9_-]+`)
	mailCodePattern = regexp.MustCompile(`^([0-9]{6}) is your `)
)

func linkIn(t *testing.T, m sentMail) string {
	t.Helper()
	link := mailLinkPattern.FindString(m.Body)
	if link == "" {
		t.Fatalf("no form link in the email to %s:\n%s", m.To, m.Body)
	}
	return link
}

func codeIn(t *testing.T, m sentMail) string {
	t.Helper()
	c := mailCodePattern.FindStringSubmatch(m.Subject)
	if c == nil || !strings.Contains(m.Body, "    "+c[1]+"\n") && !strings.Contains(m.Body, "    "+c[1]+"\r\n") {
		t.Fatalf("no verification code in the email to %s: %q\n%s", m.To, m.Subject, m.Body)
	}
	return c[1]
}

// browserSize is a window the browser tests open the form in.
type browserSize struct {
	name          string
	width, height int
	mobile        bool // a touch phone
}

// browserSizes are the two sizes every page is tested at: a 360 px phone
// and a 1280 px desktop.
var browserSizes = [...]browserSize{
	{"phone", 360, 740, true},
	{"desktop", 1280, 900, false},
}

// browser is a running headless Chromium.
type browser struct {
	ctx   context.Context // the browser's first tab
	shots string          // where screenshots go
}

// newBrowser starts Chromium with a window of width×height; mobile
// emulates a touch phone at that size.
func newBrowser(t *testing.T, width, height int, mobile bool) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.WindowSize(width, height),
		chromedp.Flag("lang", "en-GB"),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelCtx()
		cancelAlloc()
	})
	b := &browser{ctx: ctx, shots: screenshotDir(t)}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium (%s): %v", path, err)
	}
	if mobile {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height), chromedp.EmulateScale(2), chromedp.EmulateMobile)); err != nil {
			t.Fatal(err)
		}
	}
	acceptDialogs(ctx)
	return b
}

// acceptDialogs answers "OK" to every confirm() of the tab, as a person
// who means to remove something does.
func acceptDialogs(ctx context.Context) {
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
}

// screenshotDir is the test's folder for screenshots, emptied first.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("ONBOARD_TEST_OUTPUT")
	if root == "" {
		root = "test-output"
	}
	dir := filepath.Join(root, "browser", strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tab is one browser tab with its own cookies: one person at the form.
type tab struct {
	t     *testing.T
	ctx   context.Context
	shots string
	n     int // screenshots taken
	// scriptsOff is set when the tab runs pages without JavaScript.
	scriptsOff bool
}

// disableScripts runs the tab's pages without JavaScript, as a browser
// with scripts turned off does.
func (tb *tab) disableScripts() {
	tb.t.Helper()
	tb.setScripts(false)
	tb.scriptsOff = true
}

// setScripts turns the tab's JavaScript on or off.
func (tb *tab) setScripts(on bool) {
	tb.t.Helper()
	if _, err := chromedp.Call(tb.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		tb.t.Fatal(err)
	}
}

// tab returns the browser's first tab.
func (b *browser) tab(t *testing.T) *tab { return &tab{t: t, ctx: b.ctx, shots: b.shots} }

// privateTab opens a tab in a new browser context: a second person, with
// cookies of their own.
func (b *browser) privateTab(t *testing.T, prefix string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	acceptDialogs(ctx)
	dir := filepath.Join(b.shots, prefix)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &tab{t: t, ctx: ctx, shots: dir}
}

// byID selects the element with id, whatever characters the id has.
func byID(id string) chromedp.CSS { return chromedp.CSS(`[id="` + id + `"]`) }

func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.fail("%s: %v", what, err)
	}
}

// fail stops the test with the page's text and a screenshot.
func (tb *tab) fail(format string, args ...any) {
	tb.t.Helper()
	tb.shot("failure")
	text, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	loc, _ := chromedp.Run(tb.ctx, chromedp.Location())
	tb.t.Fatalf(format+"\nat %s:\n%s", append(args, loc, text)...)
}

// open loads url and waits for the page.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do("open "+url, chromedp.Navigate(url))
}

// clickAndWait clicks the element with id and waits for the page it
// leads to (a form post, a link, an upload) to load.
func (tb *tab) clickAndWait(id string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	loaded := chromedp.Events(ctx, page.LoadEventFired)
	tb.do("click #"+id, chromedp.Click(byID(id), chromedp.NodeVisible))
	for _, err := range loaded {
		if err != nil {
			tb.fail("no page loaded after clicking #%s: %v", id, err)
		}
		return
	}
}

// fill sets the value of an input, select or textarea, as typing does.
func (tb *tab) fill(id, value string) {
	tb.t.Helper()
	tb.do("fill #"+id, chromedp.SetValue(byID(id), value))
}

// typeInto types value into an empty input with key events.
func (tb *tab) typeInto(id, value string) {
	tb.t.Helper()
	if _, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(document.getElementById(%q).value = "") === ""`, id))); err != nil {
		tb.fail("clear #%s: %v", id, err)
	}
	tb.do("type into #"+id, chromedp.SendKeys(byID(id), value))
}

// check ticks a checkbox or chooses a radio button.
func (tb *tab) check(id string) {
	tb.t.Helper()
	tb.do("check #"+id, chromedp.Click(byID(id), chromedp.NodeVisible))
}

// chooseByText selects the option of select id whose text is text.
func (tb *tab) chooseByText(id, text string) {
	tb.t.Helper()
	js := fmt.Sprintf(`(() => { const s = document.getElementById(%q); const o = [...s.options].find(o => o.text === %q); if (!o) return false; s.value = o.value; return true })()`, id, text)
	if ok, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](js)); err != nil || !ok {
		tb.fail("select %q in #%s: %v", text, id, err)
	}
}

// upload chooses file for the document key. With scripts on, choosing a
// file sends it (upload.js), which puts the server's new section of the
// document in place of the old one: upload waits for that section. With
// scripts off it presses Upload and waits for the page.
func (tb *tab) upload(key, file string) {
	tb.t.Helper()
	if tb.scriptsOff {
		tb.do("choose "+file, chromedp.SetUploadFiles(byID("file-"+key), []string{file}))
		tb.clickAndWait("upload-" + key)
		return
	}
	tb.eval(fmt.Sprintf(`document.getElementById(%q).dataset.before = "upload", ""`, "doc-"+key))
	tb.do("choose "+file, chromedp.SetUploadFiles(byID("file-"+key), []string{file}))
	tb.waitUntil("the new section of "+key, fmt.Sprintf(`(() => { const s = document.getElementById(%q); return !!s && !s.dataset.before })()`, "doc-"+key))
}

// waitUntil waits (up to 20 s) for the JavaScript condition js to hold:
// it is polled at each animation frame, so the wait ends with the event,
// and polled again on the next page when a navigation interrupts it.
func (tb *tab) waitUntil(what, js string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](js))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			tb.fail("waiting for %s: %v", what, err)
		}
	}
}

func (tb *tab) eval(js string) string {
	tb.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		tb.fail("evaluate %s: %v", js, err)
	}
	return s
}

// text is the page's visible text.
func (tb *tab) text() string { return tb.eval(`document.body.innerText`) }

// wantText asserts that the page shows each of want.
func (tb *tab) wantText(want ...string) {
	tb.t.Helper()
	text := tb.text()
	for _, w := range want {
		if !strings.Contains(text, w) {
			tb.fail("the page does not show %q", w)
		}
	}
}

// heading is the page's h1.
func (tb *tab) heading() string {
	return tb.eval(`(document.querySelector("h1") || {}).innerText || ""`)
}

func (tb *tab) wantHeading(want string) {
	tb.t.Helper()
	if got := tb.heading(); got != want {
		tb.fail("heading %q, want %q", got, want)
	}
}

// location is the address bar's URL.
func (tb *tab) location() string {
	tb.t.Helper()
	loc, err := chromedp.Run(tb.ctx, chromedp.Location())
	if err != nil {
		tb.fail("location: %v", err)
	}
	return loc
}

// value is the current value of a control.
func (tb *tab) value(id string) string {
	return tb.eval(fmt.Sprintf(`document.getElementById(%q).value`, id))
}

// shot saves a full-page screenshot as NN-name.png, and checks the page
// state it shows with axe-core: every state a test photographs is a state
// checked for accessibility (the failure screenshot is not).
func (tb *tab) shot(name string) {
	tb.t.Helper()
	if name != "failure" {
		defer tb.wantAccessible(name)
		tb.wantTitleOfHeading(name)
	}
	tb.n++
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(tb.shots, fmt.Sprintf("%02d-%s.png", tb.n, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Errorf("save screenshot: %v", err)
	}
}

// wantTitleOfHeading asserts that the page's title starts with its h1 (a
// page with errors starts it with "Error: "), as GOV.UK pages do: the
// tab, the history and a screen reader's first words name the page.
func (tb *tab) wantTitleOfHeading(state string) {
	tb.t.Helper()
	got := tb.eval(`JSON.stringify([document.title, (document.querySelector("h1") || {}).innerText || ""])`)
	var th [2]string
	if err := json.Unmarshal([]byte(got), &th); err != nil {
		tb.fail("title: %v", err)
	}
	title, heading := th[0], strings.Join(strings.Fields(th[1]), " ")
	if document := document(title); document != heading {
		tb.t.Errorf("%s: title %q does not start with the heading %q", state, title, heading)
	}
}

// document is the page's own name in a title "[Error: ]{page} – {org}".
func document(title string) string {
	title = strings.TrimPrefix(title, "Error: ")
	if i := strings.LastIndex(title, " – "); i >= 0 {
		title = title[:i]
	}
	return strings.Join(strings.Fields(title), " ")
}

// wantFits asserts that the page needs no sideways scrolling.
func (tb *tab) wantFits() {
	tb.t.Helper()
	got := tb.eval(`document.documentElement.scrollWidth + " " + document.documentElement.clientWidth`)
	scroll, view, _ := strings.Cut(got, " ")
	s, _ := strconv.Atoi(scroll)
	v, _ := strconv.Atoi(view)
	if v == 0 || s > v {
		wide := tb.eval(`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(e => e.tagName + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "")).slice(0, 5).join(", ")`)
		tb.fail("the page is %s px wide in a %s px viewport: it scrolls sideways (too wide: %s)", scroll, view, wide)
	}
}

// wantLabelled asserts that every control on the page has a label (a
// control hidden behind an enhanced one, such as a country type-ahead's
// select, is not on the page for people).
func (tb *tab) wantLabelled() {
	tb.t.Helper()
	if bare := tb.eval(`[...document.querySelectorAll("input:not([type=hidden]), select, textarea")].filter(e => !e.closest("[hidden]") && e.labels.length === 0 && !e.getAttribute("aria-label")).map(e => e.id || e.name).join(", ")`); bare != "" {
		tb.fail("controls without a label: %s", bare)
	}
}

// press sends one key to the focused element.
func (tb *tab) press(key string) {
	tb.t.Helper()
	tb.do("press "+strconv.Quote(key), chromedp.KeyEvent(key))
}

// focused describes the focused element: its id, or its text.
func (tb *tab) focused() string {
	return tb.eval(`document.activeElement.id || document.activeElement.innerText`)
}

// signIn asks for a code on the verification page and enters the one the
// outbox received (the n-th message to addr).
func (tb *tab) signIn(s *browserServer, addr string, n int) {
	tb.t.Helper()
	tb.wantHeading("Confirm it is you")
	tb.clickAndWait("send-code")
	tb.wantText("We have sent a 6-digit code")
	tb.typeInto("code", codeIn(tb.t, nthMailTo(tb.t, s.data, addr, n)))
	tb.clickAndWait("verify")
	tb.wantText("Your email address is confirmed.")
}

// fixturePDF is a real one-page PDF: a Companies House filing from the
// registry fixtures.
func fixturePDF(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs("testdata/registry/companies-house/documents/NwIncDoc10000001.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBrowserApplicantJourney is the whole form as the primary contact
// lives it: the invite email's link, verification by email, every stage,
// people and ownership, uploads (a real PDF and a file that is refused), a
// collaborator with their own link, the declarations and submission; and
// what the partner then reads through the API.
func TestBrowserApplicantJourney(t *testing.T) {
	b := newBrowser(t, 1280, 900, false)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited"}`)
	id := created["application_id"].(string)
	jane := b.tab(t)

	// The invite email's link opens the verification page.
	link := linkIn(t, nthMailTo(t, s.data, "jane@northwind.example", 1))
	if link != created["link"] {
		t.Errorf("the email's link %s is not create's link %s", link, created["link"])
	}
	jane.open(link)
	jane.wantText("Acme Payments", "NORTHWIND TRADING LIMITED", "j•••@northwind.example")
	jane.shot("verify")
	jane.clickAndWait("send-code")
	jane.typeInto("code", "000000")
	jane.clickAndWait("verify")
	if code := codeIn(t, nthMailTo(t, s.data, "jane@northwind.example", 2)); code != "000000" {
		jane.wantText("That code is not right. You have 4 more tries.")
		jane.shot("wrong-code")
		jane.typeInto("code", code)
		jane.clickAndWait("verify")
	}
	jane.wantText("Your email address is confirmed.", "Company details", "People and owners", "Documents", "Check your answers and send")
	jane.shot("overview")
	if got := s.application(t, id)["status"]; got != "in_progress" {
		t.Errorf("status after verification = %v, want in_progress", got)
	}

	// Checking the answers now lists what is missing; nothing can be sent
	// (or declared) until it is complete.
	jane.clickAndWait("task-send")
	jane.wantHeading("Check your answers before sending your application")
	jane.wantText("Still to do", "Industry is missing", "Proof of business address is missing", "Now send your application",
		"You cannot send your application yet. Complete the")
	if jane.eval(`String(document.getElementById("submit-application") !== null)`) == "true" {
		jane.fail("an incomplete application offers the declarations and Accept and send")
	}
	jane.shot("cannot-send")

	// Company details: the registry's values are there, its name read-only.
	jane.open(link)
	jane.clickAndWait("task-company")
	if got := jane.value("company_name"); got != "NORTHWIND TRADING LIMITED" {
		t.Errorf("company_name shows %q", got)
	}
	if ro := jane.eval(`String(document.getElementById("company_name").readOnly)`); ro != "true" {
		t.Error("the registry's company name can be edited")
	}
	if got := jane.value("registered_address.postcode"); got == "" {
		t.Error("the registered address is not pre-filled")
	}
	jane.fill("industry", "software")
	jane.typeInto("website", "northwind")
	// Leaving the field checks it at once (form.js); the server checks again.
	jane.do("leave the field", chromedp.KeyEvent("\t"))
	jane.wantText("Enter the website in the correct format, like https://www.example.com")
	jane.typeInto("phone", "+44 20 7946 0000")
	jane.clickAndWait("save-continue")
	jane.wantText("There is a problem", "Enter the website in the correct format, like https://www.example.com")
	jane.shot("company-error")
	if focused := jane.eval(`document.activeElement.id`); focused != "error-summary" {
		t.Errorf("focus after a failed save is on %q, want the error summary", focused)
	}
	jane.typeInto("website", "northwind.example") // saved as https://northwind.example
	jane.clickAndWait("save-continue")

	// About the business: every kind of control.
	jane.wantHeading("About the business")
	jane.typeInto("business_description", "We import and distribute specialist teas to UK cafés.")
	jane.check("countries_of_operation-0")
	jane.check("countries_of_operation-1")
	jane.typeInto("annual_turnover.amount", "250,000")
	jane.fill("annual_turnover.currency", "GBP")
	jane.typeInto("high_risk_revenue_percentage", "2.5")
	jane.check("regulated_entity-no")
	jane.typeInto("bank_account_iban", "GB82 WEST 1234 5698 7654 32")
	jane.shot("business")
	jane.clickAndWait("save-continue")

	// People and owners: the register's people, one more, a holding
	// company and ownership.
	jane.wantHeading("People and owners")
	jane.wantText("From the company register")
	jane.shot("people")
	jane.clickAndWait("add-person")
	jane.check("role-director")
	jane.check("role-ubo")
	jane.typeInto("person_full_name", "Priya Patel")
	jane.typeInto("person_date_of_birth.day", "12")
	jane.typeInto("person_date_of_birth.month", "4")
	jane.typeInto("person_date_of_birth.year", "1985")
	jane.typeInto("person_nationality", "GB")
	jane.typeInto("person_home_address.line1", "12 Orchard Road")
	jane.typeInto("person_home_address.city", "Leeds")
	jane.typeInto("person_home_address.postcode", "LS1 4AB")
	jane.typeInto("person_home_address.country", "GB")
	jane.typeInto("person_email", "priya@northwind.example")
	jane.typeInto("person_phone", "+44 7700 900123")
	jane.shot("person")
	jane.clickAndWait("save-person")
	jane.wantText("Priya Patel has been saved.")

	jane.clickAndWait("add-entity")
	jane.typeInto("name", "Northwind Group Holdings Ltd")
	jane.fill("type", "holding_company")
	jane.typeInto("country", "GB")
	jane.clickAndWait("save-entity")
	jane.wantText("Northwind Group Holdings Ltd has been saved.")

	// The register's PSC holds at least 75%: 30% more is refused.
	jane.clickAndWait("add-ownership")
	jane.chooseByText("owner", "Priya Patel")
	jane.typeInto("percentage", "30")
	jane.clickAndWait("save-ownership")
	jane.wantText("Ownership of NORTHWIND TRADING LIMITED would add up to 105%, more than 100%. Already stated: Eleanor Mary Hargreaves holds at least 75% (from the company register)")
	jane.shot("ownership-over-100")
	jane.typeInto("percentage", "20")
	jane.clickAndWait("save-ownership")
	jane.wantText("The ownership has been saved.", "Priya Patel owns 20% of NORTHWIND TRADING LIMITED, directly")
	jane.shot("people-done")
	jane.clickAndWait("continue")

	// Documents: the register's incorporation filing is shown as provided
	// (once the registry documents have been fetched), then a real PDF
	// everywhere one is needed, and a text file dressed as a PDF, which is
	// refused with its reason.
	jane.wantHeading("Documents")
	for deadline := time.Now().Add(30 * time.Second); s.application(t, id)["registry_documents_status"] == "pending"; {
		if time.Now().After(deadline) {
			t.Fatal("registry documents still pending after 30 s")
		}
		time.Sleep(100 * time.Millisecond) // polling for the fetch to finish, not proving an absence
	}
	jane.open(link + "/s/documents")
	jane.wantText("Provided by Companies House", "You do not need to upload it")
	pdf := fixturePDF(t)
	jane.upload("certificate_of_incorporation", pdf)
	jane.wantText("The document has been uploaded.")
	jane.upload("proof_of_address", pdf)
	app := s.application(t, id)
	for _, p := range app["data"].(map[string]any)["people"].([]any) {
		p := p.(map[string]any)
		jane.upload("person_id_document-"+p["id"].(string), pdf)
	}
	fake := filepath.Join(t.TempDir(), "statement.pdf")
	if err := os.WriteFile(fake, []byte("This is not a PDF, just some notes.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	jane.upload("bank_statement", fake)
	jane.wantText("There is a problem", "Business bank statement: statement.pdf was not accepted. The file is not a PDF that can be opened:",
		"Not accepted", "statement.pdf: The file is not a PDF that can be opened:")
	jane.shot("documents-rejected")
	// The summary's link puts the focus on the document's file input.
	jane.do("follow the summary link", chromedp.Click(`#error-summary a[href="#file-bank_statement"]`, chromedp.NodeVisible))
	if got := jane.focused(); got != "file-bank_statement" {
		jane.fail("the summary link focused %q, want the bank statement's file input", got)
	}
	// No two file inputs share an accessible name.
	if dup := jane.eval(`(() => { const seen = {}; for (const i of document.querySelectorAll("input[type=file]")) { const n = [...i.labels].map(l => l.textContent).join(" ").replace(/\s+/g, " ").trim(); if (seen[n]) return n; seen[n] = true; } return ""; })()`); dup != "" {
		jane.fail("two file inputs are both named %q", dup)
	}
	// The refused file blocks submission until it is replaced or removed.
	jane.clickAndWait("remove-bank_statement")
	jane.wantText("The file has been removed.")
	jane.shot("documents")

	// A colleague: their own link by email, their own verification.
	jane.open(link)
	jane.clickAndWait("collaborators")
	jane.typeInto("email", "tom@northwind.example")
	jane.typeInto("name", "Tom Baker")
	jane.clickAndWait("invite")
	jane.wantText("An invitation has been sent to tom@northwind.example.", "Tom Baker", "Invited: has not confirmed their email yet")
	jane.shot("collaborators")

	tom := b.privateTab(t, "tom")
	tomLink := linkIn(t, nthMailTo(t, s.data, "tom@northwind.example", 1))
	if tomLink == link {
		t.Fatal("the collaborator got the primary contact's link")
	}
	tom.open(tomLink)
	tom.signIn(s, "tom@northwind.example", 2)
	tom.clickAndWait("task-business")
	tom.typeInto("expected_monthly_volume.amount", "40000")
	tom.clickAndWait("save-later")
	tom.wantText("Your answers are saved.")
	tom.wantText("Declarations and sending", "Jane Smith, the primary contact, will make the declarations and send the application")
	tom.clickAndWait("review")
	tom.wantText("Jane Smith, the primary contact, will make the declarations and send the application.")
	if tom.eval(`String(document.getElementById("submit-application") !== null)`) == "true" {
		tom.fail("a collaborator is offered the declarations")
	}
	tom.shot("review")

	// Check the answers, make the declarations and send.
	jane.open(link)
	jane.clickAndWait("task-send")
	jane.wantHeading("Check your answers before sending your application")
	if strings.Contains(jane.text(), "Still to do") {
		jane.fail("the review still lists things to do")
	}
	jane.wantText("Priya Patel", "£40,000", "NwIncDoc10000001.pdf")
	if href := jane.eval(`document.getElementById("terms-link").href`); href != "https://acme.example/terms" {
		jane.fail("the terms link goes to %q", href)
	}
	// Sending without the declarations says which to tick.
	jane.clickAndWait("submit-application")
	jane.wantText("There is a problem", "Confirm that the information you have given is accurate and complete", "Confirm that you accept the terms and conditions")
	jane.shot("declarations-refused")
	jane.do("follow the summary link", chromedp.Click(`#error-summary a[href="#confirm_accuracy"]`, chromedp.NodeVisible))
	if got := jane.focused(); got != "confirm_accuracy" {
		jane.fail("the summary link focused %q, want the declaration's checkbox", got)
	}
	jane.check("confirm_accuracy")
	jane.check("confirm_terms")
	jane.shot("review")
	jane.clickAndWait("submit-application")
	jane.wantText("Application sent", "Your reference", onboarding.Reference(id), "What happens next")
	if strings.Contains(jane.text(), "Invite colleagues") || strings.Contains(jane.text(), "Your answers are kept") {
		jane.fail("the page after sending still offers invitations or speaks of keeping answers")
	}
	jane.shot("submitted")

	// Frozen: the stages show the answers read-only.
	jane.open(link + "/s/company")
	jane.wantHeading("Your application")

	// Signing out ends the session; the link asks for a new code.
	jane.clickAndWait("sign-out")
	jane.wantHeading("You have signed out")
	jane.shot("signed-out")
	jane.clickAndWait("sign-in-again")
	jane.wantHeading("Confirm it is you")

	// What the partner reads.
	app = s.application(t, id)
	if app["status"] != "submitted" || app["submitted_at"] == nil {
		t.Errorf("after submit: status %v, submitted_at %v", app["status"], app["submitted_at"])
	}
	parts := app["participants"].([]any)
	if len(parts) != 2 || parts[1].(map[string]any)["name"] != "Tom Baker" || parts[1].(map[string]any)["role"] != "collaborator" || parts[1].(map[string]any)["link"] != tomLink {
		t.Errorf("participants = %v", parts)
	}
	data := app["data"].(map[string]any)
	fields := data["fields"].(map[string]any)
	for k, want := range map[string]any{
		"industry": "software", "website": "https://northwind.example", "phone": "+442079460000",
		"bank_account_iban": "GB82WEST12345698765432", "confirm_terms": true,
		"expected_monthly_volume": map[string]any{"amount": 40000.0, "currency": "GBP"},
	} {
		if got, _ := json.Marshal(fields[k]); !bytes.Equal(got, mustJSON(t, want)) {
			t.Errorf("fields[%s] = %s, want %s", k, got, mustJSON(t, want))
		}
	}
	docs := data["documents"].(map[string]any)
	if len(docs) != 2 || docs["bank_statement"] != nil {
		t.Errorf("company documents = %v, want the certificate and the proof of address", docs)
	}
	cert := docs["certificate_of_incorporation"].(map[string]any)
	if cert["file_name"] != "NwIncDoc10000001.pdf" || cert["status"] != "accepted" || cert["acceptance_reason"] != "baseline_passed" {
		t.Errorf("certificate = %v", cert)
	}
	want, _ := os.ReadFile(pdf)
	if got := download(t, cert["download_url"].(string)); !bytes.Equal(got, want) {
		t.Errorf("the certificate's download is %d bytes, not the %d uploaded", len(got), len(want))
	}
	for _, p := range data["people"].([]any) {
		p := p.(map[string]any)
		if d, _ := p["documents"].(map[string]any)["person_id_document"].(map[string]any); d == nil || d["status"] != "accepted" {
			t.Errorf("%v has no accepted identity document: %v", p["full_name"], p["documents"])
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// download fetches a signed download URL.
func download(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("download %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

// TestBrowserPreAuth: the partner's pre-auth code lands the applicant in
// the form with no verification, and takes itself out of the address bar;
// an unknown code leads to verification with no error.
func TestBrowserPreAuth(t *testing.T) {
	b := newBrowser(t, 1280, 900, false)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara Byrne"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC","pre_auth":true}`)
	id, link, code := created["application_id"].(string), created["link"].(string), created["pre_auth_code"].(string)

	stranger := b.privateTab(t, "unknown-code")
	stranger.open(link + "?auth_code=" + strings.Repeat("X", 32))
	stranger.wantHeading("Confirm it is you")
	if strings.Contains(stranger.text(), "There is a problem") {
		stranger.fail("an unknown pre-auth code shows an error")
	}
	stranger.shot("unknown-code")
	if got := s.application(t, id)["status"]; got != "sent" {
		t.Errorf("status after an unknown code = %v, want sent", got)
	}

	ciara := b.tab(t)
	ciara.open(link + "?auth_code=" + code)
	ciara.wantHeading("Onboarding for EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY")
	ciara.wantText("Acme Payments", "Company details")
	if loc := ciara.location(); loc != link {
		t.Errorf("address bar after pre-auth = %s, want %s (the code removed)", loc, link)
	}
	ciara.shot("overview")
	if got := s.application(t, id)["status"]; got != "in_progress" {
		t.Errorf("status after pre-auth = %v, want in_progress", got)
	}
	// Keyboard only: the first Tab reaches "Skip to main content", the next
	// the header's "Sign out", the next the first section; Enter opens it.
	// The session carries on without the code.
	for i, want := range []string{"Skip to main content", "sign-out", "task-company"} {
		ciara.press("\t")
		if got := ciara.focused(); got != want {
			t.Fatalf("Tab %d focuses %q, want %q", i+1, got, want)
		}
	}
	ctx, cancel := context.WithTimeout(ciara.ctx, 20*time.Second)
	loaded := chromedp.Events(ctx, page.LoadEventFired)
	ciara.press("\r")
	for _, err := range loaded {
		if err != nil {
			ciara.fail("Enter on a section opened nothing: %v", err)
		}
		break
	}
	cancel()
	ciara.wantHeading("Company details")
	ciara.wantLabelled()
	ciara.shot("company")
}

// TestBrowserCompanySelection: on a configuration with company selection,
// the first page is a search of the register (by name or number);
// choosing a company asks "Is this your company?" and then fills the form
// from the register.
func TestBrowserCompanySelection(t *testing.T) { browserCompanySelection(t, 1280, 900, false) }

// TestBrowserCompanySelectionPhone is the same on a 360 px phone.
func TestBrowserCompanySelectionPhone(t *testing.T) { browserCompanySelection(t, 360, 740, true) }

func browserCompanySelection(t *testing.T, width, height int, mobile bool) {
	b := newBrowser(t, width, height, mobile)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"sam@example.com"},"country":"GB","config_id":"acme-select","pre_auth":true}`)
	id := created["application_id"].(string)

	sam := b.tab(t)
	sam.open(created["link"].(string) + "?auth_code=" + created["pre_auth_code"].(string))
	sam.wantHeading("Find your company")
	sam.wantText("UK company register (Companies House)")
	sam.shot("search")
	sam.typeInto("q", "north")
	sam.clickAndWait("search")
	sam.wantText("NORTHWIND TRADING LIMITED", "Number 10000001")
	sam.shot("results")
	sam.clickAndWait("choose-10000001")
	// "Is this your company?": no, back to the results; then by number.
	sam.wantHeading("Is this your company?")
	sam.wantText("NORTHWIND TRADING LIMITED", "16 April 2018")
	if header := sam.eval(`document.querySelector("header").innerText`); strings.Contains(header, "{") {
		t.Errorf("the header shows %q", header)
	}
	sam.shot("confirm")
	sam.clickAndWait("search-again")
	sam.wantHeading("Find your company")
	if got := sam.value("q"); got != "north" {
		t.Errorf("the search box after 'No' holds %q, want the query kept", got)
	}
	sam.do("open the help", chromedp.Click(`#cannot-find summary`, chromedp.NodeVisible))
	sam.wantText("Search by the company number")
	sam.shot("cannot-find")
	sam.typeInto("q", "10000001")
	sam.clickAndWait("search")
	sam.wantHeading("Is this your company?")
	sam.clickAndWait("confirm-company")
	sam.wantText("Your company has been found on the register.", "NORTHWIND TRADING LIMITED")
	sam.shot("chosen")
	sam.clickAndWait("task-company")
	if got := sam.value("company_number"); got != "10000001" {
		t.Errorf("company_number shows %q", got)
	}
	sam.shot("company")

	app := s.application(t, id)
	data := app["data"].(map[string]any)
	if data["fields"].(map[string]any)["company_name"] != "NORTHWIND TRADING LIMITED" || len(data["people"].([]any)) == 0 {
		t.Errorf("after choosing: fields %v, people %v", data["fields"], data["people"])
	}
	if app["registry_documents_status"] == nil {
		t.Error("choosing a UK company did not make the application registry-eligible")
	}
}

// TestBrowserPhone runs the form in a 360 px wide phone: every page fits
// the screen without sideways scrolling.
func TestBrowserPhone(t *testing.T) {
	b := newBrowser(t, 360, 740, true)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000002","company_name":"Bluebell Holdings PLC","pre_auth":true}`)
	link := created["link"].(string)

	phone := b.tab(t)
	phone.open(link)
	if w := phone.eval(`String(window.innerWidth)`); w != "360" {
		t.Fatalf("viewport is %s px wide, want 360", w)
	}
	phone.wantHeading("Confirm it is you")
	phone.wantFits()
	phone.shot("verify")

	phone.open(link + "?auth_code=" + created["pre_auth_code"].(string))
	for _, page := range []struct{ path, heading string }{
		{"", "Onboarding for BLUEBELL HOLDINGS PLC"},
		{"/s/company", "Company details"},
		{"/s/business", "About the business"},
		{"/s/people", "People and owners"},
		{"/people/new", "Add a person"},
		{"/entities/new", "Add a related company"},
		{"/ownership/new", "Add ownership"},
		{"/s/documents", "Documents"},
		{"/s/confirmation", "Check your answers before sending your application"},
		{"/collaborators", "Invite colleagues to help"},
		{"/review", "Check your answers before sending your application"},
	} {
		phone.open(link + page.path)
		phone.wantHeading(page.heading)
		phone.wantFits()
		phone.wantLabelled()
		phone.shot(strings.Trim(strings.ReplaceAll(page.path, "/", "-"), "-") + "page")
	}

	// An error summary and its messages fit too.
	phone.open(link + "/s/company")
	phone.typeInto("website", "not a url")
	phone.clickAndWait("save-continue")
	phone.wantText("There is a problem")
	phone.wantFits()
	phone.shot("company-error")
}

// TestBrowserWithoutJavaScript: with scripts off, the form still works: a
// stage saves, an upload goes up as a plain form post, errors show.
func TestBrowserWithoutJavaScript(t *testing.T) {
	b := newBrowser(t, 1280, 900, false)
	s := startBrowserServer(t)
	created := s.createApplication(t, `{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Limited","pre_auth":true}`)
	link := created["link"].(string)

	jane := b.tab(t)
	jane.disableScripts()
	jane.open(link + "?auth_code=" + created["pre_auth_code"].(string))
	jane.clickAndWait("task-business")
	jane.typeInto("business_description", "Specialist teas.")
	jane.typeInto("high_risk_revenue_percentage", "120")
	jane.clickAndWait("save-continue")
	jane.wantText("There is a problem", "Enter the share of revenue from high-risk activities (%) as a number from 0 to 100")
	jane.shot("error-without-js")
	// form.js would have moved the focus to the summary: it did not run.
	if focused := jane.eval(`document.activeElement.id`); focused == "error-summary" {
		t.Fatal("scripts ran although they are disabled")
	}
	jane.typeInto("high_risk_revenue_percentage", "0")
	jane.clickAndWait("save-continue")
	jane.wantHeading("People and owners")

	jane.open(link + "/s/documents")
	jane.upload("certificate_of_incorporation", fixturePDF(t))
	jane.wantText("The document has been uploaded.", "NwIncDoc10000001.pdf")
	jane.shot("uploaded-without-js")
}
