-- Webhooks: the endpoints partners register, the events their
-- organization's changes emit, the queue of deliveries (one row per event
-- and endpoint that wants it) and the log of every delivery attempt.
--
-- Identifiers are compared in "C" collation, byte by byte: ids that embed a
-- ULID then sort in creation order whatever the database's locale.
-- A record column holds the row's aggregate in the encoding of package
-- storage/record, the same bytes the embedded store keeps; the other
-- columns are what queries select, order and lock by.

-- One row per endpoint. enabled is repeated from the record because claims
-- and fan-out select by it, and because it is a key column (the unique
-- index on (id, enabled)): a transaction that queues events locks the
-- endpoints it queues for FOR KEY SHARE, which does not wait for the
-- frequent updates of an endpoint's health, but does wait for (and is
-- waited for by) an update that enables or disables it, or a delete. So no
-- delivery is queued for an endpoint once its disabling has committed.
CREATE TABLE webhook_endpoints (
    id text COLLATE "C" PRIMARY KEY,
    org_id text COLLATE "C" NOT NULL,
    enabled boolean NOT NULL,
    record bytea NOT NULL,
    UNIQUE (id, enabled)
);

-- Endpoints(org): oldest first, which is id order.
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, id);

-- One row per event, readable until expires_at (its time plus the event
-- retention); reads ignore expired rows and the sweep deletes them. id is
-- "evt_" and a ULID, so id order is time order.
CREATE TABLE events (
    id text COLLATE "C" PRIMARY KEY,
    org_id text COLLATE "C" NOT NULL,
    type text COLLATE "C" NOT NULL,
    at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    record bytea NOT NULL
);

-- Events(query): an organization's events newest first, of every type or
-- of one, from a cursor.
CREATE INDEX events_org ON events (org_id, id);
CREATE INDEX events_org_type ON events (org_id, type, id);
-- The sweep.
CREATE INDEX events_expiry ON events (expires_at);

-- The delivery queue: one row per event queued for an endpoint and not yet
-- done. The deliveries of one (endpoint, subject) form a queue in event
-- order, of which only the head (head = true; at most one per queue, the
-- partial unique index deliveries_head) may be attempted: the first
-- delivery, or the one already in flight when an older event was
-- redelivered behind it. When the head is done it is deleted and the
-- first delivery left in its queue becomes the head, in the same
-- transaction.
--
-- A head is due at next_at while unclaimed; a claim sets owner and
-- lease_until, and it is due again at lease_until (a worker that died
-- leaves work that others take up once its lease lapses): due_at is the
-- one that counts. attempts counts the attempts made. The row holds no
-- record: every field of a delivery is a column. Times are kept to the
-- microsecond, as PostgreSQL stores them.
--
-- Who locks what, so that a queue never loses its head: a transaction
-- that queues locks the head of each queue it adds to FOR KEY SHARE, and
-- one that finishes a head locks it FOR UPDATE before deleting it, so the
-- finisher's promotion sees every delivery queued behind the head; a
-- queue without a head gets one through the unique index (an insert that
-- finds a head committed meanwhile queues behind it instead).
CREATE TABLE deliveries (
    endpoint_id text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    event_type text COLLATE "C" NOT NULL,
    head boolean NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_at timestamptz NOT NULL,
    owner text,
    lease_until timestamptz,
    due_at timestamptz GENERATED ALWAYS AS (coalesce(lease_until, next_at)) STORED,
    PRIMARY KEY (endpoint_id, subject, event_id),
    CHECK ((owner IS NULL) = (lease_until IS NULL))
);

-- At most one head per queue.
CREATE UNIQUE INDEX deliveries_head ON deliveries (endpoint_id, subject) WHERE head;
-- Claims: each endpoint's heads, earliest due first (a lapsed lease is due).
CREATE INDEX deliveries_due ON deliveries (endpoint_id, due_at, event_id) WHERE head;
-- What a claim leaves: the earliest unclaimed head and the earliest lease
-- of each endpoint, each the first entry of an index of its own kind, so
-- that finding them does not read every queued head (a backlog would make
-- every claim slower, and delivery with it), whatever plan PostgreSQL
-- made of the claim, even on an empty table.
CREATE INDEX deliveries_unclaimed ON deliveries (endpoint_id, due_at) WHERE head AND owner IS NULL;
CREATE INDEX deliveries_leased ON deliveries (endpoint_id, due_at) WHERE head AND owner IS NOT NULL;

-- The delivery log: one row per attempt, and per delivery dropped unsent
-- (its endpoint disabled, its event expired), kept until expires_at (its
-- time plus the log's retention). Newest first is (at, id) descending; id
-- orders lines of the same time as they were written.
CREATE TABLE delivery_attempts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    success boolean NOT NULL,
    at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    record bytea NOT NULL
);

-- DeliveryAttempts(query): the whole log, an endpoint's, an event's.
CREATE INDEX delivery_attempts_at ON delivery_attempts (at DESC, id DESC);
CREATE INDEX delivery_attempts_endpoint ON delivery_attempts (endpoint_id, at DESC, id DESC);
CREATE INDEX delivery_attempts_event ON delivery_attempts (event_id, at DESC, id DESC);
-- The sweep.
CREATE INDEX delivery_attempts_expiry ON delivery_attempts (expires_at);
