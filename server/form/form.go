package form

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The applicant's form: server-rendered pages under /a/{link_slug}, with
// their stylesheet and script embedded in the binary. Every page works
// without JavaScript; form.js adds upload progress and inline checks.

//go:embed templates/*.tmpl
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

const (
	// SessionCookie is the cookie that holds a link's session token.
	SessionCookie = "onboard_session"
	// MaxPostBytes bounds a form post other than an upload.
	MaxPostBytes = 256 << 10
	visitorKey   = "visitor"
	// uploadRoute is the one form route that takes multipart posts.
	uploadRoute = "/a/:slug/documents"
)

// The form's pages for posts it cannot take.
var (
	// ErrPostTooLarge is the form's page for a post over MaxPostBytes: in
	// words an applicant can act on.
	ErrPostTooLarge = &web.Error{Status: http.StatusRequestEntityTooLarge,
		Message: "What you sent is too large. Go back, make your answers shorter and try again."}
	// ErrPostUnreadable is the form's page for a post that cannot be read:
	// cut short, with more than 10,000 parameters (net/url's limit), a
	// broken %-escape, or text that is not UTF-8. Browsers send none of
	// these; a flaky connection can cut one short.
	ErrPostUnreadable = &web.Error{Status: http.StatusBadRequest,
		Message: "What you sent could not be read. Go back and try again."}
	// ErrAddressUnreadable is the form's page for an address whose query
	// string cannot be read one way only (web.ParseQuery), or that gives
	// a parameter of the form twice: a link mangled on its way, which
	// is refused rather than read in part.
	ErrAddressUnreadable = &web.Error{Status: http.StatusBadRequest,
		Message: "This address could not be read. Open the link from your email again, or copy all of it into the address bar."}
)

// queryParams are the query parameters the form's pages read, each
// single-valued.
var queryParams = [...]string{"auth_code", "done", "id", "q", "number"}

// checkQuery returns ErrAddressUnreadable unless the query string of r
// can be read whole and gives each of queryParams at most once.
func checkQuery(r *http.Request) error {
	q, err := web.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return ErrAddressUnreadable
	}
	for _, name := range queryParams {
		if _, _, err := web.SingleParam(q, name); err != nil {
			return ErrAddressUnreadable
		}
	}
	return nil
}

// pages holds one parsed template per page, each with the shared layout,
// and the buffers pages are rendered into.
type pages struct {
	byName  map[string]*template.Template
	buffers sync.Pool // *bytes.Buffer
}

// pageNames are the page templates beside base.tmpl.
var pageNames = [...]string{"verify", "overview", "stage", "company", "people", "person", "entity", "ownership", "documents", "collaborators", "review", "error", "rfi", "rfidone", "rfiexpired", "signedout", "companyconfirm"}

// pageFuncs are the functions templates may call: ways of showing values,
// the same as the Go code's.
var pageFuncs = template.FuncMap{
	"dateText": dateText, // "2018-04-16" as "16 April 2018"
	"title":    sentenceCase,
}

func mustParsePages() *pages {
	base := template.Must(template.New("base").Funcs(pageFuncs).ParseFS(templateFiles, "templates/base.tmpl"))
	p := &pages{byName: make(map[string]*template.Template, len(pageNames))}
	for _, name := range pageNames {
		t := template.Must(template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+name+".tmpl"))
		p.byName[name] = t
	}
	return p
}

// formRoutes registers the applicant's form, page group by page group,
// and its assets. Every form route runs the visitor middleware; all but
// the link itself and the verification posts need a signed-in visitor.
func (s *Server) formRoutes() {
	assets, err := fs.Sub(assetFiles, "assets")
	if err != nil {
		panic(err)
	}
	// The assets are files, never a listing: a directory, a path that is
	// not a file of theirs, or an invalid one answers the server's own 404
	// Not found, as any other unknown path does.
	s.e.GET("/assets/*", func(c echo.Context) error {
		name := c.Param("*")
		f, err := assets.Open(name)
		if err != nil {
			return web.ErrRouteNotFound
		}
		defer f.Close()
		info, err := f.Stat()
		content, seekable := f.(io.ReadSeeker)
		if err != nil || info.IsDir() || !seekable {
			return web.ErrRouteNotFound
		}
		h := c.Response().Header()
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(c.Response(), c.Request(), info.Name(), info.ModTime(), content)
		return nil
	})

	// Browsers ask for /favicon.ico whatever the page says: they get the
	// same icon, rather than a 404 in every log.
	icon, err := fs.ReadFile(assets, "favicon.svg")
	if err != nil {
		panic(err)
	}
	s.e.GET("/favicon.ico", func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("X-Content-Type-Options", "nosniff")
		return c.Blob(http.StatusOK, "image/svg+xml", icon)
	})

	visit := s.linkVisitor(s.formLink())
	open := []echo.MiddlewareFunc{visit}
	in := []echo.MiddlewareFunc{visit, signedIn}
	s.registerVerifyRoutes("/a/:slug", open)
	s.registerStageRoutes(open, in)
	s.registerCompanyRoutes(in)
	s.registerPeopleRoutes(in)
	s.registerOwnershipRoutes(in)
	s.registerDocumentRoutes(in)
	s.registerCollaboratorRoutes(in)
	s.registerSignOutRoutes("/a/:slug", open, in)
	s.registerSessionRoutes("/a/:slug", in)
	s.registerReviewRoutes(in)
	s.rfiRoutes()
}

// linkKind is one kind of applicant link: the form's under /a/ or an RFI
// request's under /r/. Both share linkVisitor, their sessions and the
// verification pages.
type linkKind struct {
	// visit finds who is at the link (the domain's Visit or VisitRFI).
	visit func(ctx context.Context, host, slug, authCode string, held *onboarding.SignIn) (guest, error)
	// upload is the kind's one route that takes multipart posts.
	upload string
	// fail renders an error as a page of the kind (guestOf(c) is nil
	// before the visitor is known).
	fail func(c echo.Context, err error) error
}

// formLink is the application form's kind of link.
func (s *Server) formLink() linkKind {
	return linkKind{
		visit: func(ctx context.Context, host, slug, authCode string, held *onboarding.SignIn) (guest, error) {
			v, err := s.svc.Visit(ctx, host, slug, authCode, held)
			if err != nil {
				return nil, err
			}
			return formGuest{v}, nil
		},
		upload: uploadRoute,
		fail:   func(c echo.Context, err error) error { return s.formFailure(c, visitorOf(c), err) },
	}
}

// linkVisitor is the middleware of every route of a kind of link: it
// identifies who is at the link, keeps their session cookie, checks the
// CSRF token of posts (uploads check theirs while reading the body) and
// renders any error as a page.
func (s *Server) linkVisitor(k linkKind) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			formHeaders(c.Response().Header())
			r := c.Request()
			if err := checkQuery(r); err != nil {
				return k.fail(c, err)
			}
			if s.sessions == nil {
				return k.fail(c, onboarding.ErrFormUnavailable)
			}
			held, holds := s.heldSession(c)
			var signIn *onboarding.SignIn
			if holds && held.ParticipantID != "" {
				signIn = &onboarding.SignIn{AppID: held.AppID, ParticipantID: held.ParticipantID, Epoch: held.Epoch}
			}
			authCode := c.QueryParam("auth_code")
			g, err := k.visit(r.Context(), r.Host, c.Param("slug"), authCode, signIn)
			if err != nil {
				return k.fail(c, err)
			}
			s.keepSession(c, g, held, holds)
			c.Set(visitorKey, g)
			if authCode != "" && r.Method == http.MethodGet {
				// The code has done its job: take it out of the address
				// bar and the browser's history.
				q := r.URL.Query()
				q.Del("auth_code")
				u := *r.URL
				u.RawQuery = q.Encode()
				return c.Redirect(http.StatusSeeOther, u.RequestURI())
			}
			if r.Method == http.MethodPost && !holds {
				// The browser's session ended (or it never had one): say
				// so, rather than that the page expired.
				return k.fail(c, onboarding.ErrNotSignedIn)
			}
			if r.Method == http.MethodPost && isMultipart(r) && c.Path() != k.upload {
				// Only the upload takes multipart posts (and checks their
				// token as it reads them); elsewhere one would carry no
				// token.
				return k.fail(c, onboarding.ErrCSRF)
			}
			if r.Method == http.MethodPost && !isMultipart(r) {
				r.Body = http.MaxBytesReader(c.Response(), r.Body, MaxPostBytes)
				if err := r.ParseForm(); err != nil {
					var tooBig *http.MaxBytesError
					if errors.As(err, &tooBig) {
						return k.fail(c, ErrPostTooLarge)
					}
					return k.fail(c, ErrPostUnreadable)
				}
				if !formIsUTF8(r.PostForm) {
					return k.fail(c, ErrPostUnreadable)
				}
				if !validCSRF(csrfOf(c), r.PostForm.Get("csrf")) {
					return k.fail(c, onboarding.ErrCSRF)
				}
			}
			if err := next(c); err != nil {
				return k.fail(c, err)
			}
			return nil
		}
	}
}

// signedIn sends a visitor who has not verified to the start of their
// link.
func signedIn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		g := guestOf(c)
		if !g.signedIn() {
			if c.Request().Method == http.MethodGet {
				return c.Redirect(http.StatusSeeOther, g.base())
			}
			return onboarding.ErrNotSignedIn
		}
		return next(c)
	}
}

// formIsUTF8 reports whether every name and value of a form post is
// UTF-8 text; net/url decodes %-escapes to any bytes.
func formIsUTF8(form url.Values) bool {
	for name, values := range form {
		if !utf8.ValidString(name) {
			return false
		}
		for _, v := range values {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// guestOf returns the visitor at the link; nil before it is known.
func guestOf(c echo.Context) guest {
	g, _ := c.Get(visitorKey).(guest)
	return g
}

// visitorOf returns the visitor at the form; nil before it is known.
func visitorOf(c echo.Context) *onboarding.Visitor {
	g, _ := c.Get(visitorKey).(formGuest)
	return g.Visitor
}

func formBase(v *onboarding.Visitor) string { return "/a/" + v.Participant.LinkSlug }

// formGuest is the form's visitor as a guest of its link.
type formGuest struct{ *onboarding.Visitor }

func (g formGuest) subject() string                      { return g.App.ID }
func (g formGuest) participant() *onboarding.Participant { return g.Participant }
func (g formGuest) signedIn() bool                       { return g.SignedIn }
func (g formGuest) signedInNow() bool                    { return g.SignedInNow }
func (g formGuest) base() string                         { return formBase(g.Visitor) }
func (g formGuest) layout(title string) layout           { return newLayout(g.Visitor, title) }
func (g formGuest) sendCode(ctx context.Context, svc *onboarding.Service) error {
	return svc.SendVerificationCode(ctx, g.Visitor)
}
func (g formGuest) signOut(ctx context.Context, svc *onboarding.Service) error {
	return svc.SignOut(ctx, g.Visitor)
}
func (g formGuest) verifyCode(ctx context.Context, svc *onboarding.Service, code string) error {
	return svc.VerifyCode(ctx, g.Visitor, code)
}

// formHeaders are the security headers of every form page.
func formHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// errorItem is one entry of a page's error summary.
type errorItem struct {
	Anchor  string // id of the control to fix; empty when none
	Message string
}

// layout is what base.tmpl draws around every page: each page's view
// embeds it.
type layout struct {
	Title    string
	OrgName  string
	Company  string
	Base     string // the form's address, /a/{link_slug}; empty before the application is known
	CSRF     string
	SignedIn bool
	Email    string
	Notice   string
	// NoticeWarn shows Notice as a warning rather than a confirmation.
	NoticeWarn bool
	Errors     []errorItem
	// RFI marks the pages of an RFI request's link, whose words differ
	// from the form's where they speak of the form.
	RFI bool
	// Submitted marks the pages of an application that can no longer be
	// changed: they say nothing about keeping answers.
	Submitted bool
	// SessionSeconds is how long the signed-in session has left (0 when
	// not signed in): the page warns before it ends.
	SessionSeconds int
}

// page is the data of one page template.
type page interface{ pageLayout() *layout }

func (l *layout) pageLayout() *layout { return l }

// newLayout starts the layout of a page for visitor v (nil before the
// application is known).
func newLayout(v *onboarding.Visitor, title string) layout {
	l := layout{Title: title, OrgName: "Company onboarding"}
	if v == nil {
		return l
	}
	l.OrgName = v.OrgName()
	l.Company = v.App.CompanyName()
	l.Base = formBase(v)
	l.SignedIn = v.SignedIn
	l.Email = v.Participant.Email
	l.Submitted = !v.Writable()
	return l
}

// render writes a page. It is rendered whole before anything is sent, so
// that a template failure becomes an error page, not half a page.
func (s *Server) render(c echo.Context, status int, name string, p page) error {
	t := s.pages.byName[name]
	buf, _ := s.pages.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = bytes.NewBuffer(make([]byte, 0, 32<<10))
	}
	defer func() {
		if buf.Cap() <= 1<<20 { // do not keep a rare huge page's memory
			buf.Reset()
			s.pages.buffers.Put(buf)
		}
	}()
	p.pageLayout().CSRF = csrfOf(c)
	p.pageLayout().SessionSeconds = s.sessionSeconds(c)
	if err := t.ExecuteTemplate(buf, "base", p); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// formFailure renders an error as a page of the form (v is nil before
// the application is known).
func (s *Server) formFailure(c echo.Context, v *onboarding.Visitor, err error) error {
	return s.linkFailure(c, newLayout(v, ""), err)
}

// linkFailure renders an error as a page of a link, in the layout l: the
// kind decides the status, and unexpected errors are logged and shown
// without detail.
func (s *Server) linkFailure(c echo.Context, l layout, err error) error {
	if c.Response().Committed {
		return nil
	}
	f := web.FailureOf(err)
	status := f.Status
	if f.Unexpected() {
		s.log.Error("form request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err,
			"request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	title := "Sorry, there is a problem"
	msg := f.Body.Error
	ended := false
	switch {
	case errors.Is(err, onboarding.ErrFormNotFound):
		title = "This link does not work"
	case errors.Is(err, onboarding.ErrNotSignedIn):
		title, ended = "You have been signed out", true
	case f.Unexpected() && l.RFI:
		msg = "Something went wrong on our side. The documents you uploaded are safe. Try again in a few minutes."
	case f.Unexpected():
		msg = "Something went wrong on our side. Your saved answers are safe. Try again in a few minutes."
	case f.Cause == nil && status == http.StatusNotFound:
		msg = "This page does not exist."
	}
	l.Title = title
	return s.render(c, status, "error", &errorView{layout: l, ErrorTitle: title, ErrorMessage: msg, SessionEnded: ended})
}

// errorView is the error page's data.
type errorView struct {
	layout
	ErrorTitle, ErrorMessage string
	// SessionEnded marks the page of a post whose session had ended: its
	// link leads to signing in again, and session.js keeps what the post
	// carried to put it back afterwards.
	SessionEnded bool
}

// redirectWith sends the browser to path with a notice code that the page
// turns into a fixed message.
func redirectWith(c echo.Context, path, notice string) error {
	if notice != "" {
		path += "?done=" + url.QueryEscape(notice)
	}
	return c.Redirect(http.StatusSeeOther, path)
}

// notices are the fixed messages a redirect can ask a page to show.
var notices = map[string]string{
	"verified":    "Your email address is confirmed.",
	"saved":       "Your answers are saved. You can close this page and come back later with the link from your email.",
	"company":     "Your company has been found on the register. Check the details we filled in.",
	"changed":     "The company you chose has been removed, with the details, people and documents from the register. Find your company again.",
	"person":      "The person has been saved.",
	"removed":     "Removed.",
	"entity":      "The company has been saved.",
	"ownership":   "The ownership has been saved.",
	"uploaded":    "The document has been uploaded.",
	"doc-removed": "The file has been removed.",
	"rejected":    "The document was not accepted. See the reason below.",
	"invited":     "The invitation has been sent.",
	"submitted":   "Your application has been sent.",
	"sent":        "We have sent you a new code.",
}

// notice is the message a redirect asked for. A saved person or related
// company, or an invited colleague, is named, looked up by the id in the
// query (never text from the query itself): "Samuel Lee has been saved".
func notice(c echo.Context) string {
	code := c.QueryParam("done")
	if v := visitorOf(c); v != nil && code == "invited" {
		for _, p := range v.App.Participants {
			if p.ID == c.QueryParam("id") {
				return "An invitation has been sent to " + p.Email + "."
			}
		}
	}
	if v := visitorOf(c); v != nil && (code == "person" || code == "entity") {
		id := c.QueryParam("id")
		if p := v.App.Data.Person(id); code == "person" && p != nil {
			return onboarding.PersonName(p) + " has been saved."
		}
		for _, e := range v.App.Data.Entities {
			if code == "entity" && e.ID == id && e.Name != "" {
				return e.Name + " has been saved."
			}
		}
	}
	return notices[code]
}
