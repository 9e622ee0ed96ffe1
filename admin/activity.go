package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"onboard/onboarding"
)

// The activity log command of the admin socket (docs/cli.md): onboard apps
// verify-log. Its answer is streamed as JSON lines, one per broken log as
// the walk finds it, then one with the counts (or an error), so that
// neither side holds a report of every log.

// VerifyLog selects the logs verify-log checks (onboarding.LogQuery).
type VerifyLog struct {
	OrgID string `json:"org,omitempty"`
	AppID string `json:"app,omitempty"`
}

// LogBreak is the first broken entry of one log.
type LogBreak struct {
	Subject   string `json:"subject"` // "application" or "rfi_request"
	SubjectID string `json:"subject_id"`
	EntryID   string `json:"entry_id,omitempty"`
	Problem   string `json:"problem"`
}

// LogReport counts what verify-log checked.
type LogReport struct {
	Applications int `json:"applications"`
	RFIRequests  int `json:"rfi_requests"`
	Entries      int `json:"entries"`
	Broken       int `json:"broken"`
}

// verifyLine is one line of the socket's answer: exactly one member
// is set.
type verifyLine struct {
	Broken *LogBreak  `json:"broken,omitempty"`
	Report *LogReport `json:"report,omitempty"`
	Error  string     `json:"error,omitempty"`
}

// VerifyLog checks the activity logs q selects, calling broken with the
// first broken entry of each broken log as it is found.
func (a Local) VerifyLog(ctx context.Context, q VerifyLog, broken func(LogBreak) error) (LogReport, error) {
	r, err := a.Service.VerifyActivityLogs(ctx, onboarding.LogQuery{OrgID: q.OrgID, AppID: q.AppID}, func(b onboarding.LogBreak) error {
		return broken(LogBreak{Subject: b.Subject, SubjectID: b.SubjectID, EntryID: b.EntryID, Problem: b.Problem})
	})
	if err != nil {
		return LogReport{}, err
	}
	return LogReport{Applications: r.Applications, RFIRequests: r.RFIRequests, Entries: r.Entries, Broken: r.Broken}, nil
}

// activityRoutes registers the activity log command on the admin socket.
func (s *handler) activityRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /apps/verify-log", func(w http.ResponseWriter, r *http.Request) {
		params, ok := s.query(w, r, "org", "app")
		if !ok {
			return
		}
		q := VerifyLog{OrgID: params.Get("org"), AppID: params.Get("app")}
		enc := json.NewEncoder(w)
		started := false
		line := func(l verifyLine) error {
			if !started {
				w.Header().Set("Content-Type", "application/x-ndjson")
				w.WriteHeader(http.StatusOK)
				started = true
			}
			if err := enc.Encode(l); err != nil {
				return err
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			return nil
		}
		report, err := s.local.VerifyLog(r.Context(), q, func(b LogBreak) error { return line(verifyLine{Broken: &b}) })
		switch {
		case err != nil && !started:
			s.fail(w, err) // nothing sent yet: the usual error answer
		case err != nil:
			status, msg := s.answer(err)
			if status == http.StatusInternalServerError {
				s.log.Error("admin request failed", "err", err)
			}
			_ = line(verifyLine{Error: msg})
		default:
			_ = line(verifyLine{Report: &report})
		}
	})
}

// VerifyLog checks activity logs through the running server, calling
// broken for each broken log as the server reports it. It has no overall
// timeout: a large store takes as long as it takes; ctx bounds it.
func (c *Client) VerifyLog(ctx context.Context, q VerifyLog, broken func(LogBreak) error) (LogReport, error) {
	v := url.Values{}
	if q.OrgID != "" {
		v.Set("org", q.OrgID)
	}
	if q.AppID != "" {
		v.Set("app", q.AppID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://admin/apps/verify-log?"+v.Encode(), nil)
	if err != nil {
		return LogReport{}, err
	}
	hc := *c.http
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return LogReport{}, fmt.Errorf("admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return LogReport{}, fmt.Errorf("admin socket: %s", resp.Status)
		}
		return LogReport{}, errors.New(e.Error)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var l verifyLine
		switch err := dec.Decode(&l); {
		case errors.Is(err, io.EOF):
			return LogReport{}, errors.New("admin socket: the answer ended before its report")
		case err != nil:
			return LogReport{}, fmt.Errorf("admin socket: %w", err)
		}
		switch {
		case l.Broken != nil:
			if err := broken(*l.Broken); err != nil {
				return LogReport{}, err
			}
		case l.Report != nil:
			return *l.Report, nil
		case l.Error != "":
			return LogReport{}, errors.New(l.Error)
		default:
			return LogReport{}, errors.New("admin socket: an answer line with nothing in it")
		}
	}
}
