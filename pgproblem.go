package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"

	"onboard/config"
)

// postgresProblem turns an error of opening the PostgreSQL store into
// what the operator must fix, naming storage.postgres_url. Nothing in it
// shows the URL's password: the driver's connection errors name only the
// host, the user and the database.
func postgresProblem(err error) error {
	const key = "storage.postgres_url"
	var pe *pgconn.PgError
	var dns *net.DNSError
	var op *net.OpError
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &pe):
		switch pe.Code {
		case "28P01": // invalid_password
			return fmt.Errorf("%s: PostgreSQL refused the password (%s): check the password in the URL (or %s)", key, pe.Message, config.EnvPostgresURL)
		case "28000": // invalid_authorization_specification: no such role, or pg_hba.conf has no entry
			return fmt.Errorf("%s: PostgreSQL refused the connection: %s", key, pe.Message)
		case "3D000": // invalid_catalog_name
			return fmt.Errorf("%s: %s: create it (CREATE DATABASE) or name an existing database in the URL", key, pe.Message)
		case "42501": // insufficient_privilege
			return fmt.Errorf("%s: the role may not create or change onboard's tables (%s): grant it CREATE on the database and its schema: onboard creates and migrates its tables at start", key, pe.Message)
		}
		return fmt.Errorf("%s: PostgreSQL: %s (SQLSTATE %s)", key, pe.Message, pe.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: PostgreSQL did not answer within %s: check the URL's host and port, and that the server runs", key, openTimeout)
	case errors.As(err, &dns):
		return fmt.Errorf("%s: cannot find the database's host %s: %v", key, dns.Name, dns.Err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%s: cannot connect to PostgreSQL at %s: %v: check the URL's host and port, and that the server runs", key, op.Addr, op.Err)
	case errors.As(err, &ce):
		return fmt.Errorf("%s: cannot connect to PostgreSQL: %v", key, errors.Unwrap(ce))
	}
	return fmt.Errorf("%s: %w", key, err)
}
