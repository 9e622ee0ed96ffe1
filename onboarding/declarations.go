package onboarding

import (
	"context"
	"strings"
)

// Declarations are the form's confirmation fields: the attestations the
// primary contact makes at the very end, after checking every answer, as
// they send the application (GOV.UK's "Check your answers" pattern). They
// are recorded and the application submitted in one transaction.

// Asked reports whether declaration f is asked of this application's
// applicants: a terms declaration only when the organization publishes
// terms (a terms_url).
func (v *Visitor) Asked(f *Field) bool {
	return !f.Terms || v.Org.TermsURL != ""
}

// Declarations are the declarations asked of this application's primary
// contact, in form order.
func (v *Visitor) Declarations() []*Field {
	var out []*Field
	for _, st := range v.Form().Stages() {
		for _, f := range st.Fields {
			if f.Confirmation && v.Asked(f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// ErrDeclarationNotMade is the reason given for a required declaration
// the applicant did not tick.
const ErrDeclarationNotMade = "must be ticked to send the application"

// AcceptAndSubmit records the declarations the primary contact ticked
// (accepted holds the ids of the ticked ones) and submits the
// application, in one transaction: an unticked required declaration
// (ErrInvalidFieldValues naming it with ErrDeclarationNotMade) or anything
// else missing (ErrIncomplete) stores nothing. Declarations are stored as
// true, like the confirmation stage's save did, so that the partner reads
// them in the application's data.
func (s *Service) AcceptAndSubmit(ctx context.Context, v *Visitor, accepted map[string]bool) error {
	if err := editable(v); err != nil {
		return err
	}
	if !v.Primary() {
		return ErrPrimaryOnly
	}
	// What is missing comes first: the declarations are the last step.
	var open []Missing
	for _, m := range v.Missing() {
		if f, ok := v.Form().Field(m.FieldID); !ok || !f.Confirmation {
			open = append(open, m)
		}
	}
	if len(open) > 0 {
		return ErrIncomplete(open)
	}
	var problems Problems
	var ticked []string
	for _, f := range v.Declarations() {
		switch {
		case accepted[f.ID]:
			ticked = append(ticked, f.ID)
		case f.Required:
			problems.Add(f.ID, Problem{Code: ProblemNotTicked})
		}
	}
	if err := problems.FieldErr(); err != nil {
		return err
	}
	return s.submit(ctx, v, ticked)
}

// sendReceipts emails every participant who has proven their address,
// and the primary contact, that the application was sent. It runs once,
// after the one transition to submitted; a failed send is logged and
// never undoes the submission.
func (s *Service) sendReceipts(ctx context.Context, v *Visitor) {
	if s.mailer == nil || v.App.SubmittedAt == nil {
		return
	}
	for _, p := range v.App.Participants {
		if !p.Verified && p.Role != RolePrimary {
			continue
		}
		msg := SubmissionReceipt{To: Recipient{Email: p.Email, Name: p.Name}, OrgName: v.OrgName(), Company: v.App.CompanyName(),
			Reference: Reference(v.App.ID), SubmittedAt: *v.App.SubmittedAt}
		if err := s.mailer.Send(context.WithoutCancel(ctx), msg); err != nil {
			s.log.Warn("submission receipt email failed", "application_id", v.App.ID, "err", err)
		}
	}
}

// Reference is the short reference an applicant quotes for application
// id: the first eight hexadecimal digits of its id, upper case, in two
// groups ("3F1C-2A4E"). The partner finds the application by the same
// prefix of its application_id.
func Reference(id string) string {
	hex := strings.ToUpper(strings.ReplaceAll(id, "-", ""))
	if len(hex) < 8 {
		return hex
	}
	return hex[:4] + "-" + hex[4:8]
}
