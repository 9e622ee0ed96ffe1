// Package onboarding is the domain of onboard: applications and their
// participants, collected data, the field catalog and value validation, the
// status machine, API keys and scopes, and the use-cases that act on them as
// one Service.
//
// It imports no other package of this module. It declares the small
// interfaces it needs from the outside world (Store, Registry, Mailer) and
// every error the API can return, with its exact message (docs/api.md), so that the
// HTTP layer maps errors to status codes in one table and never invents text.
package onboarding
