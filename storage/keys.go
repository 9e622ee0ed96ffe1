package storage

import (
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"onboard/onboarding"
)

// The keyspace. Every key starts with a short family prefix ending in '/', so
// families never interleave and a prefix scan never crosses into another.
// Fixed-size binary parts (UUIDs, ULIDs, SHA-256 digests) are written raw;
// variable parts that are followed by more key material end with 0x00, which
// organization ids, statuses and client ids cannot contain (the configuration
// and the key generator guarantee it). ULIDs sort by creation time, so an
// index ending in a ULID lists in creation order.
//
//	a/<appID:16>                                  application record
//	xo/<orgID>\x00<seq:16>                        → appID: an organization's applications by creation
//	xs/<orgID>\x00<status>\x00<seq:16>            → appID: the same, per status
//	xl/<linkSlug>                                 → appID: participant link slugs
//	xr/<appID:16>                                 → (empty): applications whose registry
//	                                                documents are still pending (the fetch queue)
//	v/<appID:16><ulid:16>                         activity entry, oldest first
//	k/<clientID>                                  API key record
//	xk/<orgID>\x00<clientID>                      → (empty): an organization's keys
//	i/<clientID>\x00<idempotencyKey>              saved response of an idempotent POST (24 h TTL)
//	m/schema                                      schema version of this data directory
//
// Index entries are written and removed in the same transaction as their
// record (see appIndexes). Record values start with a one-byte codec version
// (codec.go). The xp/ family is retired (prefixRetiredPreAuthIndex).
const (
	prefixApp         = "a/"
	prefixOrgIndex    = "xo/"
	prefixStatusIndex = "xs/"
	prefixSlugIndex   = "xl/"
	prefixPendingDocs = "xr/"
	prefixActivity    = "v/"
	prefixKey         = "k/"
	prefixOrgKeyIndex = "xk/"
	prefixIdempotency = "i/"
	keySchema         = "m/schema"
)

// prefixRetiredPreAuthIndex is the family xp/<sha256(preAuthCode):32> →
// appID that schema 2 and earlier wrote for every live pre-auth code.
// Nothing read it (the form finds an application by its link slug, then
// checks the code on the participant), so schema 3 no longer writes it and
// its migration deletes it (dropRetiredPreAuthIndex); keep the prefix
// reserved.
const prefixRetiredPreAuthIndex = "xp/"

const sep = 0x00

func appKey(id uuid.UUID) []byte {
	return append([]byte(prefixApp), id[:]...)
}

func orgIndexPrefix(org string) []byte {
	b := make([]byte, 0, len(prefixOrgIndex)+len(org)+1+16)
	b = append(b, prefixOrgIndex...)
	b = append(b, org...)
	return append(b, sep)
}

func statusIndexPrefix(org string, status onboarding.Status) []byte {
	b := make([]byte, 0, len(prefixStatusIndex)+len(org)+len(status)+2+16)
	b = append(b, prefixStatusIndex...)
	b = append(b, org...)
	b = append(b, sep)
	b = append(b, status...)
	return append(b, sep)
}

// listPrefix is the index prefix that lists org's applications, of one
// status or (status "") of all.
func listPrefix(org string, status onboarding.Status) []byte {
	if status == "" {
		return orgIndexPrefix(org)
	}
	return statusIndexPrefix(org, status)
}

func orgIndexKey(org string, seq ulid.ULID) []byte {
	return append(orgIndexPrefix(org), seq[:]...)
}

func statusIndexKey(org string, status onboarding.Status, seq ulid.ULID) []byte {
	return append(statusIndexPrefix(org, status), seq[:]...)
}

func slugIndexKey(slug string) []byte {
	return append([]byte(prefixSlugIndex), slug...)
}

func pendingDocsKey(app uuid.UUID) []byte {
	return append([]byte(prefixPendingDocs), app[:]...)
}

func activityPrefix(app uuid.UUID) []byte {
	return append([]byte(prefixActivity), app[:]...)
}

func activityKey(app uuid.UUID, id ulid.ULID) []byte {
	return append(activityPrefix(app), id[:]...)
}

func apiKeyKey(clientID string) []byte {
	return append([]byte(prefixKey), clientID...)
}

func orgKeyIndexPrefix(org string) []byte {
	b := append([]byte(prefixOrgKeyIndex), org...)
	return append(b, sep)
}

func orgKeyIndexKey(org, clientID string) []byte {
	return append(orgKeyIndexPrefix(org), clientID...)
}

// appIndexes returns every index entry the application's record implies.
// Updates write the new set and delete entries of the old set that are not in
// it, so indexes can never drift from their records.
func appIndexes(app *onboarding.Application, id uuid.UUID) map[string][]byte {
	ix := map[string][]byte{
		string(orgIndexKey(app.OrgID, app.Seq)):                id[:],
		string(statusIndexKey(app.OrgID, app.Status, app.Seq)): id[:],
	}
	if app.RegistryDocumentsStatus == onboarding.RegistryDocumentsPending {
		ix[string(pendingDocsKey(id))] = nil
	}
	for _, p := range app.Participants {
		ix[string(slugIndexKey(p.LinkSlug))] = id[:]
	}
	return ix
}

func idempotencyKey(clientID, key string) []byte {
	b := make([]byte, 0, len(prefixIdempotency)+len(clientID)+1+len(key))
	b = append(b, prefixIdempotency...)
	b = append(b, clientID...)
	b = append(b, sep)
	return append(b, key...)
}
