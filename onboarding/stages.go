package onboarding

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode"
)

// Stage is one page of the applicant's form: the fields of one catalog
// category, in catalog order.
type Stage struct {
	ID     string // the category, for example "company"
	Title  string
	Fields []*Field
}

// Well-known stages of the form.
const (
	StagePeople       = "people"
	StageDocuments    = "documents"
	StageConfirmation = "confirmation"
)

var stageTitles = map[string]string{
	"company":         "Company details",
	"business":        "About the business",
	StagePeople:       "People and owners",
	StageDocuments:    "Documents",
	StageConfirmation: "Declarations",
}

// Stages returns the form's stages in catalog order: one per category, in
// the order categories first appear. Document fields always make the
// documents stage and person-scoped fields the people stage, whatever
// category a form file gives them. The slice is the form's own: callers
// must not modify it.
func (f *Form) Stages() []Stage { return f.stages }

// buildStages groups the fields into stages (see Stages).
func (f *Form) buildStages() []Stage {
	var out []Stage
	at := map[string]int{}
	for i := range f.fields {
		fd := &f.fields[i]
		id := fd.Category
		switch {
		case fd.Type == TypeDocument:
			id = StageDocuments
		case fd.PersonScoped:
			id = StagePeople
		}
		j, ok := at[id]
		if !ok {
			j = len(out)
			at[id] = j
			title := stageTitles[id]
			if title == "" {
				title = capitalize(strings.ReplaceAll(id, "_", " "))
			}
			out = append(out, Stage{ID: id, Title: title})
		}
		out[j].Fields = append(out[j].Fields, fd)
	}
	return out
}

func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// Stage returns the stage with id, if the form has it.
func (f *Form) Stage(id string) (Stage, bool) {
	for _, st := range f.stages {
		if st.ID == id {
			return st, true
		}
	}
	return Stage{}, false
}

// SaveStage saves the answers of one stage: values maps each field id of
// the stage to its value as JSON, and a missing id clears the field (an
// unticked box). Values are checked with the same rules and messages as
// PATCH; nothing is saved when one fails. Required answers are checked at
// submission, so a stage can be saved half done.
//
// shown maps a field id to the ValueFingerprint of the value the page
// showed. A field the applicant left as it was shown keeps what is stored
// now, so that saving a page does not undo what a colleague or the partner
// changed since it was opened; a field the applicant changed is saved.
func (s *Service) SaveStage(ctx context.Context, v *Visitor, stageID string, values map[string]json.RawMessage, shown map[string]string) error {
	if err := editable(v); err != nil {
		return err
	}
	st, ok := v.Form().Stage(stageID)
	if !ok || stageID == StagePeople || stageID == StageDocuments {
		return ErrStageNotFound
	}
	if stageID == StageConfirmation && !v.Primary() {
		return ErrPrimaryOnly
	}
	now := s.now().UTC()
	var ids []string
	var problems Problems
	set := map[string]json.RawMessage{}
	for _, f := range st.Fields {
		if f.Type == TypeDocument || f.PersonScoped || v.CompanyFieldLocked(v.App, f) {
			continue
		}
		if !onPage(values, shown, f.ID) {
			continue
		}
		raw, given := values[f.ID]
		if !given {
			raw = json.RawMessage("null")
		}
		norm, err := f.Normalize(raw, now)
		if err == nil && f.Confirmation && norm != nil && string(norm) != "true" {
			norm = nil // an unticked declaration is no declaration
		}
		if err != nil {
			problems.AddError(f.ID, err)
			continue
		}
		ids = append(ids, f.ID)
		set[f.ID] = norm
	}
	if err := problems.FieldErr(); err != nil {
		return err
	}
	return s.changeForm(ctx, v, now, func(a *Application) (Activity, error) {
		if a.Data.Fields == nil {
			a.Data.Fields = map[string]json.RawMessage{}
		}
		var saved []string
		for _, id := range ids {
			f, _ := v.Form().Field(id)
			if v.CompanyFieldLocked(a, f) || keepStored(shown, id, set[id], a.Data.Fields[id]) {
				continue
			}
			if ValueFingerprint(set[id]) != ValueFingerprint(a.Data.Fields[id]) {
				saved = append(saved, id) // the log names the fields the save changed
			}
			if set[id] == nil {
				delete(a.Data.Fields, id)
			} else {
				a.Data.Fields[id] = set[id]
			}
		}
		a.visit(stageID)
		return Activity{Action: ActionFormSaved, Fields: saved, Detail: stageID}, nil
	})
}

// onPage reports whether the page that was posted had field id: its value
// was posted, or the page said what it showed (an unticked box posts
// nothing). Without shown every field counts. A field that is neither (a
// page drawn before the field was added to the form) is left alone.
func onPage(values map[string]json.RawMessage, shown map[string]string, id string) bool {
	_, posted := values[id]
	_, had := shown[id]
	return posted || had || shown == nil
}

// ValueFingerprint identifies a stored value (JSON, nil when unset) so that
// a page can say which value it showed: the same value always gives the
// same fingerprint, whatever the order of its object members.
func ValueFingerprint(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	canonical := []byte(raw)
	if d.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil { // object members sorted
			canonical = b
		}
	}
	sum := sha256.Sum256(canonical)
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// keepStored reports whether a save should keep the stored value of field
// id: the page showed another value than is stored now (someone changed
// it meanwhile), and the applicant left it as shown.
func keepStored(shown map[string]string, id string, posted, stored json.RawMessage) bool {
	fp, ok := shown[id]
	return ok && ValueFingerprint(stored) != fp && ValueFingerprint(posted) == fp
}
