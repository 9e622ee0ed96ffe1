package form

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The RFI page (docs/applicant-form.md): an RFI request's link, /r/{link_slug}, is
// one page where the contact uploads each document the agent asks for and
// then sends them. It shares the form's link machinery (linkVisitor, the
// sessions, the verification pages) and its upload step (receiveUpload,
// the docslot template). A request that expired shows an expiry page
// (410 Gone) and takes nothing; a completed one shows its confirmation.

// rfiUploadRoute is the one RFI route that takes multipart posts.
const rfiUploadRoute = "/r/:slug/documents"

// rfiRoutes registers the RFI page, its verification posts, uploads,
// removals and completion. Every route runs the visitor middleware and
// then rfiOpen; all but the link and the verification posts need a
// signed-in visitor.
func (s *Server) rfiRoutes() {
	visit := s.linkVisitor(s.rfiLink())
	open := []echo.MiddlewareFunc{visit, rfiOpen}
	in := []echo.MiddlewareFunc{visit, rfiOpen, signedIn}
	s.e.GET("/r/:slug", s.rfiHome, open...)
	s.registerVerifyRoutes("/r/:slug", open)
	s.e.POST(rfiUploadRoute, s.rfiUpload, in...)
	s.e.POST("/r/:slug/documents/remove", s.rfiRemove, in...)
	s.e.POST("/r/:slug/complete", s.rfiComplete, in...)
	s.registerSessionRoutes("/r/:slug", in)
	// Signing out works whatever the request's state, as the form's does
	// after submission: no rfiOpen.
	s.registerSignOutRoutes("/r/:slug", []echo.MiddlewareFunc{visit}, []echo.MiddlewareFunc{visit, signedIn})
}

// rfiLink is an RFI request's kind of link.
func (s *Server) rfiLink() linkKind {
	return linkKind{
		visit: func(ctx context.Context, host, slug, authCode string, held *onboarding.SignIn) (guest, error) {
			v, err := s.svc.VisitRFI(ctx, host, slug, authCode, held)
			if err != nil {
				return nil, err
			}
			return rfiGuest{v}, nil
		},
		upload: rfiUploadRoute,
		fail:   s.rfiFailure,
	}
}

// rfiOpen lets a request through only while the RFI request takes
// documents; otherwise rfiFailure answers with the page that says why.
func rfiOpen(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := rfiVisitorFrom(c)
		switch {
		case v.Expired():
			return onboarding.ErrRFIClosedExpired
		case v.Completed():
			return onboarding.ErrRFIClosedCompleted
		}
		return next(c)
	}
}

// rfiFailure renders an error as a page of the RFI link: a closed request
// answers with its expiry page or its confirmation, whatever was asked.
func (s *Server) rfiFailure(c echo.Context, err error) error {
	v := rfiVisitorFrom(c)
	if v != nil && !c.Response().Committed {
		switch {
		case errors.Is(err, onboarding.ErrRFIClosedExpired):
			s.discardUpload(c)
			return s.rfiExpiredPage(c, v)
		case errors.Is(err, onboarding.ErrRFIClosedCompleted):
			s.discardUpload(c)
			return s.rfiDonePage(c, v)
		}
	}
	return s.linkFailure(c, newRFILayout(v, ""), err)
}

// discardUpload reads the rest of a refused upload (up to the upload
// limit), so that the browser gets the answer rather than a reset
// connection.
func (s *Server) discardUpload(c echo.Context) {
	r := c.Request()
	if r.Method == http.MethodPost && isMultipart(r) {
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(c.Response(), r.Body, s.svc.MaxUploadBytes()+1<<20))
	}
}

// rfiHome is the link itself: the verification page before sign-in, then
// the requested documents.
func (s *Server) rfiHome(c echo.Context) error {
	v := rfiVisitorFrom(c)
	if !v.SignedIn {
		return s.renderVerify(c, http.StatusOK, rfiGuest{v}, "")
	}
	return s.rfiPage(c, v, http.StatusOK, "", "", nil)
}

// rfiUpload takes a file for one requested document, through the form's
// upload step.
func (s *Server) rfiUpload(c echo.Context) error {
	v := rfiVisitorFrom(c)
	return s.receiveUpload(c, uploadTarget{
		page: func(status int, key, msg string) error { return s.rfiPage(c, v, status, key, msg, nil) },
		store: func(ctx context.Context, up onboarding.Upload) (*onboarding.Document, error) {
			return s.svc.UploadRFIDocument(ctx, v, up)
		},
		done: func(key, notice string) string { return rfiBase(v) + "?done=" + notice + "#doc-" + key },
	})
}

// rfiRemove takes away the contact's file for one requested document.
func (s *Server) rfiRemove(c echo.Context) error {
	v := rfiVisitorFrom(c)
	field := c.Request().PostForm.Get("field")
	err := s.svc.RemoveRFIDocument(c.Request().Context(), v, field)
	if e := onboarding.AsError(err); e != nil && (e.Kind == onboarding.KindInvalid || errors.Is(err, onboarding.ErrNoDocumentToRemove)) {
		return s.rfiPage(c, v, web.StatusOf(e.Kind), field, e.Message, nil)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, rfiBase(v)+"?done=doc-removed#doc-"+field)
}

// rfiComplete sends the documents; while some are missing, the page lists
// them.
func (s *Server) rfiComplete(c echo.Context) error {
	v := rfiVisitorFrom(c)
	err := s.svc.CompleteRFI(c.Request().Context(), v)
	if e := onboarding.AsError(err); e != nil && len(e.Items) > 0 {
		return s.rfiPage(c, v, http.StatusBadRequest, "", "", e)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, rfiBase(v))
}

// rfiPage draws the requested documents with the error summary: errMsg at
// the slot errKey (or above them all), each rejected upload with its
// reason, and, when sending was refused, each document still missing.
// Every item links to the file input of its document.
func (s *Server) rfiPage(c echo.Context, v *onboarding.RFIVisitor, status int, errKey, errMsg string, incomplete *onboarding.Error) error {
	up := s.uploadControls(c, rfiBase(v), true)
	p := &rfiView{layout: newRFILayout(v, "Send your documents"), MaxUpload: onboarding.SizeText(up.MaxUploadBytes),
		ExpiresOn: longDate(v.Request.ExpiresAt)}
	p.Notice = notice(c)
	p.NoticeWarn = c.QueryParam("done") == "rejected"
	for _, f := range s.svc.RFIDocumentFieldsOf(v) {
		doc, has := v.Request.Documents[f.ID]
		slot := s.docSlot(f, "", "", true, doc, has)
		slot.uploadControls = up
		if has && doc.Status == onboarding.DocumentAccepted {
			p.Uploaded++
		}
		p.Slots = append(p.Slots, slot)
	}
	p.Errors = slotError(p.Slots, errKey, errMsg)
	missing := map[string]string{} // label → the domain's item for it
	if incomplete != nil {
		p.Errors = append(p.Errors, errorItem{Message: incomplete.Message})
		labels := s.svc.RFIMissing(v)
		for i, item := range incomplete.Items {
			if i < len(labels) && len(labels) == len(incomplete.Items) {
				missing[labels[i]] = item
			} else {
				p.Errors = append(p.Errors, errorItem{Message: item})
			}
		}
	}
	for i := range p.Slots {
		slot := &p.Slots[i]
		anchor := "file-" + slot.Key
		switch {
		case slot.Key == errKey && errMsg != "":
		case slot.Doc != nil && slot.Doc.Status == onboarding.DocumentRejected:
			p.Errors = append(p.Errors, errorItem{Anchor: anchor, Message: slot.Label + ": " + slot.Doc.FileName + ": " + slot.Doc.RejectReason})
		case missing[slot.Label] != "":
			slot.Error = missing[slot.Label]
			p.Errors = append(p.Errors, errorItem{Anchor: anchor, Message: slot.Error})
		}
	}
	return s.render(c, status, "rfi", p)
}

// rfiDonePage is the confirmation of a completed request: which documents
// were sent, and when. It shows no file names, as nobody signs in to a
// completed request. A post to it is refused (409) with the reason.
func (s *Server) rfiDonePage(c echo.Context, v *onboarding.RFIVisitor) error {
	p := &rfiDoneView{layout: newRFILayout(v, "Documents sent")}
	if v.Request.CompletedAt != nil {
		p.SentOn = longDate(*v.Request.CompletedAt)
	}
	for _, f := range s.svc.RFIDocumentFieldsOf(v) {
		if d, ok := v.Request.Documents[f.ID]; ok && (d.Status == onboarding.DocumentAccepted || d.Status == onboarding.DocumentForced) {
			p.Sent = append(p.Sent, f.Label)
		}
	}
	status := http.StatusOK
	if c.Request().Method != http.MethodGet && c.Request().Method != http.MethodHead {
		status = http.StatusConflict
		p.Notice, p.NoticeWarn = onboarding.ErrRFIClosedCompleted.Message, true
	}
	return s.render(c, status, "rfidone", p)
}

// rfiExpiredPage says that the request has expired and whom to ask for a
// new link: 410 Gone, whatever was asked.
func (s *Server) rfiExpiredPage(c echo.Context, v *onboarding.RFIVisitor) error {
	closed := v.Request.ExpiresAt
	if at := v.Request.ExpiredAt; at != nil && at.Before(closed) { // expired early (a sandbox test helper)
		closed = *at
	}
	p := &rfiExpiredView{layout: newRFILayout(v, "This link has expired"), ExpiredOn: longDate(closed)}
	return s.render(c, http.StatusGone, "rfiexpired", p)
}

// longDate writes the day of t for people, such as 5 December 2026 (UTC).
func longDate(t time.Time) string { return t.UTC().Format("2 January 2006") }

// rfiVisitorFrom returns the visitor at the RFI link; nil before it is
// known.
func rfiVisitorFrom(c echo.Context) *onboarding.RFIVisitor {
	g, _ := c.Get(visitorKey).(rfiGuest)
	return g.RFIVisitor
}

// rfiBase is the address of v's RFI link.
func rfiBase(v *onboarding.RFIVisitor) string { return "/r/" + v.Participant.LinkSlug }

// newRFILayout starts the layout of an RFI page for visitor v (nil before
// the request is known).
func newRFILayout(v *onboarding.RFIVisitor, title string) layout {
	l := layout{Title: title, OrgName: "Document request", RFI: true}
	if v == nil {
		return l
	}
	l.OrgName = v.OrgName()
	l.Company = v.Request.DisplayName()
	l.Base = rfiBase(v)
	l.SignedIn = v.SignedIn
	l.Email = v.Participant.Email
	return l
}

// rfiGuest is an RFI request's visitor as a guest of its link.
type rfiGuest struct{ *onboarding.RFIVisitor }

func (g rfiGuest) subject() string                      { return g.Request.ID }
func (g rfiGuest) participant() *onboarding.Participant { return g.Participant }
func (g rfiGuest) signedIn() bool                       { return g.SignedIn }
func (g rfiGuest) signedInNow() bool                    { return g.SignedInNow }
func (g rfiGuest) base() string                         { return rfiBase(g.RFIVisitor) }
func (g rfiGuest) layout(title string) layout           { return newRFILayout(g.RFIVisitor, title) }
func (g rfiGuest) sendCode(ctx context.Context, svc *onboarding.Service) error {
	return svc.SendRFICode(ctx, g.RFIVisitor)
}
func (g rfiGuest) signOut(ctx context.Context, svc *onboarding.Service) error {
	return svc.SignOutRFI(ctx, g.RFIVisitor)
}
func (g rfiGuest) verifyCode(ctx context.Context, svc *onboarding.Service, code string) error {
	return svc.VerifyRFICode(ctx, g.RFIVisitor, code)
}

// rfiView is the RFI page's data.
type rfiView struct {
	layout
	Slots     []docSlot
	Uploaded  int    // documents accepted so far
	MaxUpload string // the upload limit, for people
	ExpiresOn string
}

// rfiDoneView is the confirmation page's data.
type rfiDoneView struct {
	layout
	SentOn string
	Sent   []string // labels of the documents sent
}

// rfiExpiredView is the expiry page's data.
type rfiExpiredView struct {
	layout
	ExpiredOn string
}
