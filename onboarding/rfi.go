package onboarding

import (
	"context"
	"time"

	"github.com/oklog/ulid/v2"
)

// RFI requests (docs/api.md): a partner asks a company for
// documents outside an application. Each request has its own link, opened
// and verified like the application form's, where the company's contact
// uploads the documents its agent asks for.

// RFIStatus is where an RFI request is in its life.
type RFIStatus string

// RFI request statuses: active on creation, then completed by the
// applicant or expired by the sweep at ExpiresAt.
const (
	RFIActive    RFIStatus = "active"
	RFICompleted RFIStatus = "completed"
	RFIExpired   RFIStatus = "expired"
)

// ParseRFIStatus returns the RFI status named s, or the list's 400.
func ParseRFIStatus(s string) (RFIStatus, error) {
	switch st := RFIStatus(s); st {
	case RFIActive, RFICompleted, RFIExpired:
		return st, nil
	}
	return "", Errorf(KindInvalid, "Invalid status '%s'", ClipInput(s))
}

// RFIAgent is an organization's document-collection agent, declared in the
// configuration ([[organizations.rfi_agents]]): which documents its
// requests ask for and how long they stay open.
type RFIAgent struct {
	ID      string // UUID
	Name    string
	Default bool // used when a request names no agent
	Active  bool // only active agents take requests
	// Documents are the ids of the standard form's company document fields
	// the agent asks for, in the order the page lists them.
	Documents  []string
	ExpiryDays int
}

// RFIRequest is one request for documents: the record the Store keeps.
type RFIRequest struct {
	ID             string    // UUID
	Seq            ulid.ULID // creation order, the key of the listing indexes
	OrgID          string
	AgentID        string
	Status         RFIStatus
	CompanyName    string // as the partner gave it
	RegisteredName string // the registry's name (GB); empty otherwise
	CompanyNumber  string // normalised by the registry for GB; empty when not given
	Country        string
	Contact        Contact
	// Participants are the people who may open the request's page; the
	// first (and today only) is the primary contact.
	Participants []Participant
	// Documents maps a requested document's field id to the file provided.
	Documents   map[string]Document
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExpiresAt   time.Time
	OpenedAt    *time.Time
	CompletedAt *time.Time
	ExpiredAt   *time.Time
}

// participant returns the participant with id, or nil.
func (r *RFIRequest) participant(id string) *Participant {
	for i := range r.Participants {
		if r.Participants[i].ID == id {
			return &r.Participants[i]
		}
	}
	return nil
}

// Primary returns the primary participant, or nil when there is none.
func (r *RFIRequest) Primary() *Participant {
	for i := range r.Participants {
		if r.Participants[i].Role == RolePrimary {
			return &r.Participants[i]
		}
	}
	return nil
}

// RFIStore keeps RFI requests. Like the Store's applications, a change and
// the activity entries and events it returns commit in one transaction.
type RFIStore interface {
	// CreateRFIRequest stores a new request with its first activity and
	// events, in one transaction.
	CreateRFIRequest(ctx context.Context, r *RFIRequest, ch Changes) error
	// RFIRequest returns the request with id.
	RFIRequest(ctx context.Context, id string) (*RFIRequest, error)
	// RFIRequestBySlug returns the request one of whose participants has
	// the link slug.
	RFIRequestBySlug(ctx context.Context, slug string) (*RFIRequest, error)
	// UpdateRFIRequest applies change atomically and writes the activity
	// entries and events it returns in the same transaction. change may run
	// more than once and must depend only on its argument; its error aborts
	// the update and is returned unchanged.
	UpdateRFIRequest(ctx context.Context, id string, change func(*RFIRequest) (Changes, error)) (*RFIRequest, error)
	// ListRFIRequests returns up to q.Limit requests newest first, and
	// whether more follow.
	ListRFIRequests(ctx context.Context, q RFIListQuery) ([]*RFIRequest, bool, error)
	// ClaimRFIExpiries (of c, only Owner, Now, Lease and Limit count) leases up to c.Limit active requests whose
	// ExpiresAt is at or before c.Now, earliest first, to c.Owner until
	// c.Now+c.Lease, and returns their ids. A claimed request is not
	// returned again while its lease runs; once the lease lapses (its
	// claimer died) it is due again. A request that leaves active (expired
	// or completed) leaves the queue in the same transaction. next is when
	// the earliest request not returned falls due (zero when none waits).
	ClaimRFIExpiries(ctx context.Context, c Claim) (ids []string, next time.Time, err error)
}

// RFIListQuery selects a page of an organization's RFI requests.
type RFIListQuery struct {
	OrgID  string
	Status RFIStatus // empty: every status
	Before ulid.ULID // only requests created before this Seq; zero: from the newest
	Limit  int
}

// Errors of the RFI endpoints (docs/api.md).
var (
	ErrRFINotFound        = &Error{Kind: KindNotFound, Message: "RFI request not found"}
	ErrInvalidAgentID     = &Error{Kind: KindInvalid, Message: "Invalid agent_id"}
	ErrAgentNotActive     = &Error{Kind: KindInvalid, Message: "RFI agent is not active"}
	ErrNoActiveAgent      = &Error{Kind: KindInvalid, Message: "No active RFI agent found for this organization"}
	ErrRFICountryRequired = &Error{Kind: KindInvalid, Message: "Missing required field: country"}
	ErrUKCompanyNumber    = &Error{Kind: KindInvalid, Message: "company_number is required for UK jurisdictions"}
)

// ErrInvalidRFICountry is the 400 for a country that is not an ISO 3166-1
// alpha-2 code (in either case).
func ErrInvalidRFICountry(country string) *Error {
	return Errorf(KindInvalid, "Invalid country '%s'", country)
}

// agent returns the agent with id of org, or nil.
func (o *Organization) agent(id string) *RFIAgent {
	for _, a := range o.RFIAgents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// defaultAgent returns org's default agent when it is active, or nil.
func (o *Organization) defaultAgent() *RFIAgent {
	for _, a := range o.RFIAgents {
		if a.Default && a.Active {
			return a
		}
	}
	return nil
}

// rfiAgentOf returns the agent of r; nil when the configuration no longer
// declares it.
func (s *Service) rfiAgentOf(r *RFIRequest) *RFIAgent {
	if org := s.orgs[r.OrgID]; org != nil {
		return org.agent(r.AgentID)
	}
	return nil
}

// RFIDocumentFields returns the document fields r asks for, in the agent's
// order: company document fields of the standard form.
func (s *Service) RFIDocumentFields(r *RFIRequest) []*Field {
	a := s.rfiAgentOf(r)
	if a == nil {
		return nil
	}
	out := make([]*Field, 0, len(a.Documents))
	for _, id := range a.Documents {
		if f, ok := rfiDocumentField(s.rfiForm, id); ok {
			out = append(out, f)
		}
	}
	return out
}

// rfiDocumentField returns form's company document field id: the kinds of
// document an RFI agent may ask for are those of the standard form.
func rfiDocumentField(form *Form, id string) (*Field, bool) {
	f, ok := form.Field(id)
	if !ok || f.Type != TypeDocument || f.PersonScoped {
		return nil, false
	}
	return f, true
}

// RFIDocumentKinds lists the ids an RFI agent's documents may name (the
// configuration checks agents against it).
func RFIDocumentKinds() []string {
	var out []string
	for _, f := range StandardForm().Fields() {
		if f.Type == TypeDocument && !f.PersonScoped {
			out = append(out, f.ID)
		}
	}
	return out
}
