package onboarding

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
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

// Errors of the form's pages.
var (
	ErrStageNotFound     = &Error{Kind: KindNotFound, Message: "This page does not exist."}
	ErrPrimaryOnly       = &Error{Kind: KindForbidden, Message: "Only the primary contact can do this."}
	ErrPersonNotFound    = &Error{Kind: KindNotFound, Message: "This person is no longer on the application."}
	ErrEntityNotFound    = &Error{Kind: KindNotFound, Message: "This company is no longer on the application."}
	ErrOwnershipNotFound = &Error{Kind: KindNotFound, Message: "This ownership is no longer on the application."}
	ErrRegistryRecord    = &Error{Kind: KindInvalid, Message: "Details from the company register cannot be removed or renamed here. If they are wrong, tell us in the business description."}
)

// CompanyFieldLocked reports whether the applicant may not change field f
// of application a: the company's name and number once the registry
// verified them, and, with company selection, before: they come only from
// choosing the company on the register.
func (v *Visitor) CompanyFieldLocked(a *Application, f *Field) bool {
	return (f.ID == "company_name" || f.ID == "company_number") && (a.RegistryNumber != "" || v.Config.CompanySelection)
}

// editable returns an error unless the visitor may change the application.
func editable(v *Visitor) error {
	if !v.SignedIn {
		return ErrNotSignedIn
	}
	if !v.App.Status.Writable() {
		return ErrApplicationFrozen
	}
	return nil
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
	var ids, invalid []string
	set := map[string]json.RawMessage{}
	reasons := map[string]string{}
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
			invalid = append(invalid, f.ID)
			reasons[f.ID] = err.Error()
			continue
		}
		ids = append(ids, f.ID)
		set[f.ID] = norm
	}
	if len(invalid) > 0 {
		return ErrInvalidFieldValues(invalid, reasons)
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
			if set[id] == nil {
				delete(a.Data.Fields, id)
			} else {
				a.Data.Fields[id] = set[id]
			}
			saved = append(saved, id)
		}
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

// changeForm applies an applicant's change to the stored application,
// checking again that it may change, and refreshes v.
func (s *Service) changeForm(ctx context.Context, v *Visitor, now time.Time, change func(*Application) (Activity, error)) error {
	pid := v.Participant.ID
	app, err := s.store.UpdateApplication(ctx, v.App.ID, func(a *Application) ([]Activity, error) {
		p := a.participant(pid)
		if p == nil {
			return nil, ErrNotSignedIn
		}
		if !a.Status.Writable() {
			return nil, ErrApplicationFrozen
		}
		act, err := change(a)
		if err != nil {
			return nil, err
		}
		a.UpdatedAt = now
		act.At, act.Actor = now, participantActor(p)
		return []Activity{act}, nil
	})
	if err != nil {
		return s.formError("save form", err)
	}
	v.refresh(app)
	return nil
}

// Person roles (spec 2.2).
const (
	PersonDirector    = "director"
	PersonUBO         = "ubo"
	PersonShareholder = "shareholder"
)

// PersonRoles lists the roles a person may have, in display order.
func PersonRoles() []string { return []string{PersonDirector, PersonUBO, PersonShareholder} }

// PersonInput is the applicant's answers about one person: roles, and the
// values of the form's person-scoped fields by field id.
type PersonInput struct {
	Roles  []string
	Values map[string]json.RawMessage
	// Shown maps a field id, and "roles", to the ValueFingerprint of what
	// the page showed (see SaveStage); nil when unknown.
	Shown map[string]string
}

// RolesValue is a person's roles as the JSON value ValueFingerprint takes.
func RolesValue(roles []string) json.RawMessage {
	if len(roles) == 0 {
		return nil
	}
	b, _ := json.Marshal(roles)
	return b
}

// Person-scoped fields of the built-in form that map onto Person members.
const (
	personFullName    = "person_full_name"
	personDateOfBirth = "person_date_of_birth"
	personNationality = "person_nationality"
	personHomeAddress = "person_home_address"
	personEmail       = "person_email"
	personPhone       = "person_phone"
)

// PersonFieldValue returns the value person p has for person-scoped field
// id, as JSON, or nil.
func PersonFieldValue(p *Person, id string) json.RawMessage {
	str := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		b, _ := json.Marshal(s)
		return b
	}
	switch id {
	case personFullName:
		return str(p.FullName)
	case personDateOfBirth:
		return str(p.DateOfBirth)
	case personNationality:
		return str(p.Nationality)
	case personEmail:
		return str(p.Email)
	case personPhone:
		return str(p.PhoneNumber)
	case personHomeAddress:
		if p.HomeAddress == nil {
			return nil
		}
		b, _ := json.Marshal(p.HomeAddress)
		return b
	}
	return p.Fields[id]
}

// setPersonField stores a normalized value (nil clears) on p.
func setPersonField(p *Person, id string, v json.RawMessage) {
	var s string
	if v != nil && v[0] == '"' {
		_ = json.Unmarshal(v, &s)
	}
	switch id {
	case personFullName:
		s = strings.Join(strings.Fields(s), " ")
		p.FullName = s
		p.FirstName, p.LastName = splitName(s)
	case personDateOfBirth:
		p.DateOfBirth = s
	case personNationality:
		p.Nationality = s
	case personEmail:
		p.Email = s
	case personPhone:
		p.PhoneNumber = s
	case personHomeAddress:
		p.HomeAddress = nil
		if v != nil {
			var a Address
			if json.Unmarshal(v, &a) == nil {
				p.HomeAddress = &a
			}
		}
	default:
		if v == nil {
			delete(p.Fields, id)
			return
		}
		if p.Fields == nil {
			p.Fields = map[string]json.RawMessage{}
		}
		p.Fields[id] = v
	}
}

// splitName splits a full name into first names and the last name.
func splitName(full string) (first, last string) {
	parts := strings.Fields(full)
	switch len(parts) {
	case 0:
		return "", ""
	case 1:
		return "", parts[0]
	}
	return strings.Join(parts[:len(parts)-1], " "), parts[len(parts)-1]
}

// registryLockedPersonField reports whether a registry person's field comes
// from the register and stays as it is.
func registryLockedPersonField(p *Person, id string) bool {
	return p.Source == SourceRegistry && id == personFullName
}

// SavePerson adds a person (personID "") or changes one, and returns the
// person's id. Registry people keep their name and roles; the applicant
// completes their other details.
func (s *Service) SavePerson(ctx context.Context, v *Visitor, personID string, in PersonInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	now := s.now().UTC()
	var existing *Person
	if personID != "" {
		if existing = findPerson(v.App.Data.People, personID); existing == nil {
			return "", ErrPersonNotFound
		}
	}
	reasons := map[string]string{}
	var invalid []string
	bad := func(id, msg string) {
		invalid = append(invalid, id)
		reasons[id] = msg
	}
	roles := normalizeRoles(in.Roles)
	if existing == nil || existing.Source != SourceRegistry {
		if len(roles) == 0 {
			bad("roles", "choose at least one role")
		}
	}
	values := map[string]json.RawMessage{}
	var ids []string
	for _, f := range v.Form().Fields() {
		f := f
		if !f.PersonScoped || f.Type == TypeDocument || existing != nil && registryLockedPersonField(existing, f.ID) || !onPage(in.Values, in.Shown, f.ID) {
			continue
		}
		raw, given := in.Values[f.ID]
		if !given {
			raw = json.RawMessage("null")
		}
		norm, err := f.Normalize(raw, now)
		switch {
		case err != nil:
			bad(f.ID, err.Error())
			continue
		case f.ID == personFullName && norm == nil:
			bad(f.ID, "is required: enter the person's full name")
			continue
		case f.ID == personEmail && norm != nil:
			var e string
			_ = json.Unmarshal(norm, &e)
			if !validEmail(e) {
				bad(f.ID, "must be an e-mail address such as name@example.com")
				continue
			}
		}
		ids = append(ids, f.ID)
		values[f.ID] = norm
	}
	if len(invalid) > 0 {
		return "", ErrInvalidFieldValues(invalid, reasons)
	}
	id := personID
	if id == "" {
		var err error
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err := s.changeForm(ctx, v, now, func(a *Application) (Activity, error) {
		p := findPerson(a.Data.People, id)
		if p == nil {
			if personID != "" {
				return Activity{}, ErrPersonNotFound
			}
			a.Data.People = append(a.Data.People, Person{ID: id, Source: SourceUserAdded})
			p = &a.Data.People[len(a.Data.People)-1]
		}
		if p.Source != SourceRegistry && !keepStored(in.Shown, "roles", RolesValue(roles), RolesValue(p.Roles)) {
			p.Roles = roles
		}
		var saved []string
		for _, fid := range ids {
			if keepStored(in.Shown, fid, values[fid], PersonFieldValue(p, fid)) {
				continue
			}
			setPersonField(p, fid, values[fid])
			saved = append(saved, fid)
		}
		return Activity{Action: ActionPersonSaved, Detail: id, Fields: saved}, nil
	})
	return id, err
}

func normalizeRoles(in []string) []string {
	var out []string
	for _, r := range PersonRoles() {
		if slices.Contains(in, r) {
			out = append(out, r)
		}
	}
	return out
}

func findPerson(people []Person, id string) *Person {
	for i := range people {
		if people[i].ID == id {
			return &people[i]
		}
	}
	return nil
}

func findEntity(entities []Entity, id string) *Entity {
	for i := range entities {
		if entities[i].ID == id {
			return &entities[i]
		}
	}
	return nil
}

// RemovePerson removes a person the applicant added, with their ownership
// rows and documents.
func (s *Service) RemovePerson(ctx context.Context, v *Visitor, personID string) error {
	if err := editable(v); err != nil {
		return err
	}
	var blobs []string
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		blobs = nil
		i := slices.IndexFunc(a.Data.People, func(p Person) bool { return p.ID == personID })
		if i < 0 {
			return Activity{}, ErrPersonNotFound
		}
		if a.Data.People[i].Source == SourceRegistry {
			return Activity{}, ErrRegistryRecord
		}
		for _, d := range a.Data.People[i].Documents {
			if d.BlobID != "" {
				blobs = append(blobs, d.BlobID)
			}
		}
		a.Data.People = slices.Delete(a.Data.People, i, i+1)
		a.Data.Ownership = slices.DeleteFunc(a.Data.Ownership, func(o Ownership) bool {
			return o.OwnerType == OwnerPerson && o.OwnerID == personID
		})
		return Activity{Action: ActionPersonRemoved, Detail: personID}, nil
	})
	if err == nil {
		s.deleteBlobs(blobs)
	}
	return err
}

// EntityTypes lists the types of related entities (spec 2.2).
func EntityTypes() []string { return []string{"holding_company", "subsidiary", "parent", "other"} }

// EntityInput is the applicant's answers about a related legal entity.
type EntityInput struct {
	Name, Type, Country string
}

// SaveEntity adds a related entity (entityID "") or changes one the
// applicant added, and returns its id.
func (s *Service) SaveEntity(ctx context.Context, v *Visitor, entityID string, in EntityInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	if entityID != "" {
		e := findEntity(v.App.Data.Entities, entityID)
		if e == nil {
			return "", ErrEntityNotFound
		}
		if e.Source == SourceRegistry {
			return "", ErrRegistryRecord
		}
	}
	name := strings.Join(strings.Fields(in.Name), " ")
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	reasons := map[string]string{}
	var invalid []string
	if name == "" {
		invalid = append(invalid, "name")
		reasons["name"] = "is required: enter the company's legal name"
	} else if len(name) > 300 {
		invalid = append(invalid, "name")
		reasons["name"] = "must be at most 300 characters"
	}
	if !slices.Contains(EntityTypes(), in.Type) {
		invalid = append(invalid, "type")
		reasons["type"] = "must be one of " + strings.Join(EntityTypes(), ", ")
	}
	if country != "" && !countryCodePattern.MatchString(country) {
		invalid = append(invalid, "country")
		reasons["country"] = "must be a two-letter country code such as GB or IE"
	}
	if len(invalid) > 0 {
		return "", ErrInvalidFieldValues(invalid, reasons)
	}
	id := entityID
	if id == "" {
		var err error
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		e := findEntity(a.Data.Entities, id)
		if e != nil && e.Source == SourceRegistry {
			return Activity{}, ErrRegistryRecord
		}
		if e == nil {
			if entityID != "" {
				return Activity{}, ErrEntityNotFound
			}
			a.Data.Entities = append(a.Data.Entities, Entity{ID: id, Source: SourceUserAdded})
			e = &a.Data.Entities[len(a.Data.Entities)-1]
		}
		e.Name, e.Type, e.Country = name, in.Type, country
		return Activity{Action: ActionEntitySaved, Detail: id}, nil
	})
	return id, err
}

// RemoveEntity removes an entity the applicant added, with every ownership
// row it is part of.
func (s *Service) RemoveEntity(ctx context.Context, v *Visitor, entityID string) error {
	if err := editable(v); err != nil {
		return err
	}
	var blobs []string
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		blobs = nil
		i := slices.IndexFunc(a.Data.Entities, func(e Entity) bool { return e.ID == entityID })
		if i < 0 {
			return Activity{}, ErrEntityNotFound
		}
		if a.Data.Entities[i].Source == SourceRegistry {
			return Activity{}, ErrRegistryRecord
		}
		for _, d := range a.Data.Entities[i].Documents {
			if d.BlobID != "" {
				blobs = append(blobs, d.BlobID)
			}
		}
		a.Data.Entities = slices.Delete(a.Data.Entities, i, i+1)
		a.Data.Ownership = slices.DeleteFunc(a.Data.Ownership, func(o Ownership) bool {
			return o.OwnerType == OwnerEntity && o.OwnerID == entityID || o.OwnedType == OwnedEntity && o.OwnedID == entityID
		})
		return Activity{Action: ActionEntityRemoved, Detail: entityID}, nil
	})
	if err == nil {
		s.deleteBlobs(blobs)
	}
	return err
}

// OwnershipInput is one ownership statement of the applicant. Owner is
// "person:{id}" or "entity:{id}"; Owned is "target" (the applying company)
// or "entity:{id}"; Percentage is a number from 0 to 100 as typed.
type OwnershipInput struct {
	Owner, Owned, Percentage string
	IsDirect, IsNominee      bool
}

// ErrOwnershipOver100 is the error for ownership of one party that would
// add up to more than 100%.
func ErrOwnershipOver100(owned string, total float64) *Error {
	e := Errorf(KindInvalid, "Ownership of %s would add up to %s%%, more than 100%%. Check the percentages.", owned, FormatPercent(total))
	e.Details = map[string]string{"percentage": fmt.Sprintf("would bring the total for %s to %s%%; the total cannot be more than 100%%", owned, FormatPercent(total))}
	return e
}

// FormatPercent writes a percentage for people, to at most two decimals
// and without trailing zeros: 75, 2.5, 33.33.
func FormatPercent(p float64) string {
	return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64)
}

// SaveOwnership adds an ownership row (ownershipID "") or changes one the
// applicant added, and returns its id. The stated ownership of any one
// party may not add up to more than 100%.
func (s *Service) SaveOwnership(ctx context.Context, v *Visitor, ownershipID string, in OwnershipInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	reasons := map[string]string{}
	var invalid []string
	bad := func(id, msg string) {
		invalid = append(invalid, id)
		reasons[id] = msg
	}
	ownerType, ownerID, _ := strings.Cut(in.Owner, ":")
	if !(ownerType == OwnerPerson && findPerson(v.App.Data.People, ownerID) != nil ||
		ownerType == OwnerEntity && findEntity(v.App.Data.Entities, ownerID) != nil) {
		bad("owner", "choose who owns the shares")
		ownerType = ""
	}
	ownedType, ownedID, _ := strings.Cut(in.Owned, ":")
	switch {
	case in.Owned == OwnedTarget:
		ownedType, ownedID = OwnedTarget, ""
	case ownedType == OwnedEntity && findEntity(v.App.Data.Entities, ownedID) != nil:
	default:
		bad("owned", "choose which company is owned")
		ownedType = ""
	}
	if ownerType == OwnerEntity && ownedType == OwnedEntity && ownerID == ownedID {
		bad("owned", "a company cannot own itself")
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(in.Percentage), "%"), 64)
	if err != nil || math.IsNaN(pct) || pct < 0 || pct > 100 {
		bad("percentage", msgNotPercent)
	}
	if len(invalid) > 0 {
		return "", ErrInvalidFieldValues(invalid, reasons)
	}
	id := ownershipID
	if id == "" {
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err = s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		// The parties may have been removed since the page was read.
		if !(ownerType == OwnerPerson && findPerson(a.Data.People, ownerID) != nil ||
			ownerType == OwnerEntity && findEntity(a.Data.Entities, ownerID) != nil) {
			return Activity{}, ErrInvalidFieldValues([]string{"owner"}, map[string]string{"owner": "choose who owns the shares"})
		}
		if ownedType == OwnedEntity && findEntity(a.Data.Entities, ownedID) == nil {
			return Activity{}, ErrInvalidFieldValues([]string{"owned"}, map[string]string{"owned": "choose which company is owned"})
		}
		// Direct holdings of one party add up to at most 100%, and so do
		// the indirect ones (an owner's stake through other companies):
		// the same shares appear once in each view.
		total := pct
		for _, o := range a.Data.Ownership {
			if o.ID != id && o.OwnedType == ownedType && o.OwnedID == ownedID && o.IsDirect == in.IsDirect {
				total += o.Percentage
			}
		}
		if total > 100+1e-9 {
			return Activity{}, ErrOwnershipOver100(ownedName(a, ownedType, ownedID), total)
		}
		i := slices.IndexFunc(a.Data.Ownership, func(o Ownership) bool { return o.ID == id })
		if i < 0 {
			if ownershipID != "" {
				return Activity{}, ErrOwnershipNotFound
			}
			a.Data.Ownership = append(a.Data.Ownership, Ownership{ID: id})
			i = len(a.Data.Ownership) - 1
		} else if a.Data.Ownership[i].PercentageBand != "" {
			return Activity{}, ErrRegistryRecord
		}
		a.Data.Ownership[i] = Ownership{ID: id, OwnerType: ownerType, OwnerID: ownerID, OwnedType: ownedType, OwnedID: ownedID,
			Percentage: pct, IsDirect: in.IsDirect, IsNominee: in.IsNominee}
		return Activity{Action: ActionOwnershipSaved, Detail: id}, nil
	})
	return id, err
}

// ownedName names an owned party for messages.
func ownedName(a *Application, ownedType, ownedID string) string {
	if ownedType == OwnedEntity {
		if e := findEntity(a.Data.Entities, ownedID); e != nil {
			return e.Name
		}
	}
	if n := a.CompanyName(); n != "" {
		return n
	}
	return "the company"
}

// RemoveOwnership removes an ownership row the applicant added.
func (s *Service) RemoveOwnership(ctx context.Context, v *Visitor, ownershipID string) error {
	if err := editable(v); err != nil {
		return err
	}
	return s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		i := slices.IndexFunc(a.Data.Ownership, func(o Ownership) bool { return o.ID == ownershipID })
		if i < 0 {
			return Activity{}, ErrOwnershipNotFound
		}
		if a.Data.Ownership[i].PercentageBand != "" {
			return Activity{}, ErrRegistryRecord
		}
		a.Data.Ownership = slices.Delete(a.Data.Ownership, i, i+1)
		return Activity{Action: ActionOwnershipRemoved, Detail: ownershipID}, nil
	})
}

// deleteBlobs removes files no record refers to any more; a failure leaves
// an orphan file, which is logged.
func (s *Service) deleteBlobs(ids []string) {
	if s.blobs == nil {
		return
	}
	for _, id := range ids {
		if err := s.blobs.Delete(id); err != nil {
			s.log.Warn("delete unreferenced file", "blob_id", id, "err", err)
		}
	}
}
