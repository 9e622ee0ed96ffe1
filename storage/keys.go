package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

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
//	v/<appID:16><ulid:16>                         activity entry, oldest first, with its link
//	                                              in the log's hash chain (activity.go)
//	vh/<appID:16>                                 → <ulid:16><sha256:32>: the head of that log,
//	                                              its last entry's ULID and hash, written with
//	                                              every append (schema 5)
//	k/<clientID>                                  API key record
//	xk/<orgID>\x00<clientID>                      → (empty): an organization's keys
//	i/<clientID>\x00<idempotencyKey>              an idempotent POST: its outcome (ids, sealed
//	                                              secrets), written in the transaction that
//	                                              does its work, then replaced by its saved
//	                                              response (24 h TTL)
//	m/schema                                      schema version of this data directory
//
// Events and webhooks (docs/webhooks.md). Event ids are "evt_" + ULID and are
// keyed by that ULID (onboarding.EventSeq); endpoint ids, event types,
// subjects and the event ids of the log indexes are opaque strings without
// 0x00 (the domain makes them of ids, ULIDs and fixed names). The three event
// families and the three delivery-log families carry a Badger expiry
// (event.At + onboarding.EventRetention, line.At +
// onboarding.DeliveryLogRetention), so they vanish together.
//
//	e/<seq:16>                                       event record (expires)
//	xe/<orgID>\x00<seq:16>                           → (empty): an organization's events (expires)
//	xet/<orgID>\x00<type>\x00<seq:16>                → (empty): the same, per event type (expires)
//	w/<endpointID>                                   webhook endpoint record
//	xw/<orgID>\x00<endpointID>                       → (empty): an organization's endpoints
//	q/<endpointID>\x00<subject>\x00<seq:16>          delivery of one event to one endpoint; the
//	                                                 deliveries of one subject sort in event order
//	qh/<endpointID>\x00<subject>                     → <seq:16>: the head of that queue, the one
//	                                                 delivery of the subject that may be attempted
//	xq/<endpointID>\x00<due:8><subject>\x00<seq:16>
//	                                                 → (empty): when an unleased queue head is due
//	                                                 (big-endian unix nanoseconds), per endpoint
//	xu/<endpointID>\x00<until:8><subject>\x00<seq:16>
//	                                                 → (empty): when the lease of a claimed queue
//	                                                 head lapses, per endpoint
//	d/<ulid:16>                                      delivery log line, by attempt time (expires)
//	xdw/<endpointID>\x00<ulid:16>                    → (empty): an endpoint's log lines (expires)
//	xde/<eventID>\x00<ulid:16>                       → (empty): an event's log lines (expires)
//
// Every transaction that queues a delivery for an endpoint, or leases one
// of its deliveries, reads the endpoint's w/ record, so disabling or
// removing an endpoint writes that record alone and its q/, qh/, xq/ and
// xu/ entries are deleted afterwards, a batch per transaction
// (queuedrop.go); the keyspace is unchanged by this (schema 5 stands).
//
// Only queue heads are indexed, each in one of two families: xq/ at its
// NextAt while unclaimed, xu/ at its LeaseUntil while claimed. Both are per
// endpoint, so a claim seeks each enabled endpoint's entries up to now on
// its own (one endpoint's backlog never hides another's), and never meets
// a delivery waiting behind an earlier one, nor a lease that is still
// running. Each endpoint's space of each family is sought from the Store's
// floor of that space (duefloor.go), not from its start, whose front is
// mostly deleted entries.
//
// RFI requests (storage/rfi.go). Their listing and slug
// indexes mirror the applications' in families of their own; their
// activity goes to v/ keyed by the request's id (UUIDs do not collide).
// Every active request has exactly one entry in the expiry queue xrx/, and
// a request that is not active has none. The families need no migration
// (schema 4 stands): a data directory without them holds no RFI requests.
//
//	r/<rfiID:16>                                  RFI request record
//	xro/<orgID>\x00<seq:16>                       → rfiID: an organization's requests by creation
//	xrs/<orgID>\x00<status>\x00<seq:16>           → rfiID: the same, per status
//	xrl/<linkSlug>                                → rfiID: participant link slugs
//	xrx/<due:8><rfiID:16>                         → (empty), or the owner of its lease: the
//	                                                expiry queue. Unclaimed, an entry is due at
//	                                                the request's ExpiresAt; claimed, it moves
//	                                                to the lease's end (big-endian unix
//	                                                nanoseconds, dueNanos) and names its owner;
//	                                                it stays there while ExpiresAt is unchanged
//	xrq/<rfiID:16>                                → the request's xrx/ key: where its entry is
//	                                                now, so that an update finds it (and keeps
//	                                                a running lease) without a scan
//
// Index entries are written and removed in the same transaction as their
// record (see appIndexes, rfiIndexes). Record values start with a one-byte
// codec version (codec.go). The xp/ family is retired (prefixRetiredPreAuthIndex).
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

	prefixEvent            = "e/"
	prefixOrgEventIndex    = "xe/"
	prefixTypeEventIndex   = "xet/"
	prefixEndpoint         = "w/"
	prefixOrgEndpointIndex = "xw/"
	prefixDelivery         = "q/"
	prefixQueueHead        = "qh/"
	prefixDueIndex         = "xq/"
	prefixLeaseIndex       = "xu/"
	prefixAttempt          = "d/"
	prefixEndpointAttempts = "xdw/"
	prefixEventAttempts    = "xde/"

	prefixRFI            = "r/"
	prefixRFIOrgIndex    = "xro/"
	prefixRFIStatusIndex = "xrs/"
	prefixRFISlugIndex   = "xrl/"
	prefixRFIExpiry      = "xrx/"
	prefixRFIQueued      = "xrq/"
)

// prefixActivityHead is the family of activity log heads (schema 5).
const prefixActivityHead = "vh/"

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

func activityHeadKey(subject uuid.UUID) []byte {
	return append([]byte(prefixActivityHead), subject[:]...)
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

func eventKey(seq ulid.ULID) []byte {
	return append([]byte(prefixEvent), seq[:]...)
}

func orgEventPrefix(org string) []byte {
	b := make([]byte, 0, len(prefixOrgEventIndex)+len(org)+1+16)
	b = append(b, prefixOrgEventIndex...)
	b = append(b, org...)
	return append(b, sep)
}

func typeEventPrefix(org string, t onboarding.EventType) []byte {
	b := make([]byte, 0, len(prefixTypeEventIndex)+len(org)+len(t)+2+16)
	b = append(b, prefixTypeEventIndex...)
	b = append(b, org...)
	b = append(b, sep)
	b = append(b, t...)
	return append(b, sep)
}

// eventListPrefix is the index prefix that lists org's events, of one type
// or (t "") of all.
func eventListPrefix(org string, t onboarding.EventType) []byte {
	if t == "" {
		return orgEventPrefix(org)
	}
	return typeEventPrefix(org, t)
}

func endpointKey(id string) []byte {
	return append([]byte(prefixEndpoint), id...)
}

func orgEndpointPrefix(org string) []byte {
	b := append([]byte(prefixOrgEndpointIndex), org...)
	return append(b, sep)
}

func orgEndpointKey(org, id string) []byte {
	return append(orgEndpointPrefix(org), id...)
}

// endpointQueuePrefix covers every delivery queued for the endpoint.
func endpointQueuePrefix(endpointID string) []byte {
	b := append([]byte(prefixDelivery), endpointID...)
	return append(b, sep)
}

// subjectQueuePrefix covers the deliveries of one subject to one endpoint,
// in event order.
func subjectQueuePrefix(endpointID, subject string) []byte {
	b := make([]byte, 0, len(prefixDelivery)+len(endpointID)+len(subject)+2+16)
	b = append(b, prefixDelivery...)
	b = append(b, endpointID...)
	b = append(b, sep)
	b = append(b, subject...)
	return append(b, sep)
}

func deliveryKey(endpointID, subject string, seq ulid.ULID) []byte {
	return append(subjectQueuePrefix(endpointID, subject), seq[:]...)
}

func queueHeadKey(endpointID, subject string) []byte {
	b := make([]byte, 0, len(prefixQueueHead)+len(endpointID)+1+len(subject))
	b = append(b, prefixQueueHead...)
	b = append(b, endpointID...)
	b = append(b, sep)
	return append(b, subject...)
}

// indexSpace is where one endpoint's entries of an index family (the due
// index xq/ or the lease index xu/) are.
func indexSpace(family, endpointID string) []byte {
	b := make([]byte, 0, len(family)+len(endpointID)+1+8+64)
	b = append(b, family...)
	b = append(b, endpointID...)
	return append(b, sep)
}

// timedKey is the entry of family (xq/ or xu/) at at for the delivery
// stored at delivery (a q/ key). A transaction that writes one lowers the
// Store's floor of its space to at once it is over (duefloor.go).
func timedKey(family string, at time.Time, delivery []byte) []byte {
	rest := delivery[len(prefixDelivery):]
	i := bytes.IndexByte(rest, sep)
	b := indexSpace(family, string(rest[:i]))
	b = binary.BigEndian.AppendUint64(b, dueNanos(at))
	return append(b, rest[i+1:]...)
}

// dueKey is the due-index entry of an unleased queue head.
func dueKey(due time.Time, delivery []byte) []byte {
	return timedKey(prefixDueIndex, due, delivery)
}

// leaseKey is the lease-index entry of a claimed queue head.
func leaseKey(until time.Time, delivery []byte) []byte {
	return timedKey(prefixLeaseIndex, until, delivery)
}

// floorKey is where the entries of space due at nanos (dueNanos) or later
// start.
func floorKey(space []byte, nanos uint64) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(space), nanos)
}

// parseTimedKey splits an entry of space (indexSpace) into its time and
// the q/ key of the delivery it schedules.
func parseTimedKey(space, k []byte) (time.Time, []byte, error) {
	if len(k) < len(space)+8+1+len(ulid.ULID{}) || !bytes.HasPrefix(k, space) {
		return time.Time{}, nil, fmt.Errorf("index key %x: malformed", k)
	}
	n := binary.BigEndian.Uint64(k[len(space):])
	ep := space[bytes.IndexByte(space, '/')+1:] // endpointID\x00
	delivery := append(append([]byte(prefixDelivery), ep...), k[len(space)+8:]...)
	return time.Unix(0, int64(n)).UTC(), delivery, nil
}

// dueNanos is t as the due index orders it: unix nanoseconds, with times
// before 1970 as 0.
func dueNanos(t time.Time) uint64 {
	if t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

func attemptKey(id ulid.ULID) []byte {
	return append([]byte(prefixAttempt), id[:]...)
}

func endpointAttemptPrefix(endpointID string) []byte {
	b := append([]byte(prefixEndpointAttempts), endpointID...)
	return append(b, sep)
}

func eventAttemptPrefix(eventID string) []byte {
	b := append([]byte(prefixEventAttempts), eventID...)
	return append(b, sep)
}

func rfiKey(id uuid.UUID) []byte {
	return append([]byte(prefixRFI), id[:]...)
}

// rfiListPrefix is the index prefix that lists org's RFI requests, of one
// status or (status "") of all.
func rfiListPrefix(org string, status onboarding.RFIStatus) []byte {
	b := make([]byte, 0, len(prefixRFIStatusIndex)+len(org)+len(status)+2+16)
	if status == "" {
		b = append(b, prefixRFIOrgIndex...)
		b = append(b, org...)
		return append(b, sep)
	}
	b = append(b, prefixRFIStatusIndex...)
	b = append(b, org...)
	b = append(b, sep)
	b = append(b, status...)
	return append(b, sep)
}

func rfiOrgIndexKey(org string, seq ulid.ULID) []byte {
	return append(rfiListPrefix(org, ""), seq[:]...)
}

func rfiStatusIndexKey(org string, status onboarding.RFIStatus, seq ulid.ULID) []byte {
	return append(rfiListPrefix(org, status), seq[:]...)
}

func rfiSlugIndexKey(slug string) []byte {
	return append([]byte(prefixRFISlugIndex), slug...)
}

// rfiExpiryKey is the expiry-queue entry of request id at due.
func rfiExpiryKey(due time.Time, id uuid.UUID) []byte {
	b := make([]byte, 0, len(prefixRFIExpiry)+8+16)
	b = append(b, prefixRFIExpiry...)
	b = binary.BigEndian.AppendUint64(b, dueNanos(due))
	return append(b, id[:]...)
}

// parseRFIExpiryKey splits an expiry-queue entry into its due time and
// request id.
func parseRFIExpiryKey(k []byte) (time.Time, uuid.UUID, error) {
	if len(k) != len(prefixRFIExpiry)+8+16 || !bytes.HasPrefix(k, []byte(prefixRFIExpiry)) {
		return time.Time{}, uuid.UUID{}, fmt.Errorf("rfi expiry entry %x: malformed", k)
	}
	n := binary.BigEndian.Uint64(k[len(prefixRFIExpiry):])
	return time.Unix(0, int64(n)).UTC(), uuid.UUID(k[len(prefixRFIExpiry)+8:]), nil
}

func rfiQueuedKey(id uuid.UUID) []byte {
	return append([]byte(prefixRFIQueued), id[:]...)
}

// rfiIndexes returns every listing and slug index entry the request's
// record implies, like appIndexes. Its expiry-queue entry is not among
// them: where it is depends on a lease too (rfi.go).
func rfiIndexes(r *onboarding.RFIRequest, id uuid.UUID) map[string][]byte {
	ix := map[string][]byte{
		string(rfiOrgIndexKey(r.OrgID, r.Seq)):              id[:],
		string(rfiStatusIndexKey(r.OrgID, r.Status, r.Seq)): id[:],
	}
	for _, p := range r.Participants {
		ix[string(rfiSlugIndexKey(p.LinkSlug))] = id[:]
	}
	return ix
}
