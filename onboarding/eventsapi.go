package onboarding

import (
	"context"
	"errors"
	"fmt"

	"github.com/oklog/ulid/v2"
)

// The events API (docs/webhooks.md): an organization's events of the last
// EventRetention, newest first, each exactly the body its webhooks carry,
// so a partner whose endpoint was down reconciles from here.

// eventsCursorFilter starts the filter of every events cursor, so that a
// cursor of list applications is never taken for one of list events, nor
// the other way round.
const eventsCursorFilter = "events:"

// ListEvents returns a page of k's organization's events, newest first:
// of one type, or of every type when typ is empty.
func (s *Service) ListEvents(ctx context.Context, k *APIKey, typ EventType, req PageRequest) (*Page[*Event], error) {
	if err := Authorize(k, ScopeEventsRead); err != nil {
		return nil, err
	}
	q := EventQuery{OrgID: k.OrgID, Type: typ, Limit: req.Limit}
	before, err := req.Cursor.after(eventsCursorFilter + string(q.Type))
	if err != nil {
		return nil, err
	}
	if before != (ulid.ULID{}) {
		q.Before = eventIDPrefix + before.String()
	}
	events, more, err := s.store.Events(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return newPage(events, more, (*Event).Seq, eventsCursorFilter+string(q.Type)), nil
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
