package onboarding

import (
	"context"
	"fmt"
	"iter"

	"github.com/oklog/ulid/v2"
)

// The activity log API: an application's activity entries,
// oldest first, each with its link in the log's hash chain
// (activitychain.go).

// LoggedActivity is an activity entry as its log holds it.
type LoggedActivity struct {
	// Seq is the entry's place in its log: entries list in Seq order, and
	// each appended entry gets a Seq above the log's last.
	Seq ulid.ULID
	Activity
	// Prev is the hash the entry was chained after: the previous entry's
	// Hash, or the log's ActivityChainStart for the first entry.
	Prev string
	// Hash is ActivityHash(Prev, entry), or empty for an entry stored
	// without one.
	Hash string
}

// ActivityHead is where a log ends: its last entry's Seq and Hash, stored
// beside the log with every append, so that removing the log's last
// entries shows.
type ActivityHead struct {
	Seq  ulid.ULID
	Hash string
}

// ActivityStore reads activity logs. The Store appends to them in the
// transactions of CreateApplication, UpdateApplication, CreateRFIRequest
// and UpdateRFIRequest, computing each entry's Hash and moving the head.
type ActivityStore interface {
	// ActivityAfter returns up to limit entries of subjectID's log that
	// follow after (zero: from the first), oldest first, and whether more
	// follow.
	ActivityAfter(ctx context.Context, subjectID string, after ulid.ULID, limit int) ([]LoggedActivity, bool, error)
	// ActivityLog reads subjectID's log from one snapshot and calls walk
	// with its head (nil when it has none) and its entries, oldest first.
	// walk's error is returned.
	ActivityLog(ctx context.Context, subjectID string, walk func(head *ActivityHead, entries iter.Seq2[*LoggedActivity, error]) error) error
}

// ActorApplicant is the actor type the API shows for an applicant at the
// form or the RFI page (stored as ActorParticipant).
const ActorApplicant = "applicant"

// activityIDPrefix starts the API id of an activity entry, "act_" + Seq.
const activityIDPrefix = "act_"

// ActivityEntryView is an activity entry as the API shows it.
type ActivityEntryView struct {
	ID     string    `json:"id"`
	At     string    `json:"at"`
	Actor  ActorView `json:"actor"`
	Action string    `json:"action"`
	// Fields are the field ids the entry changed; empty, never null.
	Fields []string `json:"fields"`
	Detail *string  `json:"detail"`
	Hash   string   `json:"hash"`
}

// ActorView is who caused an activity, with the members that apply: an
// api_key's client id and name, an applicant's participant id and email
// address; an operator or the system has none.
type ActorView struct {
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// ActivityEntryID is the API id of the entry at seq.
func ActivityEntryID(seq ulid.ULID) string { return activityIDPrefix + seq.String() }

// View returns e as the API shows it.
func (e *LoggedActivity) View() ActivityEntryView {
	v := ActivityEntryView{
		ID: ActivityEntryID(e.Seq), At: Timestamp(e.At), Action: e.Action,
		Actor: actorView(e.Actor), Fields: e.Fields, Hash: e.Hash,
	}
	if v.Fields == nil {
		v.Fields = []string{}
	}
	if e.Detail != "" {
		d := e.Detail
		v.Detail = &d
	}
	return v
}

// actorView maps a stored actor to the API's: a participant is an
// applicant, whose stored Name is the email address.
func actorView(a Actor) ActorView {
	if a.Type == ActorParticipant {
		return ActorView{Type: ActorApplicant, ID: a.ID, Email: a.Name}
	}
	return ActorView{Type: a.Type, ID: a.ID, Name: a.Name}
}

// activityCursorFilter starts the filter of every activity cursor, which
// names the application too: a cursor of one log is not valid for another,
// nor for another list.
const activityCursorFilter = "activity:"

// ListActivity returns a page of the activity log of an application of
// k's organization, oldest first. The cursor is checked before the
// application is looked up.
func (s *Service) ListActivity(ctx context.Context, k *APIKey, appID string, req PageRequest) (*Page[ActivityEntryView], error) {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return nil, err
	}
	n := req.Limit
	after, err := req.Cursor.after(activityCursorFilter + appID)
	if err != nil {
		return nil, err
	}
	app, err := s.application(ctx, k, appID)
	if err != nil {
		return nil, err
	}
	entries, more, err := s.store.ActivityAfter(ctx, app.ID, after, n)
	if err != nil {
		return nil, fmt.Errorf("list activity: %w", err)
	}
	page := newPage(entries, more, func(e LoggedActivity) ulid.ULID { return e.Seq }, activityCursorFilter+app.ID)
	views := &Page[ActivityEntryView]{Items: make([]ActivityEntryView, len(entries)), HasMore: page.HasMore, NextCursor: page.NextCursor}
	for i := range entries {
		views.Items[i] = entries[i].View()
	}
	return views, nil
}
