package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"

	"onboard/onboarding"
)

// The export of the admin socket (docs/cli.md, onboard apps export while serve
// runs). GET /apps/export?org=&status=&since=&format=&documents=true checks
// the query first and answers a refusal as every admin route does (a status
// and {"error"}). Once the export runs, the answer is 200 and a
// multipart/mixed body streamed with chunked encoding, so that neither side
// holds more than a part buffer, whatever the number of applications:
//
//   - rows parts: Content-Type the export's, Export-Applications the number
//     of applications whose rows the part ends (cut after an application,
//     every exportPartBytes or so);
//   - file parts, each after the rows of its application:
//     application/octet-stream with Export-Application, Export-File-Id and
//     Export-File-Name, each query-escaped;
//   - one last part with Export-End "ok" and the onboarding.ExportSummary as
//     JSON, or Export-End "error" and {"error"}: a failure midway cannot
//     change the status any more. A body without it was cut short.

// exportPartBytes is the size at which rows are sent as a part.
const exportPartBytes = 64 << 10

// The headers of the export's parts.
const (
	exportAppsHeader     = "Export-Applications"
	exportAppHeader      = "Export-Application"
	exportFileIDHeader   = "Export-File-Id"
	exportFileNameHeader = "Export-File-Name"
	exportEndHeader      = "Export-End"
)

// Export checks q, then streams the export into sink.
func (a Local) Export(ctx context.Context, q onboarding.ExportQuery, sink onboarding.ExportSink) (onboarding.ExportSummary, error) {
	x, err := a.Service.NewExport(q)
	if err != nil {
		return onboarding.ExportSummary{}, err
	}
	return x.Run(ctx, sink)
}

// exportRoutes adds the export to the admin socket's mux.
func (s *handler) exportRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /apps/export", func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.query(w, r, "org", "status", "since", "format", "documents")
		if !ok {
			return
		}
		x, err := s.svc.NewExport(onboarding.ExportQuery{
			OrgID: q.Get("org"), Status: q.Get("status"), Since: q.Get("since"), Format: q.Get("format"),
			Documents: q.Get("documents") == "true",
		})
		if err != nil {
			s.fail(w, err)
			return
		}
		parts := &exportParts{mw: multipart.NewWriter(w), rc: http.NewResponseController(w), rowsType: x.ContentType()}
		w.Header().Set("Content-Type", "multipart/mixed; boundary="+parts.mw.Boundary())
		w.WriteHeader(http.StatusOK)
		sum, err := x.Run(r.Context(), parts)
		if err == nil {
			err = parts.flushRows()
		}
		if err != nil {
			status, msg := s.answer(err)
			if status == http.StatusInternalServerError && r.Context().Err() == nil {
				s.log.Error("admin export failed", "err", err)
			}
			_ = parts.end("error", errorBody{Error: msg})
			return
		}
		_ = parts.end("ok", sum)
	})
}

// exportParts is the ExportSink of the admin socket: it writes the export
// as the parts described above.
type exportParts struct {
	mw       *multipart.Writer
	rc       *http.ResponseController
	rowsType string
	rows     bytes.Buffer // rows not sent yet
	apps     int          // applications whose rows ended in rows
}

func (p *exportParts) Write(b []byte) (int, error) { return p.rows.Write(b) }

// Exported sends the rows once they pass exportPartBytes.
func (p *exportParts) Exported() error {
	p.apps++
	if p.rows.Len() < exportPartBytes {
		return nil
	}
	return p.flushRows()
}

// File sends the rows so far, then the file.
func (p *exportParts) File(f onboarding.ExportFile) error {
	if err := p.flushRows(); err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", "application/octet-stream")
	h.Set(exportAppHeader, url.QueryEscape(f.ApplicationID))
	h.Set(exportFileIDHeader, url.QueryEscape(f.FileID))
	h.Set(exportFileNameHeader, url.QueryEscape(f.FileName))
	part, err := p.mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, f.Body); err != nil {
		return err
	}
	return p.rc.Flush()
}

// flushRows sends the rows written since the last part, if any.
func (p *exportParts) flushRows() error {
	if p.rows.Len() == 0 && p.apps == 0 {
		return nil
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", p.rowsType)
	h.Set(exportAppsHeader, strconv.Itoa(p.apps))
	part, err := p.mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := part.Write(p.rows.Bytes()); err != nil {
		return err
	}
	p.rows.Reset()
	p.apps = 0
	return p.rc.Flush()
}

// end sends the last part and closes the body.
func (p *exportParts) end(outcome string, v any) error {
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", "application/json")
	h.Set(exportEndHeader, outcome)
	part, err := p.mw.CreatePart(h)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(part).Encode(v); err != nil {
		return err
	}
	if err := p.mw.Close(); err != nil {
		return err
	}
	return p.rc.Flush()
}

// errExportCut is the CLI's error when the export's body ends without its
// last part: the server stopped, or the connection broke.
var errExportCut = errors.New("admin socket: the export was cut short (did the server stop?)")

// Export runs an export through the running server, handing what it
// streams to sink as the direct path would.
func (c *Client) Export(ctx context.Context, q onboarding.ExportQuery, sink onboarding.ExportSink) (onboarding.ExportSummary, error) {
	var sum onboarding.ExportSummary
	v := url.Values{"org": {q.OrgID}, "status": {q.Status}, "since": {q.Since}, "format": {q.Format}}
	if q.Documents {
		v.Set("documents", "true")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://admin/apps/export?"+v.Encode(), nil)
	if err != nil {
		return sum, err
	}
	streaming := *c.http
	streaming.Timeout = 0 // an export takes as long as it takes; ctx ends it
	resp, err := streaming.Do(req)
	if err != nil {
		return sum, fmt.Errorf("admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" {
			return sum, fmt.Errorf("admin socket: %s", resp.Status)
		}
		return sum, errors.New(e.Error)
	}
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" || params["boundary"] == "" {
		return sum, fmt.Errorf("admin socket: unexpected export answer %q", resp.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return sum, errExportCut
		}
		if err != nil {
			return sum, fmt.Errorf("admin socket: %w", err)
		}
		switch {
		case part.Header.Get(exportEndHeader) == "ok":
			if err := json.NewDecoder(part).Decode(&sum); err != nil {
				return sum, fmt.Errorf("admin socket: %w", err)
			}
			return sum, nil
		case part.Header.Get(exportEndHeader) != "":
			var e errorBody
			if err := json.NewDecoder(part).Decode(&e); err != nil || e.Error == "" {
				return sum, errExportCut
			}
			return sum, errors.New(e.Error)
		case part.Header.Get(exportFileIDHeader) != "":
			f, err := exportFileOf(part)
			if err != nil {
				return sum, err
			}
			if err := sink.File(f); err != nil {
				return sum, err
			}
		default:
			n, err := strconv.Atoi(part.Header.Get(exportAppsHeader))
			if err != nil || n < 0 {
				return sum, fmt.Errorf("admin socket: bad export part %v", part.Header)
			}
			if _, err := io.Copy(sink, part); err != nil {
				return sum, cutOr(err)
			}
			for range n {
				if err := sink.Exported(); err != nil {
					return sum, err
				}
			}
		}
	}
}

// exportFileOf reads the headers of a file part.
func exportFileOf(part *multipart.Part) (onboarding.ExportFile, error) {
	f := onboarding.ExportFile{Body: part}
	for _, h := range []struct {
		name string
		to   *string
	}{{exportAppHeader, &f.ApplicationID}, {exportFileIDHeader, &f.FileID}, {exportFileNameHeader, &f.FileName}} {
		v, err := url.QueryUnescape(part.Header.Get(h.name))
		if err != nil {
			return f, fmt.Errorf("admin socket: bad %s %q", h.name, part.Header.Get(h.name))
		}
		*h.to = v
	}
	return f, nil
}

// cutOr is errExportCut when err says the body ended early, else err.
func cutOr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errExportCut
	}
	return err
}
