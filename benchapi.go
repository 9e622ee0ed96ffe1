package main

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// benchCreateBody creates an application for a sandbox company.
const benchCreateBody = `{"primary_contact":{"email":"load@example.com","name":"Load Test"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"%s}`

// benchAPI makes the requests of the API's operations.
type benchAPI struct {
	client *http.Client
	base   string // http://127.0.0.1:port
	auth   http.Header
}

// newBenchAPI drives the API of srv with client.
func newBenchAPI(client *http.Client, srv *benchServer) *benchAPI {
	return &benchAPI{client: client, base: srv.base, auth: http.Header{"Authorization": {"Bearer " + srv.key}}}
}

// call makes one API request and decodes its JSON answer into out (when
// not nil).
func (a *benchAPI) call(method, path, body string, want int, out any) error {
	req := benchRequest{method: method, url: a.base + "/api/external" + path, header: a.auth, want: want}
	if body != "" {
		req.body, req.contentType = []byte(body), "application/json"
	}
	_, b, err := send(a.client, req)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// created is what the API answers a create with.
type created struct {
	ID          string `json:"application_id"`
	Link        string `json:"link"`
	PreAuthCode string `json:"pre_auth_code"`
}

// create creates an application, with a pre-auth code when preAuth.
func (a *benchAPI) create(preAuth bool) (created, error) {
	extra := ""
	if preAuth {
		extra = `,"pre_auth":true`
	}
	var c created
	err := a.call("POST", "/applications", fmt.Sprintf(benchCreateBody, extra), http.StatusCreated, &c)
	return c, err
}

// benchFixtures are the applications the operations work on.
type benchFixtures struct {
	apps       []string          // seeded: get and PATCH
	submitted  []string          // submitted through the test helper: decisions
	applicants []*benchApplicant // signed in, one per worker: stage saves
	seedRate   float64           // creates per second while seeding
}

// seed creates n applications, then enough submitted applications for
// the decisions of d (judged by how fast the seeding went), then one
// signed-in applicant per worker.
func (a *benchAPI) seed(n, concurrency int, d time.Duration, progress func(string, ...any)) (*benchFixtures, error) {
	f := &benchFixtures{apps: make([]string, n)}
	progress("seeding %d applications", n)
	start := time.Now()
	if err := parallel(n, concurrency, func(i int) error {
		c, err := a.create(false)
		f.apps[i] = c.ID
		return err
	}); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	f.seedRate = float64(n) / time.Since(start).Seconds()

	// A decision is one transaction, as a create is, with less to do (no
	// registry, no invite); submitting through the test helper takes every
	// step of the form, so the applications cost much more to prepare than
	// to decide. Twice the rate of the creates, at most n, is a
	// compromise: the decision row says when they ran out, and its rate
	// is then over the time it ran.
	pool := min(int(2*f.seedRate*d.Seconds()), n) + concurrency
	f.submitted = make([]string, pool)
	progress("submitting %d applications for the decisions", pool)
	if err := parallel(pool, concurrency, func(i int) error {
		c, err := a.create(false)
		if err != nil {
			return err
		}
		f.submitted[i] = c.ID
		return a.call("POST", "/test-helpers/applications/"+c.ID+"/submit", "", http.StatusOK, nil)
	}); err != nil {
		return nil, fmt.Errorf("prepare decisions: %w", err)
	}

	progress("signing %d applicants in", concurrency)
	f.applicants = make([]*benchApplicant, concurrency)
	if err := parallel(concurrency, concurrency, func(i int) error {
		c, err := a.create(true)
		if err != nil {
			return err
		}
		f.applicants[i], err = a.signIn(c.Link, c.PreAuthCode)
		return err
	}); err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	return f, nil
}

// stored is how many applications the fixtures hold.
func (f *benchFixtures) stored() int { return len(f.apps) + len(f.submitted) + len(f.applicants) }

// benchApplicant is a browser signed in to the applicant form: its
// cookies and the CSRF token of the last page.
type benchApplicant struct {
	link    string // http://127.0.0.1:port/a/{slug}
	cookies map[string]string
	csrf    string
}

// csrfMeta is the form's CSRF token in the page's head.
var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// signIn opens link with a pre-auth code, as the applicant's first visit,
// and then the form's first page, for its CSRF token.
func (a *benchAPI) signIn(link, code string) (*benchApplicant, error) {
	ap := &benchApplicant{link: link, cookies: map[string]string{}}
	resp, _, err := send(a.client, benchRequest{method: "GET", url: link + "?auth_code=" + url.QueryEscape(code), want: http.StatusSeeOther})
	if err != nil {
		return nil, err
	}
	ap.keep(resp)
	resp, page, err := send(a.client, benchRequest{method: "GET", url: link, header: ap.header(), want: http.StatusOK})
	if err != nil {
		return nil, err
	}
	ap.keep(resp)
	m := csrfMeta.FindSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("GET %s: no csrf-token in the page: not signed in", link)
	}
	ap.csrf = html.UnescapeString(string(m[1]))
	return ap, nil
}

// keep remembers the cookies resp sets.
func (ap *benchApplicant) keep(resp *http.Response) {
	for _, c := range resp.Cookies() {
		ap.cookies[c.Name] = c.Value
	}
}

// header is the Cookie header of the applicant's next request.
func (ap *benchApplicant) header() http.Header {
	var parts []string
	for name, value := range ap.cookies {
		parts = append(parts, (&http.Cookie{Name: name, Value: value}).String())
	}
	return http.Header{"Cookie": {strings.Join(parts, "; ")}}
}

// saveStage posts the business stage with its save button, as the form
// does, and checks that it was saved.
func (a *benchAPI) saveStage(ap *benchApplicant, description string) error {
	form := url.Values{"csrf": {ap.csrf}, "business_description": {description}, "action": {"save"}}
	resp, _, err := send(a.client, benchRequest{
		method: "POST", url: ap.link + "/s/business", body: []byte(form.Encode()),
		contentType: "application/x-www-form-urlencoded", header: ap.header(), want: http.StatusSeeOther,
	})
	if err != nil {
		return err
	}
	ap.keep(resp)
	if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, "?done=saved") {
		return fmt.Errorf("POST %s/s/business: redirected to %q, not saved", ap.link, loc)
	}
	return nil
}

// measureAPI runs every operation of the API for d each, on the fixtures.
// Before each, it lets the server fetch the registry documents of the
// applications created so far (settle).
func (a *benchAPI) measureAPI(f *benchFixtures, concurrency int, d time.Duration, settle func(), progress func(string, ...any)) []opResult {
	n := len(f.apps)
	var results []opResult
	phase := func(name, ceiling string, do func(w, i int) error) {
		settle()
		progress("measuring %s", name)
		r := runPhase(name, concurrency, d, do)
		r.Ceiling = ceiling
		results = append(results, r)
	}
	phase("create", ceilingInsert, func(w, i int) error {
		_, err := a.create(false)
		return err
	})
	phase("get", ceilingRead, func(w, i int) error {
		return a.call("GET", "/applications/"+f.apps[rand.IntN(n)], "", http.StatusOK, nil)
	})
	phase("list", ceilingRead, func(w, i int) error {
		return a.call("GET", "/applications?limit=50", "", http.StatusOK, nil)
	})
	phase("patch", ceilingInsert, func(w, i int) error {
		// Workers PATCH different applications.
		id := f.apps[(w+i*concurrency)%n]
		return a.call("PATCH", "/applications/"+id, fmt.Sprintf(`{"fields":{"business_description":"Bench %d-%d"}}`, w, i), http.StatusOK, nil)
	})
	var next atomic.Int64
	phase("decision", ceilingInsert, func(w, i int) error {
		k := int(next.Add(1) - 1)
		if k >= len(f.submitted) {
			return errUsedUp
		}
		return a.call("POST", "/applications/"+f.submitted[k]+"/decision", `{"type":"application.approved"}`, http.StatusOK, nil)
	})
	phase("stage save", ceilingInsert, func(w, i int) error {
		return a.saveStage(f.applicants[w], fmt.Sprintf("Bench %d-%d", w, i))
	})
	return results
}
