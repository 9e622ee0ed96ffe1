package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"onboard/onboarding"
)

// Backuper writes a backup archive of the data directory to w. Main wires
// the one implementation, which the CLI also runs when no server holds the
// data directory.
type Backuper interface {
	Backup(ctx context.Context, w io.Writer) error
}

// Options are what the admin socket's handler serves.
type Options struct {
	// Service runs the commands.
	Service *onboarding.Service
	// Backup makes the archives of onboard backup; without it, a backup
	// request answers 503.
	Backup Backuper
	// Answer is the status and error message an error is answered with,
	// the JSON API's error table, so that a command gets the same message
	// through the socket as on the store opened directly.
	Answer func(error) (status int, message string)
	// Logger logs the requests that failed unexpectedly; default discard.
	Logger *slog.Logger
}

// Local runs the admin commands on a Service: the admin socket's handler
// does, and so does the CLI when no server holds the data directory, so
// both paths behave the same.
type Local struct{ Service *onboarding.Service }

// handler serves the admin socket.
type handler struct {
	svc    *onboarding.Service
	local  Local // the commands themselves, run on svc as the CLI's direct path runs them
	backup Backuper
	answer func(error) (int, string)
	log    *slog.Logger
}

// errorBody is the answer of a request that failed.
type errorBody struct {
	Error string `json:"error"`
}

// NewHandler returns the admin socket's handler.
func NewHandler(opts Options) http.Handler {
	s := &handler{svc: opts.Service, local: Local{opts.Service}, backup: opts.Backup, answer: opts.Answer, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		var req CreateKey
		if !s.decode(w, r, &req) {
			return
		}
		created, err := s.local.CreateKey(r.Context(), req)
		s.reply(w, http.StatusCreated, created, err)
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.query(w, r, "org")
		if !ok {
			return
		}
		keys, err := s.local.ListKeys(r.Context(), q.Get("org"))
		s.reply(w, http.StatusOK, keys, err)
	})
	mux.HandleFunc("POST /keys/{id}/revoke", func(w http.ResponseWriter, r *http.Request) {
		k, err := s.local.RevokeKey(r.Context(), r.PathValue("id"))
		s.reply(w, http.StatusOK, k, err)
	})
	mux.HandleFunc("POST /docs/override", func(w http.ResponseWriter, r *http.Request) {
		var req DocumentOverride
		if !s.decode(w, r, &req) {
			return
		}
		d, err := s.local.OverrideDocument(r.Context(), req)
		s.reply(w, http.StatusOK, d, err)
	})
	s.webhookRoutes(mux)
	s.activityRoutes(mux)
	s.exportRoutes(mux)
	s.backupRoutes(mux)
	return mux
}

// reply answers v with status, or err when it is not nil.
func (s *handler) reply(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	write(w, status, v)
}

// fail answers err with its status and message, logging an unexpected
// one.
func (s *handler) fail(w http.ResponseWriter, err error) {
	status, msg := s.answer(err)
	if status == http.StatusInternalServerError {
		s.log.Error("admin request failed", "err", err)
	}
	write(w, status, errorBody{Error: msg})
}

// write answers v as JSON with status.
func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
