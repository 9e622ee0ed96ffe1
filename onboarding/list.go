package onboarding

import (
	"context"
	"encoding/base64"
	"fmt"

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

// PageRequest asks for one page of a list: how many items, and where the
// page before ended.
type PageRequest struct {
	Limit  int    // 1 to MaxListLimit
	Cursor Cursor // zero: the first page
}

// Page is one page of a list: its items, whether more follow, and the
// cursor of the next page (empty at the end).
type Page[T any] struct {
	Items      []T
	HasMore    bool
	NextCursor string
}

// newPage is the page of items, with more following when more: its next
// cursor names the last item (by its seq) under the list's filter.
func newPage[T any](items []T, more bool, seq func(T) ulid.ULID, filter string) *Page[T] {
	p := &Page[T]{Items: items, HasMore: more}
	if more && len(items) > 0 {
		p.NextCursor = encodeCursor(seq(items[len(items)-1]), filter)
	}
	return p
}

// ListApplications returns a page of k's organization's applications,
// newest first: of one status, or of every status when status is empty.
func (s *Service) ListApplications(ctx context.Context, k *APIKey, status Status, req PageRequest) (*Page[*Application], error) {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return nil, err
	}
	q := ListQuery{OrgID: k.OrgID, Status: status, Limit: req.Limit}
	var err error
	if q.Before, err = req.Cursor.after(string(q.Status)); err != nil {
		return nil, err
	}
	apps, more, err := s.store.ListApplications(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	return newPage(apps, more, func(a *Application) ulid.ULID { return a.Seq }, string(q.Status)), nil
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
	cur, err := ParseCursor(c)
	if err != nil {
		return ulid.ULID{}, err
	}
	return cur.after(filter)
}

// Cursor is a list cursor as a client sent it back, decoded. The zero
// value is no cursor: the first page.
type Cursor struct {
	seq    ulid.ULID
	filter string
}

// ParseCursor decodes a cursor this service wrote; ErrInvalidCursor for
// anything else. Whether it belongs to the list it is used with, with the
// same filter, is checked by the list.
func ParseCursor(c string) (Cursor, error) {
	var cur Cursor
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 17 || b[0] != cursorVersion {
		return Cursor{}, ErrInvalidCursor
	}
	copy(cur.seq[:], b[1:17])
	if cur.seq == (ulid.ULID{}) {
		return Cursor{}, ErrInvalidCursor
	}
	cur.filter = string(b[17:])
	return cur, nil
}

// after returns the item the page resumes after: zero for no cursor, and
// ErrInvalidCursor for a cursor written for another list or filter.
func (c Cursor) after(filter string) (ulid.ULID, error) {
	if c.seq == (ulid.ULID{}) {
		return ulid.ULID{}, nil
	}
	if c.filter != filter {
		return ulid.ULID{}, ErrInvalidCursor
	}
	return c.seq, nil
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
