package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// How a form post that fails validation is shown again: the messages at
// each control and the page's error summary, in the order of the page.

// labelled names a control in error summaries, in page order.
type labelled struct {
	ID, Label string
	// field is the catalog field the control shows, whose errors are
	// rewritten in plain words (plainErrors); nil for other controls.
	field *onboarding.Field
	// posted is the value the failed save posted (JSON), when known.
	posted json.RawMessage
}

// withPosted adds the posted values to controls.
func withPosted(controls []labelled, values map[string]json.RawMessage) []labelled {
	out := make([]labelled, len(controls))
	for i, c := range controls {
		c.posted = values[c.ID]
		out[i] = c
	}
	return out
}

// labels names the controls of fields, in their order.
func labels(fields []*onboarding.Field) []labelled {
	out := make([]labelled, len(fields))
	for i, f := range fields {
		out[i] = labelled{ID: f.ID, Label: f.Label, field: f}
	}
	return out
}

// formErrors are the errors of a failed save: one message per control,
// and the summary at the top of the page. A nil *formErrors has none.
type formErrors struct {
	byControl map[string]string
	summary   []errorItem
}

// at is the message of control id, or "".
func (e *formErrors) at(id string) string {
	if e == nil {
		return ""
	}
	return e.byControl[id]
}

// parts are the messages of the inputs of field id's group, by part
// ("city" of control "registered_address.city"); nil when none.
func (e *formErrors) parts(id string) map[string]string {
	if e == nil {
		return nil
	}
	var out map[string]string
	for k, m := range e.byControl {
		if part, ok := strings.CutPrefix(k, id+"."); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[part] = m
		}
	}
	return out
}

// items is the error summary.
func (e *formErrors) items() []errorItem {
	if e == nil {
		return nil
	}
	return e.summary
}

// fieldErrors turns a validation error into per-control messages and the
// page's error summary, in the order of controls; reasons about no
// control follow, in the order the domain found them (by key when it does
// not say). It returns nil when err is not a validation error about
// fields.
func fieldErrors(err error, controls []labelled) *formErrors {
	e := onboarding.AsError(err)
	if e == nil || e.Kind != onboarding.KindInvalid || len(e.Details) == 0 {
		return nil
	}
	fe := &formErrors{byControl: make(map[string]string, len(e.Details))}
	for _, ctl := range controls {
		reason, ok := e.Details[ctl.ID]
		switch {
		case !ok:
		case ctl.field != nil:
			for _, pe := range plainErrors(ctl.field, e.Problem(ctl.ID), ctl.posted) {
				id := ctl.ID
				if pe.Part != "" {
					id += "." + pe.Part
				}
				fe.byControl[id] = pe.Message
				fe.summary = append(fe.summary, errorItem{Anchor: id, Message: pe.Message})
			}
		default:
			m := ctl.Label + " " + reason
			fe.byControl[ctl.ID] = m
			fe.summary = append(fe.summary, errorItem{Anchor: ctl.ID, Message: m})
		}
	}
	order := e.Fields
	if len(order) != len(e.Details) {
		order = slices.Sorted(maps.Keys(e.Details))
	}
	for _, id := range order {
		if !slices.ContainsFunc(controls, func(c labelled) bool { return c.ID == id }) {
			fe.byControl[id] = e.Details[id]
			fe.summary = append(fe.summary, errorItem{Message: e.Details[id]})
		}
	}
	return fe
}

// shownValues reads the fingerprints a page posts of the values it
// showed (shown.{field id}); nil when it posts none.
func shownValues(form url.Values) map[string]string {
	var shown map[string]string
	for k, vs := range form {
		if id, ok := strings.CutPrefix(k, "shown."); ok && len(vs) > 0 {
			if shown == nil {
				shown = make(map[string]string)
			}
			shown[id] = vs[0]
		}
	}
	return shown
}

// recordPage is a page of the people stage that adds or changes one
// record (a person, a related company, an ownership row) from input In,
// as saveRecord needs it.
type recordPage[In any] struct {
	controls []labelled // in page order
	bind     func(form url.Values) In
	// save stores in as record id ("" adds one).
	save func(ctx context.Context, v *onboarding.Visitor, id string, in In) (string, error)
	// render draws the page of record id ("new" when adding) with the
	// posted input and its errors.
	render func(c echo.Context, v *onboarding.Visitor, status int, id string, in *In, errs *formErrors) error
	// posted, when set, gives the values of a posted input, for the
	// errors' words.
	posted func(in In) map[string]json.RawMessage
	// adjust, when set, rewrites the errors of a failed save.
	adjust func(err error, errs *formErrors)
	notice string // shown on the people page after a save
}

// saveRecord saves the record of page p posted to /…/:id: a validation
// failure shows the page again with 400, its messages and summary; a
// success goes back to the people page.
func saveRecord[In any](c echo.Context, p recordPage[In]) error {
	v := visitorOf(c)
	id := c.Param("id")
	in := p.bind(c.Request().PostForm)
	recordID := id
	if id == "new" {
		recordID = ""
	}
	savedID, err := p.save(c.Request().Context(), v, recordID, in)
	controls := p.controls
	if p.posted != nil {
		controls = withPosted(controls, p.posted(in))
	}
	if errs := fieldErrors(err, controls); errs != nil {
		if p.adjust != nil {
			p.adjust(err, errs)
		}
		return p.render(c, v, http.StatusBadRequest, id, &in, errs)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, formBase(v)+"/s/people?done="+url.QueryEscape(p.notice)+"&id="+url.QueryEscape(savedID))
}

// removeRecord is the handler of a people-stage record's remove button
// (a person, a related company, an ownership row): remove takes the
// record's id, and the applicant goes back to the people page.
func (s *Server) removeRecord(remove func(ctx context.Context, v *onboarding.Visitor, id string) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := visitorOf(c)
		if err := remove(c.Request().Context(), v, c.Param("id")); err != nil {
			return err
		}
		return redirectWith(c, formBase(v)+"/s/people", "removed")
	}
}
