package onboarding

import "context"

// Mailer sends e-mail to applicants. The notify package implements it with
// SMTP and with the sandbox outbox.
type Mailer interface {
	// Send delivers m. A nil error means the transport accepted the message.
	Send(ctx context.Context, m Message) error
}

// Message is one plain-text e-mail.
type Message struct {
	To      string // address only
	ToName  string // display name; may be empty
	Subject string
	Text    string // plain-text body
	// Link is the URL the message carries, logged by the sandbox outbox so
	// that an operator can follow it without opening the file.
	Link string
}
