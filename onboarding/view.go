package onboarding

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// The partner's view of an application (docs/api.md): what get-application
// returns and what application events carry. These types are the API's wire
// format, kept separate from the records (Application, Person, ...) so that
// renaming a record field can never change the API.

// TimestampLayout is the layout of every API timestamp: ISO 8601 in UTC with
// millisecond precision.
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Timestamp formats t as an API timestamp: t.UTC().Format(TimestampLayout),
// written digit by digit for the years 0–9999, since every view renders
// several.
func Timestamp(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(TimestampLayout)
	}
	hour, minute, second := t.Clock()
	b := []byte("0000-00-00T00:00:00.000Z")
	putDigits(b[0:4], year)
	putDigits(b[5:7], int(month))
	putDigits(b[8:10], day)
	putDigits(b[11:13], hour)
	putDigits(b[14:16], minute)
	putDigits(b[17:19], second)
	putDigits(b[20:23], t.Nanosecond()/int(time.Millisecond))
	return string(b)
}

// putDigits writes n in decimal into b, right-aligned and zero-padded; n
// must have at most len(b) digits.
func putDigits(b []byte, n int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
}

// OptionalTimestamp formats t as an API timestamp, or returns nil (JSON
// null) when t is nil.
func OptionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Timestamp(*t)
	return &s
}

// ApplicationView is an application as the partner sees it.
type ApplicationView struct {
	ID           string            `json:"id"`
	ConfigID     string            `json:"config_id"`
	Status       Status            `json:"status"`
	Link         string            `json:"link,omitempty"`
	Data         DataView          `json:"data"`
	Participants []ParticipantView `json:"participants"`
	// Present only for registry-eligible applications.
	RegistryDocuments       *[]RegistryDocumentView `json:"registry_documents,omitempty"`
	RegistryDocumentsStatus RegistryDocumentsStatus `json:"registry_documents_status,omitempty"`
	CreatedAt               string                  `json:"created_at"`
	UpdatedAt               string                  `json:"updated_at"`
	SubmittedAt             *string                 `json:"submitted_at"`
	CompletedAt             *string                 `json:"completed_at"`
	// Decisions are the provider's decisions, oldest first.
	Decisions []DecisionView `json:"decisions"`
}

// DecisionView is a recorded decision.
type DecisionView struct {
	ID         string          `json:"id"`
	Type       DecisionType    `json:"type"`
	Timestamp  string          `json:"timestamp"`
	RecordedAt string          `json:"recorded_at"`
	Data       json.RawMessage `json:"data"`
	APIKeyName string          `json:"api_key_name"`
}

// DataView is what the application collected.
type DataView struct {
	Fields    map[string]json.RawMessage `json:"fields"`
	People    []PersonView               `json:"people"`
	Entities  []EntityView               `json:"entities"`
	Ownership []OwnershipView            `json:"ownership"`
	Documents map[string]DocumentView    `json:"documents"`
	Meta      MetaView                   `json:"meta"`
}

// PersonView is a director, UBO or shareholder.
type PersonView struct {
	ID          string                  `json:"id"`
	Source      Source                  `json:"source"`
	Roles       []PersonRole            `json:"roles"`
	FullName    string                  `json:"full_name"`
	FirstName   string                  `json:"first_name"`
	LastName    string                  `json:"last_name"`
	Email       string                  `json:"email,omitempty"`
	PhoneNumber string                  `json:"phone_number,omitempty"`
	DateOfBirth string                  `json:"date_of_birth,omitempty"`
	Nationality string                  `json:"nationality,omitempty"`
	HomeAddress *Address                `json:"home_address,omitempty"`
	Documents   map[string]DocumentView `json:"documents"`
}

// EntityView is a related legal entity.
type EntityView struct {
	ID        string                  `json:"id"`
	Source    Source                  `json:"source"`
	Name      string                  `json:"name"`
	Type      EntityType              `json:"type"`
	Country   string                  `json:"country,omitempty"`
	Documents map[string]DocumentView `json:"documents"`
}

// OwnershipView is one ownership relationship.
type OwnershipView struct {
	ID             string    `json:"id"`
	OwnerType      PartyType `json:"owner_type"`
	OwnerID        string    `json:"owner_id"`
	OwnedType      PartyType `json:"owned_type"`
	OwnedID        string    `json:"owned_id,omitempty"`
	Percentage     float64   `json:"percentage"`
	PercentageBand string    `json:"percentage_band,omitempty"`
	IsDirect       bool      `json:"is_direct"`
	IsNominee      bool      `json:"is_nominee"`
}

// DocumentView is a document of the company, a person or an entity.
type DocumentView struct {
	FileID             string         `json:"file_id"`
	FileName           string         `json:"file_name"`
	FileType           string         `json:"file_type"`
	UploadedAt         string         `json:"uploaded_at"`
	Status             DocumentStatus `json:"status"`
	AcceptanceReason   string         `json:"acceptance_reason,omitempty"`
	UserOverrideReason string         `json:"user_override_reason,omitempty"`
	OverriddenAt       *string        `json:"overridden_at,omitempty"`
	DownloadURL        string         `json:"download_url,omitempty"`
	// link, in a view with link holes, is what download_url signs when
	// the view is answered; zero when there is none.
	link UnsignedLink
}

// PendingLink is what d's download_url signs when the view is answered, in
// a view with link holes (ViewOptions.LinkHoles); zero otherwise.
func (d *DocumentView) PendingLink() UnsignedLink { return d.link }

// MetaView is the application's metadata.
type MetaView struct {
	PrimaryContact       *ContactView     `json:"primary_contact,omitempty"`
	RegistrySources      []RegistrySource `json:"registry_sources,omitempty"`
	WebsiteFavicon       string           `json:"website_favicon,omitempty"`
	WebExtractedIndustry string           `json:"web_extracted_industry,omitempty"`
}

// ContactView is the company's primary contact (meta).
type ContactView struct {
	Name  *string `json:"name"`
	Email string  `json:"email"`
	Role  string  `json:"role,omitempty"`
}

// RegistryDocumentView is a filing fetched from the company registry.
type RegistryDocumentView struct {
	ID           string         `json:"id"`
	Source       RegistrySource `json:"source"`
	DocumentType string         `json:"document_type"`
	FilingDate   *string        `json:"filing_date"`
	FetchedAt    *string        `json:"fetched_at"`
	DownloadURL  string         `json:"download_url,omitempty"`
	// link is as DocumentView's.
	link UnsignedLink
}

// PendingLink is as DocumentView's.
func (d *RegistryDocumentView) PendingLink() UnsignedLink { return d.link }

// ParticipantView is someone who completes the form (as
// get-application shows it).
type ParticipantView struct {
	Email string          `json:"email"`
	Name  *string         `json:"name"`
	Role  ParticipantRole `json:"role"`
	Link  string          `json:"link"`
}

// ViewOptions says what View leaves out.
type ViewOptions struct {
	// Links gives every document and registry document that has a file a
	// fresh signed download_url; without it none carries one.
	Links bool
	// WithoutSensitive leaves out every value of a field that the
	// application's form marks Sensitive: the field's key in data.fields and
	// in the documents maps, and for a person-scoped field the person member
	// it is stored in (webhook payloads never carry them). The name
	// members are always on the wire: a sensitive person_full_name leaves
	// them empty.
	WithoutSensitive bool
	// LinkHoles, with Links, signs no link: each view that would have a
	// download_url keeps what it signs instead (PendingLink), so that an
	// answer rendered once can be sent with links signed as it is sent.
	LinkHoles bool
}

// View renders app as the partner sees it. With WithoutSensitive the
// application's form must be known: when it is not, View fails rather than
// risk showing a sensitive value.
func (s *Service) View(app *Application, opts ViewOptions) (ApplicationView, error) {
	var sensitive []string
	var form *Form
	if opts.WithoutSensitive {
		var err error
		if form, err = s.formOf(app); err != nil {
			return ApplicationView{}, err
		}
		sensitive = form.sensitive
	}
	d := app.Data
	out := ApplicationView{
		ID:       app.ID,
		ConfigID: app.ConfigID,
		Status:   app.Status,
		Link:     s.ParticipantLink(app, app.Primary()),
		Data: DataView{
			Fields:    viewFields(d.Fields, sensitive),
			People:    make([]PersonView, 0, len(d.People)),
			Entities:  make([]EntityView, 0, len(d.Entities)),
			Ownership: make([]OwnershipView, 0, len(d.Ownership)),
			Documents: s.viewDocuments(d.Documents, opts, sensitive),
		},
		Participants: make([]ParticipantView, 0, len(app.Participants)),
		CreatedAt:    Timestamp(app.CreatedAt),
		UpdatedAt:    Timestamp(app.UpdatedAt),
		SubmittedAt:  OptionalTimestamp(app.SubmittedAt),
		CompletedAt:  OptionalTimestamp(app.CompletedAt),
		Decisions:    make([]DecisionView, len(app.Decisions)),
	}
	for i, dc := range app.Decisions {
		data := dc.Data
		if data == nil {
			data = json.RawMessage("null")
		}
		out.Decisions[i] = DecisionView{
			ID: dc.ID, Type: dc.Type, Timestamp: Timestamp(dc.Timestamp), RecordedAt: Timestamp(dc.RecordedAt),
			Data: data, APIKeyName: dc.APIKeyName,
		}
	}
	for _, p := range d.People {
		if len(sensitive) > 0 {
			p.Fields = nil // not shown, and shared with app: clearing below must not reach it
			for _, id := range sensitive {
				if f, _ := form.Field(id); f.PersonScoped {
					setPersonField(&p, id, nil)
				}
			}
		}
		out.Data.People = append(out.Data.People, PersonView{
			ID: p.ID, Source: p.Source, Roles: p.Roles, FullName: p.FullName, FirstName: p.FirstName,
			LastName: p.LastName, Email: p.Email, PhoneNumber: p.PhoneNumber, DateOfBirth: p.DateOfBirth,
			Nationality: p.Nationality, HomeAddress: p.HomeAddress, Documents: s.viewDocuments(p.Documents, opts, sensitive),
		})
	}
	for _, e := range d.Entities {
		out.Data.Entities = append(out.Data.Entities, EntityView{
			ID: e.ID, Source: e.Source, Name: e.Name, Type: e.Type, Country: e.Country, Documents: s.viewDocuments(e.Documents, opts, sensitive),
		})
	}
	for _, o := range d.Ownership {
		//lint:ignore S1016 the wire type is kept apart from the record on purpose (see ApplicationView)
		out.Data.Ownership = append(out.Data.Ownership, OwnershipView{
			ID: o.ID, OwnerType: o.OwnerType, OwnerID: o.OwnerID, OwnedType: o.OwnedType, OwnedID: o.OwnedID,
			Percentage: o.Percentage, PercentageBand: o.PercentageBand, IsDirect: o.IsDirect, IsNominee: o.IsNominee,
		})
	}
	if app.RegistryDocumentsStatus != "" {
		// The list stays empty until retrieval has completed,
		// even when some filings are already stored.
		docs := []RegistryDocumentView{}
		if app.RegistryDocumentsStatus != RegistryDocumentsPending {
			docs = make([]RegistryDocumentView, len(app.RegistryDocuments))
			for i, rd := range app.RegistryDocuments {
				docs[i] = RegistryDocumentView{
					ID: rd.ID, Source: rd.Source, DocumentType: rd.DocumentType,
					FilingDate: optionalString(rd.FilingDate), FetchedAt: OptionalTimestamp(rd.FetchedAt),
				}
				switch {
				case opts.Links && opts.LinkHoles:
					docs[i].link, _ = s.registryDocumentLink(&rd)
				case opts.Links:
					docs[i].DownloadURL = s.RegistryDocumentURL(rd)
				}
			}
		}
		out.RegistryDocuments = &docs
		out.RegistryDocumentsStatus = app.RegistryDocumentsStatus
	}
	m := d.Meta
	out.Data.Meta = MetaView{RegistrySources: m.RegistrySources, WebsiteFavicon: m.WebsiteFavicon, WebExtractedIndustry: m.WebExtractedIndustry}
	if m.PrimaryContact != nil {
		out.Data.Meta.PrimaryContact = &ContactView{Name: optionalString(m.PrimaryContact.Name), Email: m.PrimaryContact.Email, Role: m.PrimaryContact.Role}
	}
	for i := range app.Participants {
		p := &app.Participants[i]
		out.Participants = append(out.Participants, ParticipantView{
			Email: p.Email, Name: optionalString(p.Name), Role: p.Role, Link: s.ParticipantLink(app, p),
		})
	}
	return out, nil
}

// viewFields returns the field values to show: fields itself (never nil),
// or a copy without the sensitive ids when it has any of them.
func viewFields(fields map[string]json.RawMessage, sensitive []string) map[string]json.RawMessage {
	if fields == nil {
		return map[string]json.RawMessage{}
	}
	for _, id := range sensitive {
		if _, ok := fields[id]; ok {
			fields = maps.Clone(fields)
			for _, id := range sensitive {
				delete(fields, id)
			}
			break
		}
	}
	return fields
}

// viewDocuments renders the visible documents of the company, a person or
// an entity, leaving out those of the sensitive field ids; with
// opts.Links, each that has a file gets a fresh download_url (or, with
// opts.LinkHoles, what it signs).
func (s *Service) viewDocuments(docs map[string]Document, opts ViewOptions, sensitive []string) map[string]DocumentView {
	out := make(map[string]DocumentView, len(docs))
	for id, d := range docs {
		if !d.Visible() || slices.Contains(sensitive, id) {
			continue
		}
		dv := DocumentView{
			FileID:             d.FileID,
			FileName:           d.FileName,
			FileType:           d.FileType,
			UploadedAt:         Timestamp(d.UploadedAt),
			Status:             d.Status,
			AcceptanceReason:   d.AcceptanceReason,
			UserOverrideReason: d.UserOverrideReason,
			OverriddenAt:       OptionalTimestamp(d.OverriddenAt),
		}
		switch {
		case opts.Links && opts.LinkHoles:
			dv.link, _ = s.documentLink(&d, DocumentLinkTTL)
		case opts.Links:
			dv.DownloadURL = s.DocumentURL(&d, DocumentLinkTTL)
		}
		out[id] = dv
	}
	return out
}

// optionalString returns nil (JSON null) for "", else a pointer to s.
func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
