package onboarding

import "strings"

// The closed sets of values an application's data takes, each declared
// once. They are strings in JSON and in the store.

// PersonRole is a role a person has in the company.
type PersonRole string

// Person roles, in display order.
const (
	PersonDirector    PersonRole = "director"
	PersonUBO         PersonRole = "ubo"
	PersonShareholder PersonRole = "shareholder"
)

// PersonRoles lists the roles a person may have, in display order.
func PersonRoles() []PersonRole { return []PersonRole{PersonDirector, PersonUBO, PersonShareholder} }

// ParticipantRole is how a participant takes part in an application.
type ParticipantRole string

// Participant roles.
const (
	RolePrimary      ParticipantRole = "primary"      // the contact the partner named; makes the declarations
	RoleCollaborator ParticipantRole = "collaborator" // a colleague the primary contact invited
)

// EntityType is the relation of a related legal entity to the company
// (docs/api.md).
type EntityType string

// Entity types, in display order.
const (
	EntityHoldingCompany EntityType = "holding_company"
	EntitySubsidiary     EntityType = "subsidiary"
	EntityParent         EntityType = "parent"
	EntityOther          EntityType = "other"
)

// EntityTypes lists the types of related entities, in display order.
func EntityTypes() []EntityType {
	return []EntityType{EntityHoldingCompany, EntitySubsidiary, EntityParent, EntityOther}
}

// DocumentStatus is where a document stands.
type DocumentStatus string

// Document statuses. Only accepted, forced and skipped documents appear in
// API payloads; rejected ones are shown to the applicant only.
const (
	DocumentAccepted DocumentStatus = "accepted"
	DocumentForced   DocumentStatus = "forced"
	DocumentSkipped  DocumentStatus = "skipped"
	DocumentRejected DocumentStatus = "rejected"
)

// Source is where a person or an entity on the application came from.
type Source string

// Sources of people and entities.
const (
	SourceRegistry  Source = "registry"   // the company registry; name and roles are locked
	SourceUserAdded Source = "user_added" // the applicant
)

// RegistrySource names a company registry in meta.registry_sources and on
// registry documents.
type RegistrySource string

// Registry sources.
const (
	SourceUKRegistry    RegistrySource = "uk_registry"    // Companies House
	SourceIrishRegistry RegistrySource = "irish_registry" // the CRO
)

// PartyType is the kind of either side of an ownership row: an
// owner is a person or an entity; what is owned is the applying company
// (the target) or an entity.
type PartyType string

// Owner and owned types of ownership rows.
const (
	OwnerPerson PartyType = "person"
	OwnerEntity PartyType = "entity"
	OwnedTarget PartyType = "target"
	OwnedEntity           = OwnerEntity
)

// RegistryDocumentsStatus is how fetching an application's registry
// documents went; empty for applications that are not eligible.
type RegistryDocumentsStatus string

// Registry document statuses.
const (
	RegistryDocumentsPending  RegistryDocumentsStatus = "pending"
	RegistryDocumentsComplete RegistryDocumentsStatus = "complete"
	RegistryDocumentsPartial  RegistryDocumentsStatus = "partial"
	RegistryDocumentsFailed   RegistryDocumentsStatus = "failed"
)

// joinValues joins the values of a vocabulary for a message: "a, b, c".
func joinValues[T ~string](values []T) string {
	return strings.Join(stringsOf(values), ", ")
}

// stringsOf is the values of a vocabulary as strings.
func stringsOf[T ~string](values []T) []string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return s
}

// Currency is a currency a currency field takes: its ISO 4217 code and the
// sign amounts in it are written with.
type Currency struct{ Code, Sign string }

// Currencies lists the currencies a currency field takes, in the order a
// form offers them.
func Currencies() []Currency {
	return []Currency{{"GBP", "£"}, {"EUR", "€"}, {"USD", "$"}}
}

// CurrencyCodes lists the codes of Currencies, in the same order.
func CurrencyCodes() []string {
	cs := Currencies()
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code
	}
	return out
}

// IsCurrencyCode reports whether code is the code of one of Currencies.
func IsCurrencyCode(code string) bool {
	for _, c := range Currencies() {
		if c.Code == code {
			return true
		}
	}
	return false
}

// ScopeNames lists the names of AllScopes, in its order: the vocabulary of
// scopes as the CLI and error messages spell it.
func ScopeNames() []string {
	return stringsOf(AllScopes())
}
