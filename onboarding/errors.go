package onboarding

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind classifies an Error for the transport: each kind maps to exactly one
// HTTP status in the server package.
type Kind int

// The kinds of error the domain returns.
const (
	KindInternal      Kind = iota // an unexpected failure; details only in logs (500)
	KindInvalid                   // the request is wrong and must be corrected (400)
	KindUnauthorized              // missing, unknown or insufficient credentials (401)
	KindForbidden                 // authenticated, but the resource is not the caller's (403)
	KindNotFound                  // the resource does not exist for this caller (404)
	KindConflict                  // the resource is in a state that forbids the operation (409)
	KindUnprocessable             // well-formed, but contradicts an earlier request (422)
	KindTooLarge                  // a file is over the size limit (413)
	KindRateLimited               // asked too often; retry later (429)
	KindUpstream                  // a dependency answered unexpectedly (502)
	KindUnavailable               // a dependency is down or throttling; retry later (503)
)

// Error is a failure the API reports to its caller: Message is the exact
// text the API documents (docs/api.md), and the optional members are
// rendered beside it.
type Error struct {
	Kind    Kind
	Message string
	// Details carries per-field or per-key explanations (PATCH errors).
	Details map[string]string
	// Fields lists the keys of Details in the order they were found (the
	// order of the request or form), when that order is known.
	Fields []string
	// Problems holds, for a validation error of field values, the typed
	// problem behind each of Details (see Error.Problem), for a reader that
	// words problems itself.
	Problems map[string]Problem
	// SuggestedName is the registered company name on a name mismatch.
	SuggestedName string
	// Retryable is true when the same request may succeed later.
	Retryable bool
	// RetryAfter, when set, is how long until it may (a 429's
	// Retry-After).
	RetryAfter time.Duration
	// Items lists what a refused submission lacks, for the applicant.
	Items []string
	// Required, Missing and Example explain the RFI missing-fields error
	// (docs/api.md): every required member, the ones missing, and a complete
	// valid body.
	Required []string
	Missing  []string
	Example  any
}

// Error returns the message the API sends.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is an *Error with the same kind and message, so
// that errors.Is works against the sentinels below.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Message == e.Message
}

// Errorf builds an Error of the given kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error in err's chain, or nil when there is none.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// ErrNotFound is returned by a Store when a record does not exist. The
// Service translates it into the resource's own not-found error.
var ErrNotFound = errors.New("record not found")

// Sentinel errors with the API's exact messages (docs/api.md).
var (
	ErrMissingAPIKey         = &Error{Kind: KindUnauthorized, Message: "Missing API key"}
	ErrInvalidAPIKey         = &Error{Kind: KindUnauthorized, Message: "Invalid API key"}
	ErrApplicationNotFound   = &Error{Kind: KindNotFound, Message: "Application not found"}
	ErrInvalidJSON           = &Error{Kind: KindInvalid, Message: "Invalid JSON body"}
	ErrInvalidCursor         = &Error{Kind: KindInvalid, Message: "Invalid cursor"}
	ErrInvalidLimit          = &Error{Kind: KindInvalid, Message: "limit must be between 1 and 100"}
	ErrEmailRequired         = &Error{Kind: KindInvalid, Message: "primary_contact.email is required"}
	ErrEmailInvalid          = &Error{Kind: KindInvalid, Message: "Invalid email address for primary_contact.email"}
	ErrInvalidConfigID       = &Error{Kind: KindInvalid, Message: "Invalid config_id"}
	ErrConfigForbidden       = &Error{Kind: KindForbidden, Message: "Config not available for this organization"}
	ErrNoActiveConfig        = &Error{Kind: KindInvalid, Message: "No active configuration found for this organization"}
	ErrCompanyNumberRequired = &Error{Kind: KindInvalid, Message: "company_number is required"}
	ErrCountryRequired       = &Error{Kind: KindInvalid, Message: "country is required for this application configuration"}
	ErrCompanyNameRequired   = &Error{Kind: KindInvalid, Message: "company_name is required when company_number is provided"}
	ErrRegistryFailed        = &Error{Kind: KindUpstream, Message: "Registry validation failed", Retryable: true}
	ErrTerminalPreAuth       = &Error{Kind: KindConflict, Message: "Application is in a terminal status and pre-auth is no longer applicable"}
	ErrNoPrimaryParticipant  = &Error{Kind: KindInvalid, Message: "No primary participant found for this application"}
	ErrPatchBody             = &Error{Kind: KindInvalid, Message: `Invalid request body. Only "fields" can be updated via this endpoint.`}
	// ErrBodyUnreadable is the 400 for a request body that ended before
	// its Content-Length, stopped arriving, or was cut off by the client
	// going away.
	ErrBodyUnreadable = &Error{Kind: KindInvalid, Message: "The request body could not be read in full"}
)

// ErrPatchBodyDetails is ErrPatchBody with the offending top-level keys explained.
func ErrPatchBodyDetails(details map[string]string) *Error {
	e := *ErrPatchBody
	e.Details = details
	return &e
}

// maxQuotedInput is how many characters of a caller's input an error
// message quotes; the rest becomes an ellipsis.
const maxQuotedInput = 100

// ClipInput is s as an error message may quote it: whole when it is at
// most maxQuotedInput characters, else its first maxQuotedInput characters
// and "…". Every message that echoes a caller's value goes through it, so
// that a 500 KB company number does not come back whole.
func ClipInput(s string) string {
	if utf8.RuneCountInString(s) <= maxQuotedInput {
		return s
	}
	r := []rune(s)
	return string(r[:maxQuotedInput]) + "…"
}

// maxListedIDs bounds how many ids an error message lists, so that a body
// of a hundred thousand bogus ids cannot make a megabyte-long answer.
const maxListedIDs = 50

// ErrUnknownFields is the 400 for PATCH keys that are not patchable fields.
func ErrUnknownFields(ids []string) *Error {
	shown := make([]string, min(len(ids), maxListedIDs))
	for i := range shown {
		shown[i] = ClipInput(ids[i])
	}
	list := strings.Join(shown, ", ")
	if len(ids) > maxListedIDs {
		list = fmt.Sprintf("%s and %d more", list, len(ids)-maxListedIDs)
	}
	return Errorf(KindInvalid, "Unknown or non-writable field ids: %s", list)
}

// ErrInvalidFieldValues is the 400 naming each failing field, in request order,
// with one explanation per field in Details.
func ErrInvalidFieldValues(ids []string, reasons map[string]string) *Error {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id + ": " + reasons[id]
	}
	e := Errorf(KindInvalid, "Invalid field values — %s", strings.Join(parts, "; "))
	e.Details, e.Fields = reasons, ids
	return e
}

// ErrCountryNotSupported is the 400 for a country outside the configuration's list.
func ErrCountryNotSupported(country string) *Error {
	return Errorf(KindInvalid, "Country '%s' is not supported by this application configuration", ClipInput(country))
}

// ErrSearchNotAvailable is the 400 for company selection in a country with no registry search.
func ErrSearchNotAvailable(country string) *Error {
	return Errorf(KindInvalid, "Company search is not available for country '%s'", ClipInput(country))
}

// ErrInvalidStatus is the 400 for an unknown status filter on list.
func ErrInvalidStatus(value string) *Error {
	return Errorf(KindInvalid, "Invalid status '%s'", ClipInput(value))
}

// ErrMissingScopes is the 401 for a key that lacks the scopes an endpoint needs.
func ErrMissingScopes(scopes ...Scope) *Error {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return Errorf(KindUnauthorized, "API key missing required scopes: %s", strings.Join(names, ", "))
}

// ErrCannotUpdate is the 400 for a PATCH outside the writable statuses.
func ErrCannotUpdate(status Status) *Error {
	return Errorf(KindInvalid, "Cannot update application in %s status", status)
}

// Registry rejections, in the order they are checked.

// ErrCompanyNumberMalformed is the 400 for a number that cannot exist in the registry.
func ErrCompanyNumberMalformed(number, registry string) *Error {
	return Errorf(KindInvalid, "Invalid company number '%s' for %s", ClipInput(number), registry)
}

// ErrCompanyNotFound is the 400 for a well-formed number the registry does not know.
func ErrCompanyNotFound(number, registry string) *Error {
	return Errorf(KindInvalid, "Company %s was not found in the %s", ClipInput(number), registry)
}

// ErrCompanyNotActive is the 400 for a company that is not trading.
func ErrCompanyNotActive(number, status string) *Error {
	return Errorf(KindInvalid, "Company %s is not active (status: %s)", ClipInput(number), status)
}

// ErrCompanyNameMismatch is the 400 for a name that is not the registered one.
func ErrCompanyNameMismatch(given, number, registered string) *Error {
	e := Errorf(KindInvalid, "Company name '%s' does not match the registered name for %s. Did you mean '%s'?", ClipInput(given), ClipInput(number), registered)
	e.SuggestedName = registered
	return e
}

// ErrRegistryUnavailable is the 503 for a registry that is down or throttling.
func ErrRegistryUnavailable(registry string) *Error {
	return &Error{Kind: KindUnavailable, Retryable: true,
		Message: fmt.Sprintf("The %s is temporarily unavailable; retry in a few minutes", registry)}
}

// ErrInsufficientStorage is the 503 of a write refused because the disk of
// the data directory is (nearly) full: reads still work, and the write may
// succeed once space is freed.
var ErrInsufficientStorage = &Error{Kind: KindUnavailable, Retryable: true,
	Message: "Insufficient storage: the server cannot store data until disk space is freed; retry later"}

// ErrWrongType is the 400 for a request member of the wrong JSON type; an
// empty field means the body itself.
func ErrWrongType(field, want string) *Error {
	if field == "" {
		return Errorf(KindInvalid, "Invalid request body: must be a JSON object")
	}
	return Errorf(KindInvalid, "Invalid request body: %s must be %s", field, want)
}
