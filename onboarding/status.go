package onboarding

// Status is an application's place in its lifecycle (docs/api.md).
type Status string

// The application statuses.
const (
	StatusCreated    Status = "created"
	StatusSent       Status = "sent"
	StatusInProgress Status = "in_progress"
	StatusSubmitted  Status = "submitted"
	StatusReview     Status = "review"
	StatusApproved   Status = "approved"
	StatusRejected   Status = "rejected"
)

// Statuses returns every status in lifecycle order.
func Statuses() []Status {
	return []Status{StatusCreated, StatusSent, StatusInProgress, StatusSubmitted, StatusReview, StatusApproved, StatusRejected}
}

// ParseStatus returns the Status named s, or ErrInvalidStatus.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses() {
		if string(st) == s {
			return st, nil
		}
	}
	return "", ErrInvalidStatus(s)
}

// Writable reports whether the partner may still PATCH fields.
func (s Status) Writable() bool {
	return s == StatusCreated || s == StatusSent || s == StatusInProgress
}

// Terminal reports whether the application is closed for good.
func (s Status) Terminal() bool {
	return s == StatusApproved || s == StatusRejected
}
