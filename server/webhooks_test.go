package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/notify"
	"onboard/notify/webhooktest"
	"onboard/onboarding"
)

// fastRetries is a compressed retry schedule: four attempts over a
// fraction of a second.
var fastRetries = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond}

// wait bounds how long a test waits for a delivery that must come.
const wait = 10 * time.Second

// newWebhookEnv is the whole stack with the delivery job running and one
// receiver registered for acme with every event type.
func newWebhookEnv(t *testing.T, opts envOptions) (*env, *webhooktest.Receiver, *onboarding.Endpoint) {
	t.Helper()
	if opts.webhooks == nil {
		opts.webhooks = fastRetries
	}
	e := newEnv(t, opts)
	rcv := webhooktest.New(t)
	secret, ep := e.addEndpoint(t, rcv.URL)
	rcv.SetSecrets(secret)
	return e, rcv, ep
}

// addEndpoint registers url for acme and returns its secret.
func (e *env) addEndpoint(t *testing.T, url string, events ...string) (string, *onboarding.Endpoint) {
	t.Helper()
	secret, ep, err := e.svc.AddEndpoint(context.Background(), onboarding.EndpointSpec{OrgID: "acme", URL: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return secret, ep
}

// wantVerified checks a delivery carries the Standard Webhooks headers,
// signed with every one of secrets, and a body whose id is the webhook-id.
func wantVerified(t *testing.T, d webhooktest.Delivery, typ string, secrets ...string) {
	t.Helper()
	if d.Event.Type != typ {
		t.Errorf("delivery of %s, want %s", d.Event.Type, typ)
	}
	if diff := cmp.Diff(secrets, d.Verified); diff != "" {
		t.Errorf("%s: secrets that verify (-want +got):\n%s\nsignature header %q", typ, diff, d.Signature)
	}
	if d.ID == "" || d.ID != d.Event.ID || !strings.HasPrefix(d.ID, "evt_") {
		t.Errorf("%s: webhook-id %q, body id %q", typ, d.ID, d.Event.ID)
	}
	if d.UserAgent != "onboard/test" || d.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s: User-Agent %q, Content-Type %q", typ, d.UserAgent, d.Header.Get("Content-Type"))
	}
	for _, h := range []string{"Cookie", "Authorization"} {
		if d.Header.Get(h) != "" {
			t.Errorf("%s: the delivery carries %s", typ, h)
		}
	}
	if strings.Contains(string(d.Body), "download_url") {
		t.Errorf("%s: the body carries a download_url:\n%s", typ, d.Body)
	}
}

// dataOf decodes an application event's data.
func dataOf(t *testing.T, d webhooktest.Delivery) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(d.Event.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWebhookEventsFollowTheirCauses drives an application through its
// life and checks each event arrives once, in order, signed, and without
// download links or sensitive fields; PATCH emits nothing.
func TestWebhookEventsFollowTheirCauses(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	id := e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)

	created := rcv.Next(t, wait)
	sent := rcv.Next(t, wait)
	wantSecrets := func() []string {
		eps, _ := e.svc.Endpoints(context.Background(), "acme")
		return []string{onboarding.FormatSecret(eps[0].Secrets[0].Key)}
	}()
	wantVerified(t, created, "application.created", wantSecrets...)
	wantVerified(t, sent, "application.sent", wantSecrets...)
	if got := dataOf(t, created); got["id"] != id || got["status"] != "created" {
		t.Errorf("created data: id %v status %v", got["id"], got["status"])
	}
	if got := dataOf(t, sent); got["status"] != "sent" {
		t.Errorf("sent data: status %v", got["status"])
	}

	// PATCH emits nothing: the next delivery is the applicant opening the
	// form, and the patched sensitive values are not in it.
	w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"tax_id":"IE1234567T","bank_account_iban":"IE29AIBK93115212345678","industry":"software"}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	opened := rcv.Next(t, wait)
	wantVerified(t, opened, "application.opened", wantSecrets...)
	fields := dataOf(t, opened)["data"].(map[string]any)["fields"].(map[string]any)
	if fields["industry"] != "software" {
		t.Errorf("opened data.fields = %v, want industry", fields)
	}
	for _, sensitive := range []string{"tax_id", "bank_account_iban"} {
		if _, ok := fields[sensitive]; ok {
			t.Errorf("opened data.fields carries sensitive %s", sensitive)
		}
	}
	if strings.Contains(string(opened.Body), "IE1234567T") || strings.Contains(string(opened.Body), "IE29AIBK") {
		t.Errorf("a sensitive value is in the body:\n%s", opened.Body)
	}

	a.post("/s/company", url.Values{"industry": {"software"}, "registered_address.line1": {"1 Grand Canal Sq"}, "registered_address.city": {"Dublin"}, "registered_address.country": {"IE"}})
	a.post("/s/business", url.Values{"business_description": {"Software"}})
	a.post("/people/new", url.Values{"roles": {"director"}, "person_full_name": {"Ciara Byrne"}})
	ciara := personID(t, e.apiApp(t, id), "Ciara Byrne")
	pdf := testPDF(t)
	a.get("/s/documents")
	a.upload("certificate_of_incorporation", "", "cert.pdf", "application/pdf", pdf)
	a.upload("proof_of_address", "", "bill.pdf", "application/pdf", pdf)
	a.upload("person_id_document", ciara, "id.pdf", "application/pdf", pdf)
	accept := func() url.Values { return url.Values{"confirm_accuracy": {"true"}, "confirm_terms": {"true"}} }
	wantRedirect(t, a.post("/submit", accept()), a.base+"?done=submitted")
	submitted := rcv.Next(t, wait)
	wantVerified(t, submitted, "application.submitted", wantSecrets...)
	data := dataOf(t, submitted)
	if data["status"] != "submitted" || data["submitted_at"] == nil {
		t.Errorf("submitted data: status %v submitted_at %v", data["status"], data["submitted_at"])
	}
	docs := data["data"].(map[string]any)["documents"].(map[string]any)
	if _, ok := docs["certificate_of_incorporation"]; !ok {
		t.Errorf("submitted data has no company documents: %v", docs)
	}

	// Each event was delivered once, and the log says so.
	attempts := waitAttempts(t, e, onboarding.AttemptQuery{EndpointID: ep.ID}, 4)
	var types []string
	for i := len(attempts) - 1; i >= 0; i-- {
		if !attempts[i].Success || attempts[i].Attempt != 1 || attempts[i].StatusCode != http.StatusNoContent {
			t.Errorf("log line %+v", attempts[i])
		}
		types = append(types, string(attempts[i].EventType))
	}
	if diff := cmp.Diff([]string{"application.created", "application.sent", "application.opened", "application.submitted"}, types); diff != "" {
		t.Errorf("delivery log, oldest first (-want +got):\n%s", diff)
	}
}

// TestWebhookRegistryDocumentsUpdated checks the event that tells a
// partner the registry documents are fetched, without their links.
func TestWebhookRegistryDocumentsUpdated(t *testing.T) {
	e, rcv, _ := newWebhookEnv(t, envOptions{jobs: true})
	rcv.SetSecrets() // signatures are checked in the test above
	id := e.create(t, "acme", "")
	d := rcv.NextOf(t, "application.registry_documents_updated", wait)
	data := dataOf(t, d)
	if data["id"] != id || data["registry_documents_status"] != "complete" {
		t.Errorf("data: id %v registry_documents_status %v", data["id"], data["registry_documents_status"])
	}
	if docs, _ := data["registry_documents"].([]any); len(docs) != 3 {
		t.Errorf("registry_documents = %v, want 3", data["registry_documents"])
	}
	if strings.Contains(string(d.Body), "download_url") {
		t.Errorf("registry documents carry download links:\n%s", d.Body)
	}
}

// TestWebhookRetries checks that failures are retried on the schedule with
// the same webhook-id and a fresh signature each time, and that every
// attempt is logged.
func TestWebhookRetries(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	rcv.Answer(func(d *webhooktest.Delivery, n int) webhooktest.Answer {
		if n <= 2 {
			return webhooktest.Answer{Status: http.StatusInternalServerError, Body: strings.Repeat("x", 3000)}
		}
		return webhooktest.Answer{}
	})
	e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	first, second, third := rcv.Next(t, wait), rcv.Next(t, wait), rcv.Next(t, wait)
	for _, d := range []webhooktest.Delivery{first, second, third} {
		if d.Event.Type != "application.created" || d.ID != first.ID || len(d.Verified) != 1 {
			t.Errorf("attempt of %s, id %s, verified %d; want every attempt of the created event, signed", d.Event.Type, d.ID, len(d.Verified))
		}
	}
	if third.Status != http.StatusNoContent {
		t.Errorf("third attempt answered %d", third.Status)
	}
	sent := rcv.Next(t, wait)
	if sent.Event.Type != "application.sent" {
		t.Errorf("after the retries came %s, want application.sent", sent.Event.Type)
	}
	log := waitAttempts(t, e, onboarding.AttemptQuery{EndpointID: ep.ID, EventID: first.ID}, 3)
	if len(log) != 3 {
		t.Fatalf("%d log lines for the created event, want 3: %+v", len(log), log)
	}
	for i, want := range []struct {
		attempt, status int
		success         bool
	}{{3, 204, true}, {2, 500, false}, {1, 500, false}} {
		l := log[i]
		if l.Attempt != want.attempt || l.StatusCode != want.status || l.Success != want.success {
			t.Errorf("log line %d = attempt %d status %d success %v; want %+v", i, l.Attempt, l.StatusCode, l.Success, want)
		}
		if !want.success && (len(l.Response) != onboarding.MaxLoggedResponse || l.Error != "answered 500 Internal Server Error") {
			t.Errorf("failed line keeps %d bytes of the answer and error %q", len(l.Response), l.Error)
		}
	}
	failed, err := e.svc.DeliveryAttempts(context.Background(), onboarding.AttemptQuery{FailedOnly: true})
	if err != nil || len(failed) != 2 {
		t.Errorf("failed-only log: %d lines, %v", len(failed), err)
	}
}

// TestWebhookGoneDisablesTheEndpoint checks a 410 disables the endpoint at
// once, and nothing more is sent to it.
func TestWebhookGoneDisablesTheEndpoint(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	rcv.Answer(func(*webhooktest.Delivery, int) webhooktest.Answer {
		return webhooktest.Answer{Status: http.StatusGone}
	})
	e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	if d := rcv.Next(t, wait); d.Event.Type != "application.created" {
		t.Errorf("first delivery %s", d.Event.Type)
	}
	got := waitForEndpoint(t, e, ep.ID, func(ep *onboarding.Endpoint) bool { return !ep.Enabled })
	if got.DisabledReason != onboarding.DisabledGone {
		t.Errorf("disabled reason %q", got.DisabledReason)
	}
	waitQueued(t, e, 0)
	if n := len(rcv.All()); n != 1 {
		t.Errorf("%d deliveries to a gone endpoint, want 1", n)
	}
}

// TestWebhookRetryAfter checks that a 429's Retry-After holds the next
// attempt back for at least as long as it asks.
func TestWebhookRetryAfter(t *testing.T) {
	e, rcv, _ := newWebhookEnv(t, envOptions{})
	rcv.Answer(func(_ *webhooktest.Delivery, n int) webhooktest.Answer {
		if n == 1 {
			return webhooktest.Answer{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}
		}
		return webhooktest.Answer{}
	})
	e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	first := rcv.Next(t, wait)
	second := rcv.Next(t, wait)
	if second.ID != first.ID {
		t.Fatalf("second delivery is %s, want the retry of %s", second.Event.Type, first.Event.Type)
	}
	t1, _ := strconv.ParseInt(first.Timestamp, 10, 64)
	t2, _ := strconv.ParseInt(second.Timestamp, 10, 64)
	if t2-t1 < 1 {
		t.Errorf("retried %d s after a Retry-After of 1 s", t2-t1)
	}
}

// TestWebhookOrderPerApplication checks that a later event of an
// application waits while an earlier one is retried, and that other
// applications' events are not held up meanwhile.
func TestWebhookOrderPerApplication(t *testing.T) {
	e, rcv, _ := newWebhookEnv(t, envOptions{webhooks: []time.Duration{0, 700 * time.Millisecond}})
	var held string
	rcv.Answer(func(d *webhooktest.Delivery, n int) webhooktest.Answer {
		if n == 1 { // the first application's created event fails once
			held = d.ID
			return webhooktest.Answer{Status: http.StatusServiceUnavailable}
		}
		return webhooktest.Answer{}
	})
	first := e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	if d := rcv.Next(t, wait); d.ID != held {
		t.Fatalf("first delivery %s", d.Event.Type)
	}
	second := e.create(t, "acme", `{"primary_contact":{"email":"sean@baile.example","name":"Seán"},"country":"IE","company_number":"100003","company_name":"Baile Átha Cliath Teoranta"}`)
	// While the first application's created event waits for its retry,
	// the second application's events arrive.
	for _, want := range []string{"application.created", "application.sent"} {
		d := rcv.Next(t, wait)
		if d.Event.Type != want || dataOf(t, d)["id"] != second {
			t.Fatalf("got %s of %v, want %s of the second application", d.Event.Type, dataOf(t, d)["id"], want)
		}
	}
	for _, want := range []string{"application.created", "application.sent"} {
		d := rcv.Next(t, wait)
		if d.Event.Type != want || dataOf(t, d)["id"] != first {
			t.Fatalf("got %s of %v, want %s of the first application", d.Event.Type, dataOf(t, d)["id"], want)
		}
	}
}

// TestWebhookDeadEndpointBesideHealthy checks that an endpoint that never
// answers does not delay another endpoint's deliveries, even when it has
// more deliveries due than there are workers.
func TestWebhookDeadEndpointBesideHealthy(t *testing.T) {
	slow := notify.NewWebhooks(notify.WebhookOptions{UserAgent: "onboard/test", Timeout: 10 * time.Second, AllowPrivate: true, AllowHTTP: true})
	e, healthy, _ := newWebhookEnv(t, envOptions{transport: slow})
	dead := webhooktest.New(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	dead.Answer(func(*webhooktest.Delivery, int) webhooktest.Answer { return webhooktest.Answer{Hold: hold} })
	e.addEndpoint(t, dead.URL)
	const apps = onboarding.DefaultWebhookWorkers + 4
	start := time.Now()
	for range apps {
		e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	}
	for range 2 * apps {
		healthy.Next(t, wait)
	}
	// Every attempt to the dead endpoint hangs for the 10 s timeout; the
	// healthy one got all its events long before even one of those ended.
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the healthy endpoint's %d deliveries took %v beside a dead endpoint", 2*apps, took)
	}
}

// TestWebhookTestRedeliverRotate checks the operator's tools: a test event
// goes to one endpoint only, a redelivery repeats the event with its id,
// and after a rotation both secrets sign until the old one expires.
func TestWebhookTestRedeliverRotate(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	other := webhooktest.New(t)
	_, otherEP := e.addEndpoint(t, other.URL, "application.submitted")
	ctx := context.Background()

	ev, err := e.svc.TestEndpoint(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.Next(t, wait)
	if d.Event.Type != "webhook.test" || d.ID != ev.ID || string(d.Event.Data) != `{"endpoint_id":"`+ep.ID+`"}` {
		t.Errorf("test delivery %s %s %s", d.Event.Type, d.ID, d.Event.Data)
	}

	e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	created := rcv.Next(t, wait)
	rcv.Next(t, wait) // sent
	queued, err := e.svc.Redeliver(ctx, created.ID, ep.ID)
	if err != nil || len(queued) != 1 || queued[0] != ep.ID {
		t.Fatalf("Redeliver = %v, %v", queued, err)
	}
	again := rcv.Next(t, wait)
	if again.ID != created.ID || string(again.Body) != string(created.Body) {
		t.Errorf("redelivered %s, want %s with the same body", again.ID, created.ID)
	}

	oldSecret := onboarding.FormatSecret(ep.Secrets[0].Key)
	newSecret, _, err := e.svc.RotateEndpointSecret(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	rcv.SetSecrets(newSecret, oldSecret)
	if _, err := e.svc.TestEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	rotated := rcv.Next(t, wait)
	wantVerified(t, rotated, "webhook.test", newSecret, oldSecret)
	if n := len(strings.Fields(rotated.Signature)); n != 2 {
		t.Errorf("%d signatures during the rotation, want 2", n)
	}
	// A second rotation within the day keeps both earlier secrets signing:
	// a receiver still on the first loses nothing.
	newest, _, err := e.svc.RotateEndpointSecret(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	rcv.SetSecrets(newest, newSecret, oldSecret)
	if _, err := e.svc.TestEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	wantVerified(t, rcv.Next(t, wait), "webhook.test", newest, newSecret, oldSecret)
	for range 2 {
		if _, _, err := e.svc.RotateEndpointSecret(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.svc.RotateEndpointSecret(ctx, ep.ID); err == nil || !strings.Contains(err.Error(), "already has 5 secrets signing") {
		t.Errorf("a sixth signing secret: %v", err)
	}
	if n := len(other.All()); n != 0 {
		t.Errorf("the endpoint that wants only submitted events got %d deliveries", n)
	}

	// Errors the operator can make.
	_, globexEP, err := e.svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "globex", URL: other.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"redeliver unknown event", func() error { _, err := e.svc.Redeliver(ctx, "evt_01JD0000000000000000000000", ""); return err }(), "event 'evt_01JD0000000000000000000000' not found (events are kept 30 days)"},
		{"redeliver to unknown endpoint", func() error { _, err := e.svc.Redeliver(ctx, created.ID, "we_nope"); return err }(), "webhook endpoint 'we_nope' not found"},
		{"test unknown endpoint", func() error { _, err := e.svc.TestEndpoint(ctx, "we_nope"); return err }(), "webhook endpoint 'we_nope' not found"},
		{"redeliver to another organization's endpoint", func() error { _, err := e.svc.Redeliver(ctx, created.ID, globexEP.ID); return err }(), "webhook endpoint '" + globexEP.ID + "' not found"},
		{"redeliver to another organization's disabled endpoint", func() error {
			if _, _, err := e.svc.DisableEndpoint(ctx, globexEP.ID); err != nil {
				return err
			}
			_, err := e.svc.Redeliver(ctx, created.ID, globexEP.ID)
			return err
		}(), "webhook endpoint '" + globexEP.ID + "' not found"},
		{"redeliver to a disabled endpoint", func() error {
			if _, _, err := e.svc.DisableEndpoint(ctx, otherEP.ID); err != nil {
				return err
			}
			_, err := e.svc.Redeliver(ctx, created.ID, otherEP.ID)
			return err
		}(), "webhook endpoint '" + otherEP.ID + "' is disabled (disabled by the operator); enable it first"},
	} {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, tt.err, tt.want)
		}
	}
}

// eventually polls check until it reports done, failing the test with its
// last word after the wait: for state the delivery job changes, which has
// no other signal to wait on.
func eventually(t *testing.T, check func() (done bool, last string)) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		done, last := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not done after %v: %s", wait, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForEndpoint returns the stored endpoint once ok holds for it.
func waitForEndpoint(t *testing.T, e *env, id string, ok func(*onboarding.Endpoint) bool) *onboarding.Endpoint {
	t.Helper()
	var ep *onboarding.Endpoint
	eventually(t, func() (bool, string) {
		var err error
		if ep, err = e.store.Endpoint(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return ok(ep), fmt.Sprintf("endpoint %+v", ep)
	})
	return ep
}

// waitAttempts returns the delivery log lines q finds once there are at
// least n: the receiver has an attempt a moment before its line is written.
func waitAttempts(t *testing.T, e *env, q onboarding.AttemptQuery, n int) []onboarding.DeliveryAttempt {
	t.Helper()
	var lines []onboarding.DeliveryAttempt
	eventually(t, func() (bool, string) {
		var err error
		if lines, err = e.svc.DeliveryAttempts(context.Background(), q); err != nil {
			t.Fatal(err)
		}
		return len(lines) >= n, fmt.Sprintf("%d delivery log lines for %+v, want %d", len(lines), q, n)
	})
	return lines
}

// waitQueued waits until n deliveries are queued.
func waitQueued(t *testing.T, e *env, n int) {
	t.Helper()
	eventually(t, func() (bool, string) {
		got, err := e.store.QueuedDeliveries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return got == n, fmt.Sprintf("%d deliveries queued, want %d", got, n)
	})
}

// TestWebhookCapture writes real deliveries, with the secrets that sign
// them, to $ONBOARD_WEBHOOK_CAPTURE (a temporary file without it), so that
// .ci/run can verify them with a second implementation of Standard
// Webhooks, the standardwebhooks npm package: one delivery signed with one
// secret, and one during a rotation, signed with both.
func TestWebhookCapture(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{})
	ctx := context.Background()
	secret := onboarding.FormatSecret(ep.Secrets[0].Key)
	type capture struct {
		Secrets []string          `json:"secrets"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	captureOf := func(d webhooktest.Delivery, secrets ...string) capture {
		return capture{Secrets: secrets, Body: string(d.Body), Headers: map[string]string{
			"webhook-id": d.ID, "webhook-timestamp": d.Timestamp, "webhook-signature": d.Signature,
		}}
	}
	if _, err := e.svc.TestEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	one := rcv.Next(t, wait)
	wantVerified(t, one, "webhook.test", secret)
	rotated, _, err := e.svc.RotateEndpointSecret(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	rcv.SetSecrets(rotated, secret)
	if _, err := e.svc.TestEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	two := rcv.Next(t, wait)
	wantVerified(t, two, "webhook.test", rotated, secret)

	path := os.Getenv("ONBOARD_WEBHOOK_CAPTURE")
	if path == "" {
		path = filepath.Join(t.TempDir(), "capture.json")
	}
	b, err := json.MarshalIndent([]capture{captureOf(one, secret), captureOf(two, rotated, secret)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookProductionRefusesPrivateAddresses checks the production
// transport's address rule at registration and again at every delivery:
// an endpoint stored while its name pointed elsewhere (DNS rebinding) is
// refused when it now resolves to a loopback address, and the receiver is
// never reached.
func TestWebhookProductionRefusesPrivateAddresses(t *testing.T) {
	production := notify.NewWebhooks(notify.WebhookOptions{UserAgent: "onboard/test", Timeout: 2 * time.Second, AllowHTTP: true})
	e := newEnv(t, envOptions{webhooks: []time.Duration{0}, transport: production})
	rcv := webhooktest.New(t)
	ctx := context.Background()
	port := rcv.URL[strings.LastIndexByte(rcv.URL, ':')+1:]
	for _, u := range []string{rcv.URL, "http://localhost:" + port + "/hooks"} {
		_, _, err := e.svc.AddEndpoint(ctx, onboarding.EndpointSpec{OrgID: "acme", URL: u})
		if err == nil || !strings.HasPrefix(err.Error(), "Invalid webhook URL: ") || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("AddEndpoint(%s) = %v, want a loopback refusal", u, err)
		}
	}
	ep := &onboarding.Endpoint{ID: "we_01JD0000000000000000000000", OrgID: "acme", URL: "http://localhost:" + port + "/hooks",
		Enabled: true, CreatedAt: time.Now(), Secrets: []onboarding.SigningSecret{{Key: make([]byte, 32)}}}
	if err := e.store.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	waitQueued(t, e, 0)
	log, err := e.svc.DeliveryAttempts(ctx, onboarding.AttemptQuery{EndpointID: ep.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 {
		t.Fatalf("%d attempts logged, want 2: %+v", len(log), log)
	}
	for _, l := range log {
		if l.Success || l.StatusCode != 0 || !strings.Contains(l.Error, "loopback") {
			t.Errorf("attempt %+v, want a loopback refusal", l)
		}
	}
	if n := len(rcv.All()); n != 0 {
		t.Errorf("the receiver got %d deliveries through a refused address", n)
	}
}

// TestWebhookEndpointDisabledAfterFiveExhaustedEvents checks that an
// endpoint that fails every attempt of five events in a row is disabled,
// and that the rest of its queue is dropped with a log line each.
func TestWebhookEndpointDisabledAfterFiveExhaustedEvents(t *testing.T) {
	e, rcv, ep := newWebhookEnv(t, envOptions{webhooks: []time.Duration{0}})
	rcv.Answer(func(*webhooktest.Delivery, int) webhooktest.Answer {
		return webhooktest.Answer{Status: http.StatusInternalServerError}
	})
	for range 3 {
		e.create(t, "acme", `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`)
	}
	got := waitForEndpoint(t, e, ep.ID, func(ep *onboarding.Endpoint) bool { return !ep.Enabled })
	if got.DisabledReason != "5 events in a row failed every delivery attempt" || got.Exhausted != onboarding.DisableAfterExhausted {
		t.Errorf("endpoint after = reason %q, exhausted %d", got.DisabledReason, got.Exhausted)
	}
	waitQueued(t, e, 0)
	lines := waitAttempts(t, e, onboarding.AttemptQuery{EndpointID: ep.ID}, 5)
	attempted, dropped := 0, 0
	for _, l := range lines {
		switch {
		case l.StatusCode == http.StatusInternalServerError && strings.HasSuffix(l.Error, "; gave up after 1 attempts"):
			attempted++
		case l.StatusCode == 0 && strings.HasPrefix(l.Error, "not delivered: the endpoint was disabled"):
			dropped++
		default:
			t.Errorf("log line %+v", l)
		}
	}
	// Deliveries of different applications run side by side, so the sixth
	// event may be in flight when the fifth disables the endpoint (then it
	// is both attempted and dropped), queued and dropped, or committed
	// after the endpoint was disabled and never queued for it.
	if attempted < 5 || attempted > 6 || dropped > 1 || len(rcv.All()) < attempted {
		t.Errorf("%d attempted, %d dropped, %d received; want 5 or 6 attempted, at most one dropped", attempted, dropped, len(rcv.All()))
	}
	// Enabling it again gives it a fresh count.
	enabled, changed, err := e.svc.EnableEndpoint(context.Background(), ep.ID)
	if err != nil || !changed || !enabled.Enabled || enabled.Exhausted != 0 || enabled.DisabledReason != "" {
		t.Errorf("EnableEndpoint = %+v, changed %v, %v", enabled, changed, err)
	}
}

// TestAddEndpointRefusals checks the messages an operator gets for an
// endpoint that cannot be registered.
func TestAddEndpointRefusals(t *testing.T) {
	e := newEnv(t, envOptions{transport: notify.NewWebhooks(notify.WebhookOptions{AllowPrivate: true, AllowHTTP: true})})
	ok := "http://127.0.0.1:9/hooks"
	tests := []struct {
		name string
		spec onboarding.EndpointSpec
		want string
	}{
		{"unknown organization", onboarding.EndpointSpec{OrgID: "nope", URL: ok}, "unknown organization 'nope'"},
		{"no URL", onboarding.EndpointSpec{OrgID: "acme", URL: " "}, "a webhook URL is required"},
		{"not http", onboarding.EndpointSpec{OrgID: "acme", URL: "ftp://example.com/x"}, "Invalid webhook URL: webhook URLs must be absolute http or https URLs"},
		{"credentials", onboarding.EndpointSpec{OrgID: "acme", URL: "http://u:p@127.0.0.1/x"}, "Invalid webhook URL: webhook URLs must not carry credentials"},
		{"empty event type", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Events: []string{""}},
			"an event type is required after --event (leave --event out to receive every type)"},
		{"an empty type between commas", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Events: []string{"application.approved,,application.submitted"}},
			"an event type is required after --event (leave --event out to receive every type)"},
		{"a space in the URL", onboarding.EndpointSpec{OrgID: "acme", URL: ok + "/a b"}, "Invalid webhook URL: webhook URLs must not contain spaces or control characters"},
		{"a tab in the URL", onboarding.EndpointSpec{OrgID: "acme", URL: ok + "/a\tb"}, "Invalid webhook URL: webhook URLs must not contain spaces or control characters"},
		{"unknown event type", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Events: []string{"application.updated"}},
			"unknown event type 'application.updated' (valid types: application.created, application.sent, application.opened, application.submitted, application.referred, application.approved, application.rejected, application.registry_documents_updated, rfi_request.created, rfi_request.opened, rfi_request.completed, rfi_request.expired, webhook.test)"},
		{"two lines", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Description: "a\nb"}, "a description must be one line, without control characters"},
		{"a right-to-left override", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Description: "invoice\u202egpj.exe"}, "a description must be one line, without control characters"},
		{"too long", onboarding.EndpointSpec{OrgID: "acme", URL: ok, Description: strings.Repeat("é", 201)}, "a description is at most 200 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := e.svc.AddEndpoint(context.Background(), tt.spec)
			if err == nil || err.Error() != tt.want {
				t.Errorf("AddEndpoint = %v, want %q", err, tt.want)
			}
		})
	}
	if _, ep, err := e.svc.AddEndpoint(context.Background(), onboarding.EndpointSpec{OrgID: "acme", URL: ok, Description: strings.Repeat("é", 200)}); err != nil || ep.Description != strings.Repeat("é", 200) {
		t.Errorf("200 characters: %v", err)
	}
}
