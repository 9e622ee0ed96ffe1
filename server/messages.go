package server

import "onboard/onboarding"

// The wire format of the API (docs/api.md). These types are separate from
// the domain's so that renaming a domain field can never change the API. The
// application itself is onboarding.ApplicationView, which application
// events share.

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
	listPage
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

// summaryDocument is a document item of list applications. The
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

// documentLinkResponse is the answer of get document.
type documentLinkResponse struct {
	URL      string `json:"url"`
	FileName string `json:"file_name"`
	FileType string `json:"file_type"`
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
