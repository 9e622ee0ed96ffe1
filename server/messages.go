package server

import (
	"encoding/json"
	"time"

	"onboard/onboarding"
)

// The wire format of the API (spec §2, §4). These types are separate from the
// domain's so that renaming a domain field can never change the API.

// timestampLayout is ISO 8601 in UTC with millisecond precision.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

func timestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

func optionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

type createApplicationRequest struct {
	PrimaryContact *struct {
		Email string `json:"email"`
		Name  string `json:"name"`
	} `json:"primary_contact"`
	Country       string `json:"country"`
	ConfigID      string `json:"config_id"`
	PreAuth       bool   `json:"pre_auth"`
	CompanyNumber string `json:"company_number"`
	CompanyName   string `json:"company_name"`
}

type createApplicationResponse struct {
	ApplicationID string               `json:"application_id"`
	Link          string               `json:"link"`
	Participants  []createdParticipant `json:"participants"`
	PreAuthCode   string               `json:"pre_auth_code,omitempty"`
	Warning       string               `json:"warning,omitempty"`
}

type createdParticipant struct {
	ID       string                     `json:"id"`
	LinkSlug string                     `json:"link_slug"`
	Email    string                     `json:"email"`
	Role     onboarding.ParticipantRole `json:"role"`
}

type preAuthResponse struct {
	PreAuthCode     string `json:"pre_auth_code"`
	Link            string `json:"link"`
	ExpiresAt       string `json:"expires_at"`
	ParticipantID   string `json:"participant_id"`
	AlreadyVerified bool   `json:"already_verified"`
}

type listResponse struct {
	Applications []applicationSummary `json:"applications"`
	HasMore      bool                 `json:"has_more"`
	NextCursor   *string              `json:"next_cursor"`
}

type applicationSummary struct {
	ID             string            `json:"id"`
	ConfigID       string            `json:"config_id"`
	Status         onboarding.Status `json:"status"`
	CompanyName    *string           `json:"company_name"`
	PrimaryContact summaryContact    `json:"primary_contact"`
	Documents      []summaryDocument `json:"documents"`
	CreatedAt      string            `json:"created_at"`
	UpdatedAt      string            `json:"updated_at"`
	SubmittedAt    *string           `json:"submitted_at"`
}

type summaryContact struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
}

// summaryDocument is a document item of list applications (spec 2.5). The
// list is flat, so PersonID or EntityID says whose document it is; both are
// omitted for a company document.
type summaryDocument struct {
	ID                 string                    `json:"id"`
	FieldID            string                    `json:"field_id"`
	PersonID           string                    `json:"person_id,omitempty"`
	EntityID           string                    `json:"entity_id,omitempty"`
	FileName           string                    `json:"file_name"`
	Status             onboarding.DocumentStatus `json:"status"`
	UserOverrideReason string                    `json:"user_override_reason,omitempty"`
	DownloadURL        *string                   `json:"download_url"`
}

type applicationResponse struct {
	ID           string                `json:"id"`
	ConfigID     string                `json:"config_id"`
	Status       onboarding.Status     `json:"status"`
	Link         string                `json:"link,omitempty"`
	Data         dataResponse          `json:"data"`
	Participants []participantResponse `json:"participants"`
	// Present only for registry-eligible applications (spec 2.1).
	RegistryDocuments       *[]registryDocumentResponse        `json:"registry_documents,omitempty"`
	RegistryDocumentsStatus onboarding.RegistryDocumentsStatus `json:"registry_documents_status,omitempty"`
	CreatedAt               string                             `json:"created_at"`
	UpdatedAt               string                             `json:"updated_at"`
	SubmittedAt             *string                            `json:"submitted_at"`
	CompletedAt             *string                            `json:"completed_at"`
}

type dataResponse struct {
	Fields    map[string]json.RawMessage  `json:"fields"`
	People    []personResponse            `json:"people"`
	Entities  []entityResponse            `json:"entities"`
	Ownership []ownershipResponse         `json:"ownership"`
	Documents map[string]documentResponse `json:"documents"`
	Meta      metaResponse                `json:"meta"`
}

type personResponse struct {
	ID          string                      `json:"id"`
	Source      onboarding.Source           `json:"source"`
	Roles       []onboarding.PersonRole     `json:"roles"`
	FullName    string                      `json:"full_name"`
	FirstName   string                      `json:"first_name"`
	LastName    string                      `json:"last_name"`
	Email       string                      `json:"email,omitempty"`
	PhoneNumber string                      `json:"phone_number,omitempty"`
	DateOfBirth string                      `json:"date_of_birth,omitempty"`
	Nationality string                      `json:"nationality,omitempty"`
	HomeAddress *onboarding.Address         `json:"home_address,omitempty"`
	Documents   map[string]documentResponse `json:"documents"`
}

type entityResponse struct {
	ID        string                      `json:"id"`
	Source    onboarding.Source           `json:"source"`
	Name      string                      `json:"name"`
	Type      onboarding.EntityType       `json:"type"`
	Country   string                      `json:"country,omitempty"`
	Documents map[string]documentResponse `json:"documents"`
}

type ownershipResponse struct {
	ID             string               `json:"id"`
	OwnerType      onboarding.PartyType `json:"owner_type"`
	OwnerID        string               `json:"owner_id"`
	OwnedType      onboarding.PartyType `json:"owned_type"`
	OwnedID        string               `json:"owned_id,omitempty"`
	Percentage     float64              `json:"percentage"`
	PercentageBand string               `json:"percentage_band,omitempty"`
	IsDirect       bool                 `json:"is_direct"`
	IsNominee      bool                 `json:"is_nominee"`
}

type documentResponse struct {
	FileID             string                    `json:"file_id"`
	FileName           string                    `json:"file_name"`
	FileType           string                    `json:"file_type"`
	UploadedAt         string                    `json:"uploaded_at"`
	Status             onboarding.DocumentStatus `json:"status"`
	AcceptanceReason   string                    `json:"acceptance_reason,omitempty"`
	UserOverrideReason string                    `json:"user_override_reason,omitempty"`
	OverriddenAt       *string                   `json:"overridden_at,omitempty"`
	DownloadURL        string                    `json:"download_url,omitempty"`
}

// documentLinkResponse is the answer of get document (spec 4.7).
type documentLinkResponse struct {
	URL      string `json:"url"`
	FileName string `json:"file_name"`
	FileType string `json:"file_type"`
}

type metaResponse struct {
	PrimaryContact       *contactResponse            `json:"primary_contact,omitempty"`
	RegistrySources      []onboarding.RegistrySource `json:"registry_sources,omitempty"`
	WebsiteFavicon       string                      `json:"website_favicon,omitempty"`
	WebExtractedIndustry string                      `json:"web_extracted_industry,omitempty"`
}

type contactResponse struct {
	Name  *string `json:"name"`
	Email string  `json:"email"`
	Role  string  `json:"role,omitempty"`
}

type registryDocumentResponse struct {
	ID           string                    `json:"id"`
	Source       onboarding.RegistrySource `json:"source"`
	DocumentType string                    `json:"document_type"`
	FilingDate   *string                   `json:"filing_date"`
	FetchedAt    *string                   `json:"fetched_at"`
	DownloadURL  string                    `json:"download_url,omitempty"`
}

type participantResponse struct {
	Email string                     `json:"email"`
	Name  *string                    `json:"name"`
	Role  onboarding.ParticipantRole `json:"role"`
	Link  string                     `json:"link"`
}

type updateResponse struct {
	Success       bool     `json:"success"`
	ApplicationID string   `json:"application_id"`
	UpdatedFields []string `json:"updated_fields"`
}

type catalogEntry struct {
	ID          string               `json:"id"`
	Label       string               `json:"label"`
	Type        onboarding.FieldType `json:"type"`
	Category    string               `json:"category"`
	Patchable   bool                 `json:"patchable"`
	Required    bool                 `json:"required"`
	Description string               `json:"description,omitempty"`
	Sensitive   bool                 `json:"sensitive,omitempty"`
	Options     []onboarding.Option  `json:"options,omitempty"`
}
