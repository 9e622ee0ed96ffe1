package onboarding

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/oklog/ulid/v2"
)

// The events API (DESIGN §5.7): an organization's events of the last
// EventRetention, newest first, each exactly the body its webhooks carry,
// so a partner whose endpoint was down reconciles from here.

// EventPage is one page of list events.
type EventPage struct {
	Events     []*Event
	HasMore    bool
	NextCursor string // empty at the end
}

// ListEvents returns a page of k's organization's events, newest first.
// typ, limit and cursor are the raw query parameters, checked in that
// order with the rules of list applications (spec 4.3).
func (s *Service) ListEvents(ctx context.Context, k *APIKey, typ, limit, cursor string) (*EventPage, error) {
	if err := Authorize(k, ScopeEventsRead); err != nil {
		return nil, err
	}
	q := EventQuery{OrgID: k.OrgID, Limit: DefaultListLimit}
	if typ != "" {
		t, err := ParseEventType(typ)
		if err != nil {
			return nil, err
		}
		q.Type = t
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > MaxListLimit {
			return nil, ErrInvalidLimit
		}
		q.Limit = n
	}
	if cursor != "" {
		before, err := decodeEventCursor(cursor, q.Type)
		if err != nil {
			return nil, err
		}
		q.Before = before
	}
	events, more, err := s.store.Events(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	page := &EventPage{Events: events, HasMore: more}
	if more && len(events) > 0 {
		page.NextCursor = encodeEventCursor(events[len(events)-1].Seq(), q.Type)
	}
	return page, nil
}

// GetEvent returns one event of k's organization.
func (s *Service) GetEvent(ctx context.Context, k *APIKey, id string) (*Event, error) {
	if err := Authorize(k, ScopeEventsRead); err != nil {
		return nil, err
	}
	if _, ok := EventSeq(id); !ok {
		return nil, ErrEventNotFound
	}
	e, err := s.store.Event(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrEventNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load event: %w", err)
	}
	if e.OrgID != k.OrgID {
		return nil, ErrEventNotFound
	}
	return e, nil
}

// An event cursor is base64url(version, event ULID, type filter): it names
// the last event returned, and is only valid with the same type filter.
func encodeEventCursor(seq ulid.ULID, t EventType) string {
	b := make([]byte, 0, 1+16+len(t))
	b = append(b, cursorVersion)
	b = append(b, seq[:]...)
	b = append(b, t...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeEventCursor(c string, t EventType) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 17 || b[0] != cursorVersion || EventType(b[17:]) != t {
		return "", ErrInvalidCursor
	}
	var seq ulid.ULID
	copy(seq[:], b[1:17])
	if seq == (ulid.ULID{}) {
		return "", ErrInvalidCursor
	}
	return eventIDPrefix + seq.String(), nil
}
