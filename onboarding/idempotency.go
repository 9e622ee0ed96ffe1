package onboarding

import (
	"context"
	"errors"
	"time"
)

// IdempotencyTTL is how long a request's Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Idempotency is the Idempotency-Key of a request, as the HTTP layer
// hands it to a use-case. The use-case commits what the request did (an
// IdempotentOutcome) under the key in the transaction that does the work,
// so that a retry after a crash finds it even when the answer, saved
// after it was sent, was lost: it is answered from the outcome and the
// work is not done a second time.
type Idempotency struct {
	ClientID    string // the API key's client id: keys belong to it
	Key         string
	Fingerprint []byte    // of the request: a retry has the same
	At          time.Time // when the request arrived
	// Seal encrypts a secret of the answer that the store otherwise keeps
	// only as a hash (a pre-auth code), so that only a retry with the
	// same API key and Idempotency-Key can read it back.
	Seal func(secret []byte) ([]byte, error)
}

// IdempotentOutcome is what a request with an Idempotency-Key did, as the
// store keeps it under the key: ids, flags and sealed secrets, no
// personal data. Its JSON members Fingerprint and CreatedAt are those of
// the answer the HTTP layer saves under the same key afterwards, which
// replaces it.
type IdempotentOutcome struct {
	ClientID string `json:"-"` // whose key
	Key      string `json:"-"`

	Fingerprint []byte
	CreatedAt   time.Time
	// ID is the application or RFI request the request created or
	// changed.
	ID string
	// DecisionID is the decision a decision request recorded.
	DecisionID string `json:",omitempty"`
	// ApplicationStatus is the application's status the answer gave,
	// where it gives one that may have moved since (resend invite). (The
	// saved answer's Status is its HTTP status: an outcome has none.)
	ApplicationStatus Status `json:",omitempty"`
	// Mail is what became of the email the request sent.
	Mail MailOutcome `json:",omitempty"`
	// SealedCode is the pre-auth code the request issued, sealed with
	// Idempotency.Seal.
	SealedCode []byte `json:",omitempty"`
	// ExpiresAt is when that code expires.
	ExpiresAt *time.Time `json:",omitempty"`
	// AlreadyVerified is the participant's verification as the pre-auth
	// answer gave it.
	AlreadyVerified bool `json:",omitempty"`
}

// MailOutcome is what became of the email a request sent.
type MailOutcome string

// The outcomes of an email.
const (
	MailSent   MailOutcome = "sent"
	MailFailed MailOutcome = "failed"
	// MailUnknown: the work was committed before the email was handed to
	// the transport, and the email's outcome not yet: a crash in between
	// leaves it unknown, and the answer rebuilt from it carries the
	// warning that the email could not be sent.
	MailUnknown MailOutcome = "unknown"
)

// outcome is the outcome of the request i under way on the record id, or
// nil when the request has no Idempotency-Key.
func (i *Idempotency) outcome(id string) *IdempotentOutcome {
	if i == nil {
		return nil
	}
	return &IdempotentOutcome{ClientID: i.ClientID, Key: i.Key, Fingerprint: i.Fingerprint, CreatedAt: i.At, ID: id}
}

// seal seals code for the outcome of i; an empty code seals to nothing.
func (i *Idempotency) seal(code string) ([]byte, error) {
	if i == nil || code == "" {
		return nil, nil
	}
	if i.Seal == nil {
		return nil, errNoSeal
	}
	return i.Seal([]byte(code))
}

// errNoSeal is the cause of a request with an Idempotency-Key whose
// answer holds a secret and which came without a way to seal it.
var errNoSeal = errors.New("idempotency: a secret of the answer cannot be sealed")

// mailOutcome is the MailOutcome of a send that returned err.
func mailOutcome(err error) MailOutcome {
	if err != nil {
		return MailFailed
	}
	return MailSent
}

// appOutcome gives the outcome of the request i on an application, its
// id alone; nil without an Idempotency-Key.
func (i *Idempotency) appOutcome() func(*Application) *IdempotentOutcome {
	if i == nil {
		return nil
	}
	return func(a *Application) *IdempotentOutcome { return i.outcome(a.ID) }
}

// rfiOutcome gives the outcome of the request i on an RFI request, its id
// alone; nil without an Idempotency-Key.
func (i *Idempotency) rfiOutcome() func(*RFIRequest) *IdempotentOutcome {
	if i == nil {
		return nil
	}
	return func(r *RFIRequest) *IdempotentOutcome { return i.outcome(r.ID) }
}

// ReplayApplication returns, as it is now, the application a request with
// an Idempotency-Key changed (outcome o): the answer of a test helper,
// rebuilt.
func (s *Service) ReplayApplication(ctx context.Context, k *APIKey, o *IdempotentOutcome) (*Application, error) {
	return s.application(ctx, k, o.ID)
}

// ReplayRFIRequest returns, as it is now, the RFI request a request with
// an Idempotency-Key changed (outcome o): the answer of a test helper,
// rebuilt.
func (s *Service) ReplayRFIRequest(ctx context.Context, k *APIKey, o *IdempotentOutcome) (*RFIRequest, error) {
	return s.rfiRequest(ctx, k.OrgID, o.ID)
}
