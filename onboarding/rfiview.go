package onboarding

import (
	"cmp"
	"slices"
	"time"
)

// RFIRequestView is an RFI request as GET /rfi-requests/{id} shows it
// (docs/api.md) and as its events carry it (without download_url).
type RFIRequestView struct {
	ID             string               `json:"id"`
	AgentID        string               `json:"agent_id"`
	Status         RFIStatus            `json:"status"`
	CompanyName    string               `json:"company_name"`
	RegisteredName *string              `json:"registered_name"`
	CompanyNumber  *string              `json:"company_number"`
	Country        string               `json:"country"`
	Link           string               `json:"link"`
	ExpiresAt      string               `json:"expires_at"`
	CreatedAt      string               `json:"created_at"`
	OpenedAt       *string              `json:"opened_at"`
	CompletedAt    *string              `json:"completed_at"`
	Participants   []RFIParticipantView `json:"participants"`
	Documents      []RFIDocumentView    `json:"documents"`
}

// RFIParticipantView is a participant of an RFI request.
type RFIParticipantView struct {
	ID    string          `json:"id"`
	Email string          `json:"email"`
	Name  string          `json:"name"`
	Role  ParticipantRole `json:"role"`
}

// RFIDocumentView is a document provided for an RFI request.
type RFIDocumentView struct {
	ID          string         `json:"id"`
	FieldID     string         `json:"field_id"`
	FileName    string         `json:"file_name"`
	FileType    string         `json:"file_type"`
	Status      DocumentStatus `json:"status"`
	UploadedAt  string         `json:"uploaded_at"`
	DownloadURL string         `json:"download_url,omitempty"`
}

// RFIView renders r as the partner sees it; with links, every document
// carries a download_url valid DocumentLinkTTL. Only accepted and forced
// documents are shown, in the agent's order.
func (s *Service) RFIView(r *RFIRequest, links bool) RFIRequestView {
	v := RFIRequestView{
		ID: r.ID, AgentID: r.AgentID, Status: r.Status, CompanyName: r.CompanyName,
		RegisteredName: optionalString(r.RegisteredName), CompanyNumber: optionalString(r.CompanyNumber),
		Country: r.Country, Link: s.RFILink(r, r.Primary()),
		ExpiresAt: Timestamp(r.ExpiresAt), CreatedAt: Timestamp(r.CreatedAt),
		OpenedAt: OptionalTimestamp(r.OpenedAt), CompletedAt: OptionalTimestamp(r.CompletedAt),
		Participants: make([]RFIParticipantView, 0, len(r.Participants)),
		Documents:    make([]RFIDocumentView, 0, len(r.Documents)),
	}
	for _, p := range r.Participants {
		v.Participants = append(v.Participants, RFIParticipantView{ID: p.ID, Email: p.Email, Name: p.Name, Role: p.Role})
	}
	order := s.rfiDocumentOrder(r)
	for field, d := range r.Documents {
		if d.Status != DocumentAccepted && d.Status != DocumentForced {
			continue
		}
		dv := RFIDocumentView{ID: d.FileID, FieldID: field, FileName: d.FileName, FileType: d.FileType,
			Status: d.Status, UploadedAt: Timestamp(d.UploadedAt)}
		if links {
			dv.DownloadURL = s.DocumentURL(&d, DocumentLinkTTL)
		}
		v.Documents = append(v.Documents, dv)
	}
	slices.SortFunc(v.Documents, func(a, b RFIDocumentView) int {
		return cmp.Or(cmp.Compare(order(a.FieldID), order(b.FieldID)), cmp.Compare(a.FieldID, b.FieldID))
	})
	return v
}

// rfiDocumentOrder returns the position of a field id in r's agent's list
// (fields the agent no longer asks for sort last).
func (s *Service) rfiDocumentOrder(r *RFIRequest) func(string) int {
	var ids []string
	if a := s.rfiAgentOf(r); a != nil {
		ids = a.Documents
	}
	return func(id string) int {
		if i := slices.Index(ids, id); i >= 0 {
			return i
		}
		return len(ids)
	}
}

// rfiEvent builds an event of type t about r, whose data is r's view
// without download URLs.
func (s *Service) rfiEvent(t EventType, r *RFIRequest, at time.Time) (*Event, error) {
	return s.newEvent(t, r.OrgID, r.ID, at, s.RFIView(r, false))
}
