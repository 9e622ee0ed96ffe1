-- The records: applications, RFI requests, their activity logs, API keys
-- and the outcomes of requests with an Idempotency-Key. This file is the
-- layout of the PostgreSQL backend, as storage/keys.go is the embedded
-- one's.
--
-- Every aggregate is one row: its record (the bytes of package record,
-- exactly what the embedded store keeps, so API answers do not depend on
-- the backend) beside the columns its queries read. A record and its
-- columns and index rows change in one transaction; an update locks the
-- aggregate's row (SELECT … FOR UPDATE) before it reads the record, so
-- updates of one aggregate queue on that lock, on every instance.
--
-- Identifiers: application and RFI ids are UUIDs (uuid, whose order is
-- byte order); creation sequences and activity entry sequences are ULIDs
-- stored as their 16 bytes (bytea, compared byte-wise, which is creation
-- order). Times the store compares exactly (the RFI expiry queue) are unix
-- nanoseconds (bigint), as the embedded store orders them; times only
-- compared with the clock to the second are timestamptz.
--
-- Rows are never deleted except where a comment says so, so no foreign
-- keys: they would cost a lookup per inserted row and guard nothing.
--
-- Records are already compressed (record.Encode): their columns are
-- stored without PostgreSQL's compression (STORAGE EXTERNAL), and in line
-- up to the largest tuple a page holds (toast_tuple_target), so that a
-- read or an update of a typical record touches one heap page and no
-- TOAST table.

-- applications: one row per application.
--   status, org_id, seq      the listing columns: an organization's
--                            applications newest first (seq descending),
--                            of every status or of one
--   registry_documents_pending
--                            the registry documents fetch queue
--                            (PendingRegistryDocuments)
--   log_seq, log_hash        the head of the application's activity log
--                            (its last entry's seq and hash; NULL while the
--                            log is empty), in the row an update locks, so
--                            the update that appends reads the head it
--                            chains after with the record
--   blob_ids                 every blob the record names (BlobIDs), for
--                            the orphan sweep; NULL when none
--   version                  1 on create, incremented by every update: a
--                            reader that holds the record decoded at a
--                            version asks for the record only when the
--                            row's version differs (appcache.go)
CREATE TABLE applications (
    id uuid PRIMARY KEY,
    org_id text NOT NULL,
    status text NOT NULL,
    seq bytea NOT NULL,
    registry_documents_pending boolean NOT NULL,
    log_seq bytea,
    log_hash text,
    blob_ids text[],
    version bigint NOT NULL DEFAULT 1,
    record bytea NOT NULL
) WITH (fillfactor = 80, toast_tuple_target = 8160);
ALTER TABLE applications ALTER COLUMN record SET STORAGE EXTERNAL;
-- A page of a listing is an index scan from the cursor, LIMIT the page:
-- its cost does not grow with the number of applications. The per-org
-- index is unique, as the embedded store refuses a second record at the
-- same (organization, seq).
CREATE UNIQUE INDEX applications_by_org ON applications (org_id, seq);
CREATE INDEX applications_by_status ON applications (org_id, status, seq);
CREATE INDEX applications_pending_documents ON applications (id) WHERE registry_documents_pending;

-- application_slugs: the link slug of every participant of every
-- application → the application. A slug belongs to one application:
-- creating or updating an application onto a slug another holds fails.
-- An update deletes the rows of the slugs its participants no longer have.
CREATE TABLE application_slugs (
    slug text PRIMARY KEY,
    application_id uuid NOT NULL
);

-- rfi_requests: one row per RFI request, with the columns of
-- applications' that apply (listing, activity head, blobs).
CREATE TABLE rfi_requests (
    id uuid PRIMARY KEY,
    org_id text NOT NULL,
    status text NOT NULL,
    seq bytea NOT NULL,
    log_seq bytea,
    log_hash text,
    blob_ids text[],
    record bytea NOT NULL
) WITH (fillfactor = 80, toast_tuple_target = 8160);
ALTER TABLE rfi_requests ALTER COLUMN record SET STORAGE EXTERNAL;
CREATE UNIQUE INDEX rfi_requests_by_org ON rfi_requests (org_id, seq);
CREATE INDEX rfi_requests_by_status ON rfi_requests (org_id, status, seq);

-- rfi_slugs: as application_slugs, for RFI requests (an application and
-- an RFI request may hold the same slug: they are found by different
-- pages).
CREATE TABLE rfi_slugs (
    slug text PRIMARY KEY,
    rfi_id uuid NOT NULL
);

-- rfi_expiry_queue: the expiry sweep's queue. Every active RFI request has
-- exactly one row and no other request has one: the transaction that
-- writes a request's record inserts, moves or deletes its row.
--   expires_ns      the request's ExpiresAt (unix nanoseconds, times
--                   before 1970 as 0)
--   lease_owner,    the sweeper that claimed the request and when its
--   lease_until_ns  lease lapses; NULL while unclaimed. An update that
--                   moves ExpiresAt ends the lease; any other keeps it.
--   due_ns          when the request is next due: the lease's end while
--                   leased, else ExpiresAt. A claim takes the rows due at
--                   or before its now, earliest first, FOR UPDATE SKIP
--                   LOCKED (concurrent claims, and updates in flight,
--                   never hand out the same request), and leases them.
CREATE TABLE rfi_expiry_queue (
    rfi_id uuid PRIMARY KEY,
    expires_ns bigint NOT NULL,
    lease_owner text,
    lease_until_ns bigint,
    due_ns bigint GENERATED ALWAYS AS (coalesce(lease_until_ns, expires_ns)) STORED
);
CREATE INDEX rfi_expiry_queue_due ON rfi_expiry_queue (due_ns, rfi_id);

-- activity_entries: the activity log of every application and RFI request
-- (the subject), oldest first by seq. The record is the entry with its
-- link in the log's hash chain (Prev, Hash); the log's head is in the
-- subject's row (log_seq, log_hash). Entries are appended in the
-- transaction of the change they record; only the test seam
-- TamperWithActivity rewrites them.
CREATE TABLE activity_entries (
    subject uuid NOT NULL,
    seq bytea NOT NULL,
    record bytea NOT NULL,
    PRIMARY KEY (subject, seq)
);

-- api_keys: one row per API key, by client id, with its organization for
-- the per-organization list.
CREATE TABLE api_keys (
    client_id text PRIMARY KEY,
    org_id text NOT NULL,
    record bytea NOT NULL
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, client_id);

-- idempotency: what a request with an Idempotency-Key did, by the API
-- key's client id and the key: first the outcome its work committed (in
-- the work's transaction), then the response the server saved, which
-- replaces it. Reads ignore a row once expires_at has passed, and the
-- sweep deletes such rows (sweep.go).
CREATE TABLE idempotency (
    client_id text NOT NULL,
    key text NOT NULL,
    record bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_expiry ON idempotency (expires_at);

-- record_changed() raises SQLSTATE OB001: the guard of a write that
-- replaces a record only if its row is still at the version it was read
-- at (apps.go), which aborts the write's transaction, and with it the
-- statements that follow in it, when the row has moved on.
CREATE FUNCTION record_changed() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the record changed since it was read' USING ERRCODE = 'OB001';
END
$$;
