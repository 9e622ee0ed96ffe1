package onboarding

import (
	"context"
	"errors"
	"fmt"
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

// eventsCursorFilter starts the filter of every events cursor, so that a
// cursor of list applications is never taken for one of list events, nor
// the other way round.
const eventsCursorFilter = "events:"

// ListEvents returns a page of k's organization's events, newest first.
// typ, limit and cursor are the raw query parameters, checked in that
// order with the rules of list applications (spec 4.3).
func (s *Service) ListEvents(ctx context.Context, k *APIKey, typ, limit, cursor string) (*EventPage, error) {
	if err := Authorize(k, ScopeEventsRead); err != nil {
		return nil, err
	}
	q := EventQuery{OrgID: k.OrgID}
	if typ != "" {
		t, err := ParseEventType(typ)
		if err != nil {
			return nil, err
		}
		q.Type = t
	}
	var err error
	if q.Limit, err = parseLimit(limit); err != nil {
		return nil, err
	}
	if cursor != "" {
		before, err := decodeCursor(cursor, eventsCursorFilter+string(q.Type))
		if err != nil {
			return nil, err
		}
		q.Before = eventIDPrefix + before.String()
	}
	events, more, err := s.store.Events(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	page := &EventPage{Events: events, HasMore: more}
	if more && len(events) > 0 {
		page.NextCursor = encodeCursor(events[len(events)-1].Seq(), eventsCursorFilter+string(q.Type))
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
