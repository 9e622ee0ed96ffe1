-- Secrets every instance shares: the keys onboard generates on its first
-- start when the configuration gives none (secrets.go).
CREATE TABLE secrets (
    name text PRIMARY KEY,
    value bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
