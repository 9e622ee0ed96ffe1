package onboarding

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Verifying activity logs (onboard apps verify-log): every entry's hash is
// recomputed from what is stored and compared with the stored one, and
// each log's end with its head, so that an edit, an insertion or a removal
// of stored history shows, named by the first broken entry of its log.

// The subjects whose activity is logged.
const (
	SubjectApplication = "application"
	SubjectRFIRequest  = "rfi_request"
)

// LogQuery selects the logs VerifyActivityLogs checks: the log of AppID
// (an application or an RFI request) when set, else those of every
// application and RFI request of OrgID, else of every configured
// organization.
type LogQuery struct {
	OrgID string
	AppID string
}

// LogBreak is the first broken entry of one log.
type LogBreak struct {
	Subject   string // SubjectApplication or SubjectRFIRequest
	SubjectID string
	// EntryID is the API id of the broken entry (of a missing one, when
	// the head names it); empty when the log has no entry to name.
	EntryID string
	Problem string // what is wrong, in a sentence
}

// LogReport counts what VerifyActivityLogs checked.
type LogReport struct {
	Applications int
	RFIRequests  int
	Entries      int // entries whose hash was recomputed
	Broken       int // logs with a break
}

// verifyPage is how many applications or RFI requests one read lists.
const verifyPage = 100

// VerifyActivityLogs checks the hash chains of the logs q selects and
// calls broken with the first broken entry of each broken log, as it
// finds them; broken's error stops the walk. It reads one page of subjects
// and one log at a time, so memory does not grow with their number, and
// each log from one snapshot, so that entries appended meanwhile (a
// running server) are not mistaken for tampering.
func (s *Service) VerifyActivityLogs(ctx context.Context, q LogQuery, broken func(LogBreak) error) (LogReport, error) {
	var r LogReport
	check := func(subject, id string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch subject {
		case SubjectApplication:
			r.Applications++
		default:
			r.RFIRequests++
		}
		n, brk, err := s.verifyLog(ctx, subject, id)
		r.Entries += n
		if err != nil || brk == nil {
			return err
		}
		r.Broken++
		return broken(*brk)
	}
	if _, ok := s.orgs[q.OrgID]; q.OrgID != "" && !ok {
		return r, Errorf(KindInvalid, "unknown organization '%s'", q.OrgID)
	}
	if q.AppID != "" {
		subject, err := s.logSubject(ctx, q)
		if err != nil {
			return r, err
		}
		return r, check(subject, q.AppID)
	}
	orgs := []string{q.OrgID}
	if q.OrgID == "" {
		orgs = orgs[:0]
		for id := range s.orgs {
			orgs = append(orgs, id)
		}
		slices.Sort(orgs)
	}
	for _, org := range orgs {
		if err := s.eachSubject(ctx, org, check); err != nil {
			return r, err
		}
	}
	return r, nil
}

// logSubject returns what q.AppID names: an application or an RFI request
// (of q.OrgID, when set). Only canonical ids name one.
func (s *Service) logSubject(ctx context.Context, q LogQuery) (string, error) {
	if u, err := uuid.Parse(q.AppID); err != nil || u.String() != q.AppID {
		return "", ErrOverrideAppNotFound(q.AppID)
	}
	app, err := s.store.Application(ctx, q.AppID)
	if err == nil && (q.OrgID == "" || app.OrgID == q.OrgID) {
		return SubjectApplication, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("load application: %w", err)
	}
	r, err := s.store.RFIRequest(ctx, q.AppID)
	if err == nil && (q.OrgID == "" || r.OrgID == q.OrgID) {
		return SubjectRFIRequest, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("load rfi request: %w", err)
	}
	return "", ErrOverrideAppNotFound(q.AppID)
}

// eachSubject calls fn with every application, then every RFI request, of
// org, newest first, a page at a time.
func (s *Service) eachSubject(ctx context.Context, org string, fn func(subject, id string) error) error {
	for before := (ulid.ULID{}); ; {
		apps, more, err := s.store.ListApplications(ctx, ListQuery{OrgID: org, Before: before, Limit: verifyPage})
		if err != nil {
			return fmt.Errorf("list applications: %w", err)
		}
		for _, a := range apps {
			if err := fn(SubjectApplication, a.ID); err != nil {
				return err
			}
			before = a.Seq
		}
		if !more || len(apps) == 0 {
			break
		}
	}
	for before := (ulid.ULID{}); ; {
		rs, more, err := s.store.ListRFIRequests(ctx, RFIListQuery{OrgID: org, Before: before, Limit: verifyPage})
		if err != nil {
			return fmt.Errorf("list rfi requests: %w", err)
		}
		for _, r := range rs {
			if err := fn(SubjectRFIRequest, r.ID); err != nil {
				return err
			}
			before = r.Seq
		}
		if !more || len(rs) == 0 {
			return nil
		}
	}
}

// verifyLog checks the log of subject id: it returns how many entries it
// recomputed and the first break, or nil when the log is whole.
func (s *Service) verifyLog(ctx context.Context, subject, id string) (int, *LogBreak, error) {
	n := 0
	var brk *LogBreak
	err := s.store.ActivityLog(ctx, id, func(head *ActivityHead, entries iter.Seq2[*LoggedActivity, error]) error {
		at := func(seq ulid.ULID, problem string, args ...any) error {
			brk = &LogBreak{Subject: subject, SubjectID: id, EntryID: ActivityEntryID(seq), Problem: fmt.Sprintf(problem, args...)}
			return nil
		}
		prev := ActivityChainStart(id)
		var last ulid.ULID // zero: no entry yet
		for e, err := range entries {
			if err != nil {
				return err
			}
			n++
			if problem := chainProblem(e, prev, last); problem != "" {
				return at(e.Seq, "%s", problem)
			}
			if head != nil && e.Seq.Compare(head.Seq) > 0 {
				return at(e.Seq, "it was added after the log's last entry %s: its head does not name it", ActivityEntryID(head.Seq))
			}
			prev, last = e.Hash, e.Seq
		}
		switch {
		case head == nil && n == 0:
			brk = &LogBreak{Subject: subject, SubjectID: id, Problem: "the log is empty and has no head: every entry and the head were removed"}
		case head == nil:
			return at(last, "the log's head is missing, so entries after this one may have been removed too")
		case n == 0:
			return at(head.Seq, "it is missing: the log's head names it as the last entry, but the log has none")
		case head.Seq != last:
			return at(head.Seq, "it is missing: the log ends at %s, but its head names this entry as the last", ActivityEntryID(last))
		case head.Hash != prev:
			return at(last, "its hash is not the one the log's head recorded: the entry was rewritten")
		}
		return nil
	})
	if err != nil {
		return n, nil, fmt.Errorf("verify the activity log of %s %s: %w", subject, id, err)
	}
	return n, brk, nil
}

// chainProblem says what is wrong with e, which follows the entry at last
// (zero: none) whose hash is prev; "" when nothing is.
func chainProblem(e *LoggedActivity, prev string, last ulid.ULID) string {
	switch {
	case e.Hash == "":
		return "it has no hash"
	case ActivityHash(e.Prev, e) != e.Hash:
		return "its content does not match its hash: the entry was edited"
	case e.Prev != prev && last == (ulid.ULID{}):
		return "it does not start the log's chain: entries before it were removed, or it was moved from another log"
	case e.Prev != prev:
		return fmt.Sprintf("it does not follow %s: that entry was rewritten, or entries between them were removed", ActivityEntryID(last))
	}
	return ""
}
