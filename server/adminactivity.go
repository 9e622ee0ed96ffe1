package server

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

// The activity log command of the admin socket (DESIGN §4): onboard apps
// verify-log. Its answer is streamed as JSON lines, one per broken log as
// the walk finds it, then one with the counts (or an error), so that
// neither side holds a report of every log.

// AdminVerifyLog selects the logs verify-log checks (onboarding.LogQuery).
type AdminVerifyLog struct {
	OrgID string `json:"org,omitempty"`
	AppID string `json:"app,omitempty"`
}

// AdminLogBreak is the first broken entry of one log.
type AdminLogBreak struct {
	Subject   string `json:"subject"` // "application" or "rfi_request"
	SubjectID string `json:"subject_id"`
	EntryID   string `json:"entry_id,omitempty"`
	Problem   string `json:"problem"`
}

// AdminLogReport counts what verify-log checked.
type AdminLogReport struct {
	Applications int `json:"applications"`
	RFIRequests  int `json:"rfi_requests"`
	Entries      int `json:"entries"`
	Broken       int `json:"broken"`
}

// adminVerifyLine is one line of the socket's answer: exactly one member
// is set.
type adminVerifyLine struct {
	Broken *AdminLogBreak  `json:"broken,omitempty"`
	Report *AdminLogReport `json:"report,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ActivityAdmin runs verify-log on a Service, for the admin socket and
// for the CLI's direct path alike.
type ActivityAdmin struct{ Service *onboarding.Service }

// VerifyLog checks the activity logs q selects, calling broken with the
// first broken entry of each broken log as it is found.
func (a ActivityAdmin) VerifyLog(ctx context.Context, q AdminVerifyLog, broken func(AdminLogBreak) error) (AdminLogReport, error) {
	r, err := a.Service.VerifyActivityLogs(ctx, onboarding.LogQuery{OrgID: q.OrgID, AppID: q.AppID}, func(b onboarding.LogBreak) error {
		return broken(AdminLogBreak{Subject: b.Subject, SubjectID: b.SubjectID, EntryID: b.EntryID, Problem: b.Problem})
	})
	if err != nil {
		return AdminLogReport{}, err
	}
	return AdminLogReport{Applications: r.Applications, RFIRequests: r.RFIRequests, Entries: r.Entries, Broken: r.Broken}, nil
}

// activityRoutes registers the activity log command on the admin socket.
func (s *Server) activityRoutes(mux *http.ServeMux) {
	admin := ActivityAdmin{s.svc}
	mux.HandleFunc("GET /apps/verify-log", func(w http.ResponseWriter, r *http.Request) {
		q := AdminVerifyLog{OrgID: r.URL.Query().Get("org"), AppID: r.URL.Query().Get("app")}
		enc := json.NewEncoder(w)
		started := false
		line := func(l adminVerifyLine) error {
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
		report, err := admin.VerifyLog(r.Context(), q, func(b AdminLogBreak) error { return line(adminVerifyLine{Broken: &b}) })
		switch {
		case err != nil && !started:
			s.adminError(w, err) // nothing sent yet: the usual error answer
		case err != nil:
			f := failureOf(err)
			if f.unexpected() {
				s.log.Error("admin request failed", "err", err)
			}
			_ = line(adminVerifyLine{Error: f.body.Error})
		default:
			_ = line(adminVerifyLine{Report: &report})
		}
	})
}

// VerifyLog checks activity logs through the running server, calling
// broken for each broken log as the server reports it. It has no overall
// timeout: a large store takes as long as it takes; ctx bounds it.
func (c *AdminClient) VerifyLog(ctx context.Context, q AdminVerifyLog, broken func(AdminLogBreak) error) (AdminLogReport, error) {
	v := url.Values{}
	if q.OrgID != "" {
		v.Set("org", q.OrgID)
	}
	if q.AppID != "" {
		v.Set("app", q.AppID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://admin/apps/verify-log?"+v.Encode(), nil)
	if err != nil {
		return AdminLogReport{}, err
	}
	hc := *c.http
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return AdminLogReport{}, fmt.Errorf("admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return AdminLogReport{}, fmt.Errorf("admin socket: %s", resp.Status)
		}
		return AdminLogReport{}, errors.New(e.Error)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var l adminVerifyLine
		switch err := dec.Decode(&l); {
		case errors.Is(err, io.EOF):
			return AdminLogReport{}, errors.New("admin socket: the answer ended before its report")
		case err != nil:
			return AdminLogReport{}, fmt.Errorf("admin socket: %w", err)
		}
		switch {
		case l.Broken != nil:
			if err := broken(*l.Broken); err != nil {
				return AdminLogReport{}, err
			}
		case l.Report != nil:
			return *l.Report, nil
		case l.Error != "":
			return AdminLogReport{}, errors.New(l.Error)
		default:
			return AdminLogReport{}, errors.New("admin socket: an answer line with nothing in it")
		}
	}
}
