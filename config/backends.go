package config

import (
	"errors"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"onboard/blobs"
	"onboard/onboarding"
)

// validate checks the [storage] table. Its messages never quote
// postgres_url, whose password they would show.
func (s *Storage) validate(p *onboarding.Problems) {
	switch s.Backend {
	case StorageBadger:
	case StoragePostgres:
		if s.PostgresURL == "" {
			p.Note("storage", "storage.backend \"postgres\" needs storage.postgres_url (or %s): the database's URL, such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full", EnvPostgresURL)
		}
	default:
		p.Note("storage", "storage.backend must be %q or %q, not %q", StorageBadger, StoragePostgres, s.Backend)
	}
	if s.PostgresURL != "" {
		if msg := postgresURLProblem(s.PostgresURL); msg != "" {
			p.Note("storage", "%s", msg)
		}
	}
	if s.MaxConnections < 1 {
		p.Note("storage", "storage.max_connections must be at least 1, not %d", s.MaxConnections)
	}
}

// postgresURLProblem is what is wrong with rawURL as storage.postgres_url,
// "" when nothing: it must be a postgres:// or postgresql:// URL that the
// driver accepts (parsed as the driver parses it; nothing is connected).
func postgresURLProblem(rawURL string) string {
	const want = "storage.postgres_url must be a URL such as postgres://onboard:PASSWORD@db.example:5432/onboard?sslmode=verify-full"
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Opaque != "" {
		return want
	}
	if _, err := pgconn.ParseConfig(rawURL); err != nil {
		return "storage.postgres_url: " + parseConfigReason(err)
	}
	return ""
}

// parseConfigReason is the reason the driver gives for refusing a
// connection string, without the string itself (whose password its message
// only hides as best it can).
func parseConfigReason(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "the driver refuses it"
	}
	msg := pe.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		return msg[i+len("`: "):]
	}
	return "the driver refuses it"
}

// validate checks the [blobs] table.
func (b *Blobs) validate(p *onboarding.Problems) {
	switch b.Backend {
	case BlobsLocal:
	case BlobsS3:
		b.validateS3(p)
	default:
		p.Note("blobs", "blobs.backend must be %q or %q, not %q", BlobsLocal, BlobsS3, b.Backend)
	}
	if b.SigningKey != "" {
		if _, err := blobs.DecodeKey(b.SigningKey); err != nil {
			p.Note("blobs", "blobs.signing_key: %v", err)
		}
	}
}

// validateS3 checks the s3_ keys of the [blobs] table, for backend "s3".
func (b *Blobs) validateS3(p *onboarding.Problems) {
	if b.S3Endpoint == "" || b.S3Bucket == "" {
		p.Note("blobs", "blobs.backend \"s3\" needs blobs.s3_endpoint and blobs.s3_bucket")
	}
	if b.S3Endpoint != "" {
		u, err := url.Parse(b.S3Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
			p.Note("blobs", "blobs.s3_endpoint must be the http or https URL of the S3 API without a path, credentials, query or fragment, such as https://s3.eu-west-2.amazonaws.com")
		}
	}
	if b.S3Bucket != "" && strings.ContainsAny(b.S3Bucket, "/:") {
		p.Note("blobs", "blobs.s3_bucket %q must be a bucket's name, not a path or URL", b.S3Bucket)
	}
	if b.S3Region == "" {
		p.Note("blobs", "blobs.s3_region must not be empty (\"us-east-1\" for most S3-compatible servers)")
	}
	if strings.HasPrefix(b.S3Prefix, "/") {
		p.Note("blobs", "blobs.s3_prefix %q must not start with \"/\"", b.S3Prefix)
	}
	if b.S3AccessKeyID == "" || b.S3SecretAccessKey == "" {
		p.Note("blobs", "blobs.backend \"s3\" needs blobs.s3_access_key_id and blobs.s3_secret_access_key (or %s and %s)", EnvAWSAccessKeyID, EnvAWSSecretAccessKey)
	}
}
