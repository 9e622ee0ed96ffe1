package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// CreateBody is the body of a create: an application for a sandbox company.
const CreateBody = `{"primary_contact":{"email":"load@example.com","name":"Load Test"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"%s}`

// benchAPI makes the requests of the API's operations.
type benchAPI struct {
	client *http.Client
	base   string // http://127.0.0.1:port
	auth   http.Header
	// creates counts the applications created.
	creates atomic.Int64
}

// newBenchAPI drives the API of srv with client.
func newBenchAPI(client *http.Client, srv Server) *benchAPI {
	return &benchAPI{client: client, base: srv.URL(), auth: http.Header{"Authorization": {"Bearer " + srv.Key()}}}
}

// call makes one API request and decodes its JSON answer into out (when
// not nil).
func (a *benchAPI) call(method, path, body string, want int, out any) error {
	req := Request{Method: method, URL: a.base + "/api/external" + path, Header: a.auth, Want: want, KeepBody: out != nil}
	if body != "" {
		req.Body, req.ContentType = []byte(body), "application/json"
	}
	_, b, err := Send(a.client, req)
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

// create creates an application in configuration config (the
// organization's default when empty), with a pre-auth code when preAuth.
func (a *benchAPI) create(config string, preAuth bool) (created, error) {
	extra := ""
	if config != "" {
		extra += `,"config_id":` + strconv.Quote(config)
	}
	if preAuth {
		extra += `,"pre_auth":true`
	}
	var c created
	err := a.call("POST", "/applications", fmt.Sprintf(CreateBody, extra), http.StatusCreated, &c)
	if err == nil {
		a.creates.Add(1)
	}
	return c, err
}

// createMany creates n applications in configuration config (the
// organization's default when empty) on concurrency workers, unmeasured.
func (a *benchAPI) createMany(n, concurrency int, config string) error {
	return Parallel(n, concurrency, func(int) error {
		_, err := a.create(config, false)
		return err
	})
}

// benchFixtures are the applications the operations work on.
type benchFixtures struct {
	apps       []string          // seeded: get and PATCH
	submitted  *benchPool        // submitted through the test helper: decisions
	applicants []*benchApplicant // signed in, one per worker: stage saves
}

// seed creates n applications, then one signed-in applicant per worker.
// The applications for the decisions are prepared later (benchPool).
func (a *benchAPI) seed(n, concurrency int, progress func(string, ...any)) (*benchFixtures, error) {
	f := &benchFixtures{apps: make([]string, n), submitted: &benchPool{api: a, concurrency: concurrency}}
	progress("seeding %d applications", n)
	if err := Parallel(n, concurrency, func(i int) error {
		c, err := a.create("", false)
		f.apps[i] = c.ID
		return err
	}); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}

	progress("signing %d applicants in", concurrency)
	f.applicants = make([]*benchApplicant, concurrency)
	if err := Parallel(concurrency, concurrency, func(i int) error {
		c, err := a.create("", true)
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
	resp, _, err := Send(a.client, Request{Method: "GET", URL: link + "?auth_code=" + url.QueryEscape(code), Want: http.StatusSeeOther})
	if err != nil {
		return nil, err
	}
	ap.keep(resp)
	resp, page, err := Send(a.client, Request{Method: "GET", URL: link, Header: ap.header(), Want: http.StatusOK, KeepBody: true})
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
	resp, _, err := Send(a.client, Request{
		Method: "POST", URL: ap.link + "/s/business", Body: []byte(form.Encode()),
		ContentType: "application/x-www-form-urlencoded", Header: ap.header(), Want: http.StatusSeeOther,
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

// poolMargin sizes the decisions' pool (benchPool): this many times what
// the PATCHes or the durable-insert ceiling, whichever was faster, did in
// the duration (two decisions an application), and one application per
// worker more: decisions run slower than the faster of the two, but in a
// short phase on a loaded machine their rate and PATCH's can differ by half
// either way.
const poolMargin = 2

// measureAPI runs every operation of the API for d each, on the fixtures:
// create in rounds, quiet and busy (measureCreates), then the others
// (PATCH twice: spread over the applications, and all of one, patch hot).
// Before each, it lets the server fetch the registry documents of the
// applications created so far (settle).
// After each operation it lets the server settle again and measures the
// operation's ceiling (ceilings.measure), which the operation is compared
// with.
func (a *benchAPI) measureAPI(srv Server, f *benchFixtures, ceilings *benchCeilings, concurrency int, d time.Duration, settle func(), progress func(string, ...any)) ([]Result, *Background, error) {
	n := len(f.apps)
	quiet, busy, bg, err := a.measureCreates(srv, ceilings, concurrency, d, settle, progress)
	if err != nil {
		return nil, nil, err
	}
	results := []Result{quiet, busy}
	phase := func(name, ceiling string, do func(w, i int) error) Result {
		settle()
		progress("measuring %s", name)
		r := RunPhase(name, concurrency, d, do)
		settle()
		progress("measuring the %s next to %s", ceiling, name)
		r.Ceiling, r.CeilingRate = ceiling, ceilings.measure(ceiling, d).Throughput
		results = append(results, r)
		return r
	}
	phase("get", CeilingRead, func(w, i int) error {
		return a.call("GET", "/applications/"+f.apps[rand.IntN(n)], "", http.StatusOK, nil)
	})
	phase("list", CeilingRead, func(w, i int) error {
		return a.call("GET", "/applications?limit=50", "", http.StatusOK, nil)
	})
	patch := phase("patch", CeilingInsert, func(w, i int) error {
		// Workers PATCH different applications.
		id := f.apps[(w+i*concurrency)%n]
		return a.call("PATCH", "/applications/"+id, fmt.Sprintf(`{"fields":{"business_description":"Bench %d-%d"}}`, w, i), http.StatusOK, nil)
	})
	phase("patch hot", CeilingInsert, func(w, i int) error {
		// Every worker PATCHes the same application: updates of one
		// record queue behind one another.
		return a.call("PATCH", "/applications/"+f.apps[0], fmt.Sprintf(`{"fields":{"business_description":"Bench hot %d-%d"}}`, w, i), http.StatusOK, nil)
	})
	// Each application takes two decisions, referred and then approved
	// (one transaction each), so the pool needs half as many.
	rate := max(patch.Throughput, patch.CeilingRate)
	want := int(poolMargin*rate*d.Seconds()/2) + concurrency
	progress("submitting %d applications for the decisions (%.0f PATCHes and %.0f ceiling inserts a second)", want, patch.Throughput, patch.CeilingRate)
	if err := f.submitted.fill(want); err != nil {
		return nil, nil, err
	}
	submitted := f.submitted.submitted()
	var next atomic.Int64
	deciding := make([]string, concurrency) // by worker: the application referred last
	phase("decision", CeilingInsert, func(w, i int) error {
		decision := `{"type":"application.approved"}`
		if i%2 == 0 {
			k := int(next.Add(1) - 1)
			if k >= len(submitted) {
				return errUsedUp
			}
			deciding[w], decision = submitted[k], `{"type":"application.referred"}`
		}
		return a.call("POST", "/applications/"+deciding[w]+"/decision", decision, http.StatusOK, nil)
	})
	phase("stage save", CeilingInsert, func(w, i int) error {
		return a.saveStage(f.applicants[w], fmt.Sprintf("Bench %d-%d", w, i))
	})
	return results, bg, nil
}
