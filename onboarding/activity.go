package onboarding

import "time"

// Activity is one entry of an application's activity log.
type Activity struct {
	At     time.Time
	Action string // one of the Action constants
	Actor  Actor
	Fields []string // field ids a fields update set or cleared
	Detail string   // a short human note, such as why an invite failed
}

// Actor is who caused an activity.
type Actor struct {
	Type string // ActorAPIKey, ActorSystem
	ID   string // the API key's client id
	Name string // the API key's name
}

// Actor types.
const (
	ActorAPIKey = "api_key"
	ActorSystem = "system"
	// ActorParticipant is an applicant at the form: ID is the
	// participant's id, Name their email address.
	ActorParticipant = "participant"
)

// Actions recorded in the activity log.
const (
	ActionCreated       = "application.created"
	ActionInviteSent    = "invite.sent"
	ActionInviteFailed  = "invite.failed"
	ActionPreAuthIssued = "pre_auth.issued"
	ActionFieldsUpdated = "fields.updated"
	// ActionRegistryPartiesUnavailable: the company was verified, but its
	// officers and owners could not be fetched to pre-populate people.
	ActionRegistryPartiesUnavailable = "registry.parties_unavailable"

	// The applicant's form.
	ActionOpened           = "application.opened"
	ActionPreAuthUsed      = "pre_auth.used"
	ActionVerificationSent = "verification.sent"
	ActionVerified         = "participant.verified"
	ActionFormSaved        = "form.saved"
	ActionCompanySelected  = "company.selected"
	// ActionCompanyChanged: the applicant undid the company they chose, to
	// choose another; Detail is the number of the company undone.
	ActionCompanyChanged   = "company.changed"
	ActionPersonSaved      = "person.saved"
	ActionPersonRemoved    = "person.removed"
	ActionEntitySaved      = "entity.saved"
	ActionEntityRemoved    = "entity.removed"
	ActionOwnershipSaved   = "ownership.saved"
	ActionOwnershipRemoved = "ownership.removed"
	ActionDocumentUploaded = "document.uploaded"
	ActionDocumentRejected = "document.rejected"
	ActionDocumentRemoved  = "document.removed"
	ActionInvited          = "collaborator.invited"
	ActionUninvited        = "collaborator.removed"
	ActionSubmitted        = "application.submitted"
)

func keyActor(k *APIKey) Actor {
	return Actor{Type: ActorAPIKey, ID: k.ClientID, Name: k.Name}
}
