package notify

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	"onboard/onboarding"
)

// Email is one plain-text email as the transports send it.
type Email struct {
	To      string // address only
	ToName  string // display name; may be empty
	Subject string
	Text    string // plain-text body
	// Link is the URL the message carries, logged by the sandbox outbox so
	// that an operator can follow it without opening the file.
	Link string
	// Secret is the one-time secret the message carries (a verification
	// code), wherever it appears: never logged (Summary).
	Secret string
}

// Summary is what a log may say of e: the recipient's address and the
// subject with any Secret masked. Never the body, the secret, nor the
// link, whose slug is a credential (the message's file holds it).
func (e Email) Summary() (to, subject string) {
	subject = e.Subject
	if e.Secret != "" {
		subject = strings.ReplaceAll(subject, e.Secret, "[code]")
	}
	return e.To, subject
}

// Render writes the words of a message onboarding asks for.
func Render(m onboarding.Message) (Email, error) {
	to := m.Recipient()
	e := Email{To: to.Email, ToName: to.Name}
	var b strings.Builder
	switch m := m.(type) {
	case onboarding.Invite:
		b.WriteString(greeting(to.Name) + "\n\n")
		if m.Company != "" {
			fmt.Fprintf(&b, "%s has asked you to complete the onboarding form for %s.\n\n", m.OrgName, m.Company)
		} else {
			fmt.Fprintf(&b, "%s has asked you to complete an onboarding form for your company.\n\n", m.OrgName)
		}
		fmt.Fprintf(&b, "Open this link to start:\n%s\n\n", m.Link)
		b.WriteString("You will be asked to confirm your email address first. You can save your progress and come back to the form at any time.\n\n")
		b.WriteString("If you were not expecting this email, you can ignore it.\n")
		e.Subject, e.Link = m.OrgName+": complete your company onboarding", m.Link
	case onboarding.RFIInvite:
		b.WriteString(greeting(to.Name) + "\n\n")
		fmt.Fprintf(&b, "%s has asked you for documents about %s:\n\n", m.OrgName, m.Company)
		for _, d := range m.Documents {
			fmt.Fprintf(&b, "  - %s\n", d)
		}
		fmt.Fprintf(&b, "\nOpen this link to upload them:\n%s\n\n", m.Link)
		fmt.Fprintf(&b, "The link works until %s. You will be asked to confirm your email address first.\n\n", m.ExpiresAt.UTC().Format("2 January 2006, 15:04 UTC"))
		b.WriteString("If you were not expecting this email, you can ignore it.\n")
		e.Subject, e.Link = m.OrgName+": documents requested for "+m.Company, m.Link
	case onboarding.CollaboratorInvite:
		company := m.Company
		if company == "" {
			company = "their company"
		}
		fmt.Fprintf(&b, "%s\n\n%s has asked you to help complete the %s onboarding form for %s.\n\n", greeting(to.Name), m.Inviter, m.OrgName, company)
		fmt.Fprintf(&b, "Open this link to start:\n%s\n\n", m.Link)
		b.WriteString("You will be asked to confirm your email address first. The link is yours alone: please do not forward it.\n\n")
		b.WriteString("If you were not expecting this email, you can ignore it.\n")
		e.Subject, e.Link = m.OrgName+": help complete your company onboarding", m.Link
	case onboarding.VerificationCode:
		fmt.Fprintf(&b, "Your code to open the %s onboarding form is:\n\n    %s\n\n", m.OrgName, m.Code)
		fmt.Fprintf(&b, "Enter it on the page where you asked for it. It expires in %d minutes.\n\n", int(m.ValidFor.Minutes()))
		b.WriteString("If you did not ask for a code, you can ignore this email: nobody can open the form without it.\n")
		e.Subject, e.Secret = m.Code+" is your "+m.OrgName+" verification code", m.Code
	case onboarding.SubmissionReceipt:
		company := m.Company
		if company == "" {
			company = "your company"
		}
		b.WriteString(greeting(to.Name) + "\n\n")
		fmt.Fprintf(&b, "The onboarding application for %s was sent to %s on %s.\n\n", company, m.OrgName, m.SubmittedAt.UTC().Format("2 January 2006"))
		fmt.Fprintf(&b, "Your reference is %s.\n\n", m.Reference)
		b.WriteString("What happens next\n\n")
		fmt.Fprintf(&b, "%s will check the answers and documents. They will contact you if they need anything else, and tell you when they have made a decision. Quote your reference if you contact them.\n\n", m.OrgName)
		b.WriteString("The answers can no longer be changed. If you were not expecting this email, you can ignore it.\n")
		e.Subject = m.OrgName + ": application sent (reference " + m.Reference + ")"
	default:
		return Email{}, fmt.Errorf("notify: no text for a %T", m)
	}
	e.Text = b.String()
	return e, nil
}

// greeting opens a message to name.
func greeting(name string) string {
	if name == "" {
		return "Hello,"
	}
	return "Hello " + name + ","
}

// send writes the words of m and hands them to deliver, a transport;
// its failure comes back as a SendError.
func send(ctx context.Context, m onboarding.Message, deliver func(context.Context, Email) error) error {
	e, err := Render(m)
	if err == nil {
		err = deliver(ctx, e)
	}
	if err != nil {
		return sendFailure(err)
	}
	return nil
}

// sendFailure wraps a transport's failure with the reason the activity log
// shows: never the mail server's reply text, which often quotes the
// recipient's address (the operator's log has it).
func sendFailure(err error) error {
	reason := "the mail transport failed"
	var reply *textproto.Error
	switch {
	case errors.As(err, &reply):
		reason = fmt.Sprintf("the mail server refused the message (SMTP %d)", reply.Code)
	case errors.Is(err, context.DeadlineExceeded):
		reason = "the mail server did not answer in time"
	}
	return &onboarding.SendError{Reason: reason, Err: err}
}
