package form

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// Check your answers and send (GOV.UK's pattern): every answer of the
// application by stage, each with a Change link to where it is given, what
// is still missing, and at the end the declarations the primary contact
// accepts as they send the application.

// registerReviewRoutes registers the review page and the submission.
func (s *Server) registerReviewRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/review", s.reviewPage, in...)
	s.e.POST("/a/:slug/submit", s.submit, in...)
}

func (s *Server) reviewPage(c echo.Context) error {
	return s.renderReview(c, visitorOf(c), http.StatusOK, nil, nil)
}

// renderReview draws the review page; accepted are the declarations
// ticked in a post that failed, and errs its errors.
func (s *Server) renderReview(c echo.Context, v *onboarding.Visitor, status int, accepted map[string]bool, errs *formErrors) error {
	title := "Check your answers before sending your application"
	if !v.Writable() {
		title = "Your application"
	}
	p := &reviewView{layout: newLayout(v, title), Missing: missingLinks(v), Sections: s.reviewSections(v),
		Writable: v.Writable(), Submitted: !v.Writable(), IsPrimary: v.Primary(), PrimaryContact: primaryContact(v)}
	for _, f := range v.Declarations() {
		d := declarationView{ID: f.ID, Label: f.Label, Checked: accepted[f.ID], Error: errs.at(f.ID)}
		if f.Terms {
			d.TermsURL = v.Org.TermsURL
		}
		p.Declarations = append(p.Declarations, d)
	}
	p.Notice = notice(c)
	p.Errors = errs.items()
	return s.render(c, status, "review", p)
}

// submit is "Accept and send": the declarations ticked and the
// submission, in one step. An unticked declaration or anything missing
// shows the page again with what to do.
func (s *Server) submit(c echo.Context) error {
	v := visitorOf(c)
	form := c.Request().PostForm
	accepted := map[string]bool{}
	for _, f := range v.Declarations() {
		accepted[f.ID] = form.Get(f.ID) == "true"
	}
	err := s.svc.AcceptAndSubmit(c.Request().Context(), v, accepted)
	if e := onboarding.AsError(err); e != nil && len(e.Items) > 0 {
		errs := &formErrors{summary: []errorItem{{Anchor: "missing", Message: e.Message}}}
		return s.renderReview(c, v, http.StatusBadRequest, accepted, errs)
	}
	if errs := declarationErrors(err, v.Declarations()); errs != nil {
		return s.renderReview(c, v, http.StatusBadRequest, accepted, errs)
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v), "submitted")
}

// declarationErrors turns the error of declarations left unticked into
// their messages, in the GOV.UK style; nil when err is not about them.
func declarationErrors(err error, declarations []*onboarding.Field) *formErrors {
	e := onboarding.AsError(err)
	if e == nil || e.Kind != onboarding.KindInvalid || len(e.Details) == 0 {
		return nil
	}
	fe := &formErrors{byControl: map[string]string{}}
	for _, f := range declarations {
		if _, ok := e.Details[f.ID]; ok {
			m := declarationMessage(f)
			fe.byControl[f.ID] = m
			fe.summary = append(fe.summary, errorItem{Anchor: f.ID, Message: m})
		}
	}
	if len(fe.summary) == 0 {
		return nil
	}
	return fe
}

// declarationMessage asks for an unticked declaration in plain words.
func declarationMessage(f *onboarding.Field) string {
	switch {
	case f.Terms:
		return "Confirm that you accept the terms and conditions"
	case f.ID == "confirm_accuracy":
		return "Confirm that the information you have given is accurate and complete"
	}
	return "Tick the box to confirm: " + f.Label
}

// primaryContact names the primary contact for their colleagues: their
// name when known, else their email address.
func primaryContact(v *onboarding.Visitor) string {
	for _, p := range v.App.Participants {
		if p.Role == onboarding.RolePrimary {
			if p.Name != "" {
				return p.Name
			}
			return p.Email
		}
	}
	return "the primary contact"
}

// missingLinks are what the application lacks, each with a link to where
// the applicant adds it.
func missingLinks(v *onboarding.Visitor) []missingView {
	base := formBase(v)
	var out []missingView
	for _, m := range v.Missing() {
		if f, ok := v.Form().Field(m.FieldID); ok && f.Confirmation {
			continue // made at the end of the review page itself
		}
		href := base + "/s/" + m.Stage
		if m.Stage == "company" && v.NeedsCompany() {
			href = base + "/company"
		}
		switch {
		case m.Stage == onboarding.StagePeople && m.PersonID != "":
			href = base + "/people/" + m.PersonID + "#" + m.FieldID // the person's own page
		case m.FieldID != "" && m.Stage != onboarding.StageDocuments && m.Stage != onboarding.StagePeople:
			href += "#" + m.FieldID
		}
		out = append(out, missingView{Href: href, Message: m.Message})
	}
	return out
}

// reviewSections are the answers of each stage, each row with the
// address of the control that changes it (declarations are not answers:
// they are made at the end of the page).
func (s *Server) reviewSections(v *onboarding.Visitor) []summarySection {
	var out []summarySection
	base := formBase(v)
	missing := map[string]bool{} // the company's answers still required
	for _, m := range v.Missing() {
		if m.PersonID == "" && m.FieldID != "" {
			missing[m.FieldID] = true
		}
	}
	for _, st := range v.Form().Stages() {
		sec := summarySection{Title: st.Title}
		switch st.ID {
		case onboarding.StagePeople:
			sec.Rows = peopleRows(v)
			sec.Empty = "No people added"
			sec.Href = base + "/s/" + st.ID
		case onboarding.StageDocuments:
			sec.Rows = s.documentRows(v)
		default:
			for _, f := range stageControls(st) {
				row := summaryRow{Label: f.Label, Value: valueText(f, v.App.Data.Fields[f.ID])}
				if row.Value == "" && missing[f.ID] {
					row.Needed = []string{"Not answered — required"}
				}
				if row.Value == "" {
					row.Action = "Add"
				}
				if !v.CompanyFieldLocked(v.App, f) { // the register's answers are not the applicant's to change
					row.Href = base + "/s/" + st.ID + "#" + f.ID
				}
				sec.Rows = append(sec.Rows, row)
			}
			if len(sec.Rows) == 0 {
				continue
			}
		}
		out = append(out, sec)
	}
	return out
}

// peopleRows are the people stage's answers: each person with their
// roles and details, each related company, each ownership statement.
func peopleRows(v *onboarding.Visitor) []summaryRow {
	var out []summaryRow
	d := &v.App.Data
	base := formBase(v)
	fields := personFields(v)
	for i := range d.People {
		pp := &d.People[i]
		missing := map[string]onboarding.MissingDetail{}
		for _, m := range v.Form().MissingDetails(pp) {
			missing[m.Field.ID] = m
		}
		parts := []string{roleList(pp.Roles)}
		var needed []string
		for _, f := range fields {
			t := valueText(f, onboarding.PersonFieldValue(pp, f.ID))
			m, lacks := missing[f.ID]
			switch {
			case lacks && m.Partial:
				needed = append(needed, f.Label+": "+t+" — full date required")
			case lacks:
				needed = append(needed, f.Label+": Not provided — required")
			case f.ID == onboarding.FieldPersonFullName:
			case t != "":
				parts = append(parts, f.Label+": "+t)
			}
		}
		out = append(out, summaryRow{Label: onboarding.PersonName(pp), Value: strings.Join(parts, "\n"), Needed: needed, Href: base + "/people/" + pp.ID})
	}
	// The register's companies and holdings are not the applicant's to
	// change (their pages refuse it): their rows say where they come from
	// instead of offering Change.
	for _, e := range d.Entities {
		row := summaryRow{Label: e.Name, Value: entityTypeLabels[e.Type], Href: base + "/entities/" + e.ID}
		if e.Source == onboarding.SourceRegistry {
			row.Value, row.Href = row.Value+"\nFrom the company register", ""
		}
		out = append(out, row)
	}
	for _, o := range d.Ownership {
		text := ownershipText(v.App, o)
		row := summaryRow{Label: "Ownership", Value: text, Href: base + "/ownership/" + o.ID, ChangeName: "ownership: " + text}
		if o.PercentageBand != "" {
			row.Value, row.Href = text+"\nFrom the company register", ""
		}
		out = append(out, row)
	}
	return out
}

// documentRows are the documents stage's answers: each slot with its
// file, or why it has none.
func (s *Server) documentRows(v *onboarding.Visitor) []summaryRow {
	var out []summaryRow
	for _, slot := range s.docSlots(v) {
		row := summaryRow{Label: slot.Named(), Empty: "Not uploaded", Href: formBase(v) + "/s/documents#doc-" + slot.Key}
		if slot.Doc == nil || slot.Doc.Status == onboarding.DocumentRejected {
			row.Action = "Upload"
		}
		switch {
		case slot.Doc == nil && slot.Registry != nil:
			row.Value = "Provided by Companies House: " + slot.Registry.FileName
		case slot.Doc == nil && slot.Required:
			row.Needed = []string{"Not uploaded — required"}
		case slot.Doc == nil:
		case slot.Doc.Status == onboarding.DocumentRejected:
			row.Value = slot.Doc.FileName + " (not accepted)"
			if slot.Required {
				row.Needed = []string{"Upload another file — required"}
			}
		case slot.Doc.Status == onboarding.DocumentSkipped:
			row.Value = "Not needed"
		default:
			row.Value = slot.Doc.FileName
		}
		out = append(out, row)
	}
	return out
}

// valueText writes a stored value for people to read.
func valueText(f *onboarding.Field, raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch f.Type {
	case onboarding.TypeSelect:
		return optionLabel(f, scalarText(raw))
	case onboarding.TypeMultiSelect:
		var vals []string
		_ = json.Unmarshal(raw, &vals)
		for i := range vals {
			vals[i] = optionLabel(f, vals[i])
		}
		return strings.Join(vals, ", ")
	case onboarding.TypeBoolean:
		if string(raw) == "true" {
			return "Yes"
		}
		return "No"
	case onboarding.TypePercentage:
		return scalarText(raw) + "%"
	case onboarding.TypeCurrency:
		var cur struct {
			Amount   json.Number `json:"amount"`
			Currency string      `json:"currency"`
		}
		_ = json.Unmarshal(raw, &cur)
		return moneyText(cur.Amount.String(), cur.Currency)
	case onboarding.TypeAddress:
		var a map[string]string
		_ = json.Unmarshal(raw, &a)
		var lines []string
		for _, k := range addressParts {
			if a[k] == "" {
				continue
			}
			if k == "country" {
				lines = append(lines, countryName(a[k]))
			} else {
				lines = append(lines, a[k])
			}
		}
		return strings.Join(lines, "\n")
	case onboarding.TypeDate:
		return dateText(scalarText(raw))
	case onboarding.TypePhone:
		return phoneText(scalarText(raw))
	}
	if isCountry(f) {
		return countryName(scalarText(raw))
	}
	if f.Rule == "iban" {
		return ibanText(scalarText(raw))
	}
	return scalarText(raw)
}

// optionLabel is the label of f's option value, or value itself.
func optionLabel(f *onboarding.Field, value string) string {
	for _, o := range f.Options {
		if o.Value == value {
			return o.Label
		}
	}
	return value
}

// reviewView is the review page's data.
type reviewView struct {
	layout
	Missing   []missingView
	Sections  []summarySection
	Writable  bool
	Submitted bool
	IsPrimary bool
	// Declarations are what the primary contact accepts as they send.
	Declarations []declarationView
	// PrimaryContact names who makes the declarations, for colleagues.
	PrimaryContact string
}

// declarationView is one declaration's checkbox.
type declarationView struct {
	ID, Label, Error string
	Checked          bool
	// TermsURL is the organization's terms, for the terms declaration.
	TermsURL string
}

// missingView is one thing still to do, linked to where it is done.
type missingView struct{ Href, Message string }

// summarySection is the answers of one stage.
type summarySection struct {
	Title string
	Rows  []summaryRow
	// Href and Empty, when set, are where to add the section's first
	// answer and what to say while it has none.
	Href, Empty string
}

// summaryRow is one answer, with the address of the control that changes
// it.
type summaryRow struct {
	Label, Value, Href string
	// Empty is what shows when there is no value and nothing is needed
	// ("Not answered" when empty).
	Empty string
	// ChangeName names the row in its Change link for screen readers when
	// Label alone does not tell the rows apart (Label when empty).
	ChangeName string
	// Action is the link's word: "Change" for an answer, "Add" or
	// "Upload" for none yet.
	Action string
	// Needed are the lines of what the answer still lacks ("Home
	// address: Not provided — required"), shown after its value.
	Needed []string
}
