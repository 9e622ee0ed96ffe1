package onboarding

import (
	"context"
	"time"
)

// Mailer sends the emails onboarding asks for. The notify package
// implements it with SMTP and with the sandbox outbox, and writes each
// message's words.
type Mailer interface {
	// Send delivers m. A nil error means the transport accepted the
	// message. A transport that can say why it failed returns a *SendError.
	Send(ctx context.Context, m Message) error
}

// Message is an email onboarding asks for: an Invite, an RFIInvite, a
// CollaboratorInvite or a VerificationCode.
type Message interface {
	// Recipient is who the message goes to.
	Recipient() Recipient
	message()
}

// Recipient is the person an email goes to.
type Recipient struct {
	Email string // address only
	Name  string // display name; may be empty
}

// Invite asks an application's primary contact to complete the form.
type Invite struct {
	To      Recipient
	OrgName string
	Company string // the company's name; empty while it is not known
	Link    string
}

// CollaboratorInvite asks a colleague of the applicant to help complete the
// form, on a link of their own.
type CollaboratorInvite struct {
	To      Recipient
	OrgName string
	Inviter string // the inviting participant's name, or address without one
	Company string // the company's name; empty while it is not known
	Link    string
}

// VerificationCode carries the code that confirms an applicant's email
// address before the form opens.
type VerificationCode struct {
	To       Recipient
	OrgName  string
	Code     string
	ValidFor time.Duration
}

// RFIInvite asks a company's contact for documents through an RFI
// request's link (docs/api.md).
type RFIInvite struct {
	To        Recipient
	OrgName   string
	Company   string
	Documents []string // the requested documents' labels, in the page's order
	Link      string
	ExpiresAt time.Time
}

// SubmissionReceipt confirms to a participant that the application was
// sent, with its reference and what happens next.
type SubmissionReceipt struct {
	To          Recipient
	OrgName     string
	Company     string // the company's name; empty when it is not known
	Reference   string // the application's Reference
	SubmittedAt time.Time
}

// Recipient is who the receipt goes to.
func (m SubmissionReceipt) Recipient() Recipient { return m.To }

// Recipient is who the invite goes to.
func (m Invite) Recipient() Recipient { return m.To }

// Recipient is who the request goes to.
func (m RFIInvite) Recipient() Recipient { return m.To }

// Recipient is who the invite goes to.
func (m CollaboratorInvite) Recipient() Recipient { return m.To }

// Recipient is who the code goes to.
func (m VerificationCode) Recipient() Recipient { return m.To }

func (Invite) message()             {}
func (RFIInvite) message()          {}
func (CollaboratorInvite) message() {}
func (VerificationCode) message()   {}
func (SubmissionReceipt) message()  {}

// SendError is a failure a Mailer can explain. Reason says why in words fit
// for the activity log: no address and no text of the mail server's reply,
// which often quotes the recipient. Err is the cause, for the operator's log.
type SendError struct {
	Reason string
	Err    error
}

// Error returns the reason and the cause.
func (e *SendError) Error() string { return e.Reason + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *SendError) Unwrap() error { return e.Err }
