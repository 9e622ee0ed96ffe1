package onboarding

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/oklog/ulid/v2"
)

// List page sizes.
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
)

// cursorVersion is the first byte of every cursor, so that the format can
// change without misreading old cursors.
const cursorVersion = 1

// ListPage is one page of list applications.
type ListPage struct {
	Applications []*Application
	HasMore      bool
	NextCursor   string // empty at the end
}

// ListApplications returns a page of k's organization's applications,
// newest first. status, limit and cursor are the raw query parameters.
func (s *Service) ListApplications(ctx context.Context, k *APIKey, status, limit, cursor string) (*ListPage, error) {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return nil, err
	}
	q := ListQuery{OrgID: k.OrgID}
	if status != "" {
		st, err := ParseStatus(status)
		if err != nil {
			return nil, err
		}
		q.Status = st
	}
	var err error
	if q.Limit, err = parseLimit(limit); err != nil {
		return nil, err
	}
	if cursor != "" {
		before, err := decodeCursor(cursor, string(q.Status))
		if err != nil {
			return nil, err
		}
		q.Before = before
	}
	apps, more, err := s.store.ListApplications(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	page := &ListPage{Applications: apps, HasMore: more}
	if more && len(apps) > 0 {
		page.NextCursor = encodeCursor(apps[len(apps)-1].Seq, string(q.Status))
	}
	return page, nil
}

// A cursor is base64url(version, seq, filter): it names the last item
// returned (an application's Seq, an event's ULID), and is only valid with
// the same filter (a status, an event type, or none).
func encodeCursor(seq ulid.ULID, filter string) string {
	b := make([]byte, 0, 1+16+len(filter))
	b = append(b, cursorVersion)
	b = append(b, seq[:]...)
	b = append(b, filter...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string, filter string) (ulid.ULID, error) {
	var seq ulid.ULID
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 17 || b[0] != cursorVersion || string(b[17:]) != filter {
		return seq, ErrInvalidCursor
	}
	copy(seq[:], b[1:17])
	if seq == (ulid.ULID{}) {
		return seq, ErrInvalidCursor
	}
	return seq, nil
}

// parseLimit reads a list's limit parameter: empty is the
// default page size.
func parseLimit(raw string) (int, error) {
	if raw == "" {
		return DefaultListLimit, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > MaxListLimit {
		return 0, ErrInvalidLimit
	}
	return n, nil
}

// ReadApplication calls read with an application of k's organization as
// the store shares it, without copying it (Store.ReadApplication): read
// must not change it or keep any part of it once it returns. Nothing
// changes an application once read has it (a new version is a new
// application), so a reader may keep what it derives from one by its
// address, as get-application's rendered answers are kept.
func (s *Service) ReadApplication(ctx context.Context, k *APIKey, id string, read func(*Application) error) error {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return err
	}
	return s.readApplication(ctx, k, id, read)
}

// FieldCatalog returns the form of an application of k's organization; its
// Fields are the catalog in form order.
func (s *Service) FieldCatalog(ctx context.Context, k *APIKey, id string) (*Application, *Form, error) {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return nil, nil, err
	}
	app, err := s.application(ctx, k, id)
	if err != nil {
		return nil, nil, err
	}
	form, err := s.formOf(app)
	if err != nil {
		return nil, nil, err
	}
	return app, form, nil
}

// formOf returns the form of app's configuration. A configuration removed
// from the file while applications still use it is an operator error,
// reported as an internal one.
func (s *Service) formOf(app *Application) (*Form, error) {
	cfg, ok := s.configs[app.ConfigID]
	if !ok {
		return nil, fmt.Errorf("application %s: configuration %q is no longer configured", app.ID, app.ConfigID)
	}
	return cfg.Form, nil
}
