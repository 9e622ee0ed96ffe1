package onboarding

import (
	"encoding/json"
	"time"

	"github.com/oklog/ulid/v2"
)

// Application is one company's onboarding submission: the record the Store
// keeps and every use-case reads and changes.
type Application struct {
	ID       string    // UUID
	Seq      ulid.ULID // creation order, the key of the listing indexes
	OrgID    string
	ConfigID string
	Country  string
	Status   Status
	Data     Data
	// Participants are the people who may open the form; the first is the primary.
	Participants []Participant
	CreatedAt    time.Time
	UpdatedAt    time.Time
	SubmittedAt  *time.Time
	CompletedAt  *time.Time
	// RegistryDocumentsStatus is empty for applications that are not
	// registry-eligible; for eligible ones it starts `pending`.
	RegistryDocumentsStatus RegistryDocumentsStatus
	RegistryDocuments       []RegistryDocument
	// Decisions are the provider's decisions, oldest first.
	Decisions []Decision
	// InviteResends are when the partner asked for the invite again within
	// the last day, oldest first (at most five a day).
	InviteResends []time.Time
	// CollaboratorInvites are when the primary participant invited a
	// collaborator within the last day, oldest first (at most
	// MaxCollaboratorInvites).
	CollaboratorInvites []time.Time `json:",omitempty"`
	// Visited are the form's stages the applicant has been through (saved
	// a stage page, or opened the people or documents page), in the order
	// first visited: a section is complete only once visited.
	Visited []string `json:",omitempty"`
	// RegistryNumber is the company number the registry verified at create;
	// registry documents are fetched for it, whatever company_number later
	// says. Empty when no registry checked the company.
	RegistryNumber string
	// CompanyChosen is set when the applicant chose the company on the
	// register (company selection, SelectCompany) rather than the partner
	// giving its number at create: only such a company may the applicant
	// change (ChangeCompany).
	CompanyChosen bool `json:",omitempty"`
}

// RegistryDocument is a filing fetched from the company registry.
type RegistryDocument struct {
	ID           string
	Ref          string // the registry's id of the filing (Filing.Ref)
	Source       RegistrySource
	DocumentType string
	FilingDate   string // YYYY-MM-DD, or empty when unknown
	FetchedAt    *time.Time
	BlobID       string
	FileName     string // offered to downloads
}

// registryDocumentsCountry is the country whose companies get registry
// documents: filings come from Companies House.
const registryDocumentsCountry = "GB"

// RegistryEligible reports whether an application gets registry documents:
// a UK company with a company number, on a configuration with registry
// documents enabled.
func RegistryEligible(cfg *Configuration, country, number string) bool {
	return cfg.RegistryDocuments && country == registryDocumentsCountry && number != ""
}

// Primary returns the primary participant, or nil when there is none.
func (a *Application) Primary() *Participant {
	for i := range a.Participants {
		if a.Participants[i].Role == RolePrimary {
			return &a.Participants[i]
		}
	}
	return nil
}

// CompanyName returns the company_name field as a string, or "" when unset.
func (a *Application) CompanyName() string {
	var s string
	if raw, ok := a.Data.Fields["company_name"]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// Participant is someone who completes the form through their own link.
type Participant struct {
	ID       string // UUID
	LinkSlug string // random, URL-safe; the path of the participant's link
	Email    string
	Name     string
	Role     ParticipantRole
	// Verified is true once the participant has proven control of Email
	// with an email verification code (a pre-auth code skips the check
	// but proves nothing about the address).
	Verified bool
	// PreAuthHash is the SHA-256 of the participant's current pre-auth code;
	// empty when none was issued. Issuing a new code replaces it.
	PreAuthHash    []byte
	PreAuthExpires time.Time
	// VerifyCodeHash is the SHA-256 of the email verification code sent
	// last, bound to the participant; empty when none is outstanding.
	VerifyCodeHash    []byte
	VerifyCodeExpires time.Time
	VerifyAttempts    int       // wrong codes entered against VerifyCodeHash
	VerifyCodeSentAt  time.Time // when the last code was sent, to pace resends
	// VerifyWindowStart and VerifyCodesSent count the codes sent in the
	// current day-long window, so that a guesser cannot try new codes
	// without end.
	VerifyWindowStart time.Time
	VerifyCodesSent   int
	// SessionEpoch is bumped to end every form session of the participant
	// (removal, or a new verification).
	SessionEpoch int
	OpenedAt     *time.Time // first authenticated open of the form
	InvitedBy    string     // participant id of the inviter; empty for the primary
}

// Data is what the application collects.
type Data struct {
	// Fields maps a field id to its validated value as compact JSON.
	Fields    map[string]json.RawMessage
	People    []Person
	Entities  []Entity
	Ownership []Ownership
	// Documents maps a company-scoped document field id to its document.
	Documents map[string]Document
	Meta      Meta
}

// Person is a director, UBO or shareholder.
type Person struct {
	ID          string
	Source      Source
	Roles       []PersonRole
	FullName    string
	FirstName   string
	LastName    string
	Email       string
	PhoneNumber string
	DateOfBirth string // YYYY-MM-DD, or YYYY-MM when the registry gives only month and year
	Nationality string
	HomeAddress *Address
	// Fields holds the values of a form's other person-scoped fields
	// (a form file may define more than the standard six).
	Fields    map[string]json.RawMessage `json:",omitempty"`
	Documents map[string]Document
}

// Entity is a related legal entity.
type Entity struct {
	ID        string
	Source    Source
	Name      string
	Type      EntityType
	Country   string
	Documents map[string]Document
}

// Ownership is one ownership relationship.
type Ownership struct {
	ID             string
	OwnerType      PartyType // OwnerPerson or OwnerEntity
	OwnerID        string
	OwnedType      PartyType // OwnedTarget or OwnedEntity
	OwnedID        string
	Percentage     float64
	PercentageBand string // registry band such as "50-75"; empty when stated exactly
	IsDirect       bool
	IsNominee      bool
}

// Document is an uploaded file or an operator's override.
type Document struct {
	FileID             string
	FileName           string
	FileType           string
	UploadedAt         time.Time
	Status             DocumentStatus
	AcceptanceReason   string
	UserOverrideReason string
	OverriddenAt       *time.Time
	BlobID             string // empty for a skipped requirement
	Size               int64
	// RejectReason tells the applicant why a rejected upload failed; the
	// API never shows rejected documents.
	RejectReason string
}

// Acceptance reasons (docs/applicant-form.md).
const (
	ReasonValidationPassed      = "validation_passed"
	ReasonNoValidatorConfigured = "no_validator_configured"
	ReasonBaselinePassed        = "baseline_passed"
)

// Visible reports whether d may appear in API payloads.
func (d *Document) Visible() bool {
	return d.Status == DocumentAccepted || d.Status == DocumentForced || d.Status == DocumentSkipped
}

// Satisfied reports whether d fulfils its requirement for submission.
func (d *Document) Satisfied() bool { return d.Visible() }

// Meta is the application's metadata.
type Meta struct {
	PrimaryContact       *Contact
	RegistrySources      []RegistrySource
	WebsiteFavicon       string
	WebExtractedIndustry string
}

// Contact is the company's primary contact as the partner gave it.
type Contact struct {
	Name  string
	Email string
	Role  string
}
