package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// Review and submission: every answer of the application by stage, what
// is still missing, and the primary contact's submit button.

// registerReviewRoutes registers the review page and the submission.
func (s *Server) registerReviewRoutes(in []echo.MiddlewareFunc) {
	s.e.GET("/a/:slug/review", s.reviewPage, in...)
	s.e.POST("/a/:slug/submit", s.submit, in...)
}

func (s *Server) reviewPage(c echo.Context) error {
	return s.renderReview(c, visitorOf(c), http.StatusOK, nil)
}

// renderReview draws the review page with the error summary items.
func (s *Server) renderReview(c echo.Context, v *onboarding.Visitor, status int, items []errorItem) error {
	p := &reviewView{layout: newLayout(v, "Review and submit"), Missing: missingLinks(v), Sections: s.reviewSections(v),
		Writable: v.Writable(), Submitted: !v.Writable(), IsPrimary: v.Primary()}
	p.Notice = notice(c)
	p.Errors = items
	return s.render(c, status, "review", p)
}

func (s *Server) submit(c echo.Context) error {
	v := visitorOf(c)
	err := s.svc.Submit(c.Request().Context(), v)
	if e := onboarding.AsError(err); e != nil && len(e.Items) > 0 {
		return s.renderReview(c, v, http.StatusBadRequest, []errorItem{{Anchor: "missing", Message: e.Message}})
	}
	if err != nil {
		return err
	}
	return redirectWith(c, formBase(v), "submitted")
}

// missingLinks are what the application lacks, each with a link to where
// the applicant adds it.
func missingLinks(v *onboarding.Visitor) []missingView {
	base := formBase(v)
	var out []missingView
	for _, m := range v.Missing() {
		href := base + "/s/" + m.Stage
		if m.Stage == "company" && v.NeedsCompany() {
			href = base + "/company"
		}
		if m.FieldID != "" && m.Stage != onboarding.StageDocuments && m.Stage != onboarding.StagePeople {
			href += "#" + m.FieldID
		}
		out = append(out, missingView{Href: href, Message: m.Message})
	}
	return out
}

// reviewSections are the answers of each stage.
func (s *Server) reviewSections(v *onboarding.Visitor) []summarySection {
	var out []summarySection
	for _, st := range v.Form().Stages() {
		sec := summarySection{Title: st.Title, Href: formBase(v) + "/s/" + st.ID}
		switch st.ID {
		case onboarding.StagePeople:
			sec.Rows = peopleRows(v)
		case onboarding.StageDocuments:
			sec.Rows = s.documentRows(v)
		default:
			for _, f := range st.Fields {
				sec.Rows = append(sec.Rows, summaryRow{Label: f.Label, Value: valueText(f, v.App.Data.Fields[f.ID])})
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
	fields := personFields(v)
	for i := range d.People {
		pp := &d.People[i]
		parts := []string{roleList(pp.Roles)}
		for _, f := range fields {
			if f.ID == onboarding.FieldPersonFullName {
				continue
			}
			if t := valueText(f, onboarding.PersonFieldValue(pp, f.ID)); t != "" {
				parts = append(parts, f.Label+": "+t)
			}
		}
		out = append(out, summaryRow{Label: onboarding.PersonName(pp), Value: strings.Join(parts, "\n")})
	}
	for _, e := range d.Entities {
		out = append(out, summaryRow{Label: e.Name, Value: entityTypeLabels[e.Type]})
	}
	for _, o := range d.Ownership {
		out = append(out, summaryRow{Label: "Ownership", Value: ownershipText(v.App, o)})
	}
	return out
}

// documentRows are the documents stage's answers: each slot with its
// file, or why it has none.
func (s *Server) documentRows(v *onboarding.Visitor) []summaryRow {
	var out []summaryRow
	for _, slot := range s.docSlots(v) {
		label := slot.Label
		if slot.Whose != "" {
			label += " for " + slot.Whose
		}
		val := ""
		if slot.Doc != nil {
			switch slot.Doc.Status {
			case onboarding.DocumentRejected:
				val = slot.Doc.FileName + " (not accepted)"
			case onboarding.DocumentSkipped:
				val = "Not needed"
			default:
				val = slot.Doc.FileName
			}
		}
		out = append(out, summaryRow{Label: label, Value: val})
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
		return cur.Currency + " " + cur.Amount.String()
	case onboarding.TypeAddress:
		var a map[string]string
		_ = json.Unmarshal(raw, &a)
		var lines []string
		for _, k := range addressParts {
			if a[k] != "" {
				lines = append(lines, a[k])
			}
		}
		return strings.Join(lines, "\n")
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
}

// missingView is one thing still to do, linked to where it is done.
type missingView struct{ Href, Message string }

// summarySection is the answers of one stage.
type summarySection struct {
	Title, Href string
	Rows        []summaryRow
}

// summaryRow is one answer.
type summaryRow struct{ Label, Value string }
