package onboarding

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Exports (`onboard apps export`, docs/cli.md): an organization's
// applications, optionally of one status and updated since a time, as NDJSON
// (each line the document get-application returns, without download URLs;
// sensitive values included, for the export is the operator's own) or as
// CSV (fixed columns, then the non-sensitive fields of the organization's
// forms), with each application's document files handed over beside its
// row. An export pages through the organization's listing index, newest
// first, one short read of exportPageSize applications at a time: its
// memory does not grow with the number of applications, and it never keeps
// a snapshot of the store open for long. Each application is exported as
// its page found it; applications created after the export started are not
// in it.

// The export formats.
const (
	ExportNDJSON = "ndjson"
	ExportCSV    = "csv"
)

// exportPageSize is how many applications one read of the listing index
// returns.
const exportPageSize = 500

// exportColumns are the first columns of a CSV export, in order.
var exportColumns = [...]string{
	"id", "config_id", "status", "company_name", "company_number", "company_country",
	"primary_contact_email", "primary_contact_name", "created_at", "updated_at", "submitted_at", "completed_at",
}

// ExportQuery says what an export holds and how. Its members are the
// operator's values as given; NewExport checks them.
type ExportQuery struct {
	OrgID  string
	Status string // empty: every status
	Since  string // RFC 3339; empty: from the first application
	Format string // ExportNDJSON or ExportCSV; empty: ExportNDJSON
	// Documents hands every document and registry document file of the
	// exported applications to the sink.
	Documents bool
}

// ExportSink receives an export as it runs: the rows through Write, each
// application's files after its row, then Exported.
type ExportSink interface {
	io.Writer
	// File receives one file of the application whose row was written
	// last; it must read Body before returning.
	File(ExportFile) error
	// Exported is called once for every application exported.
	Exported() error
}

// ExportFile is a document or registry document file of an exported
// application.
type ExportFile struct {
	ApplicationID string
	FileID        string // the document's file_id, or the registry document's id
	FileName      string // as uploaded, or as registry downloads offer it (TypedFileName)
	Body          io.Reader
}

// ExportSummary counts what an export held.
type ExportSummary struct {
	Applications int `json:"applications"`
	Documents    int `json:"documents"`
	// MissingDocuments counts the files that were replaced or removed
	// between the read of their application and their copy.
	MissingDocuments int `json:"missing_documents"`
}

// Export is a checked export, ready to run.
type Export struct {
	s         *Service
	org       *Organization
	status    Status
	since     time.Time // zero: no lower bound
	format    string
	documents bool
	fields    []string // the CSV's field columns
	// line is the NDJSON row being written, kept to encode the next one
	// into (a sink's Write does not keep what it is given).
	line []byte
}

// NewExport checks q: the organization, the status, the time and the
// format.
func (s *Service) NewExport(q ExportQuery) (*Export, error) {
	org, ok := s.orgs[q.OrgID]
	if !ok {
		return nil, Errorf(KindInvalid, "unknown organization '%s'", q.OrgID)
	}
	x := &Export{s: s, org: org, format: cmp.Or(q.Format, ExportNDJSON), documents: q.Documents}
	if q.Status != "" {
		st, err := ParseStatus(q.Status)
		if err != nil {
			return nil, err
		}
		x.status = st
	}
	if q.Since != "" {
		t, err := time.Parse(time.RFC3339, q.Since)
		if err != nil {
			return nil, Errorf(KindInvalid, "Invalid since '%s': use an RFC 3339 time such as 2025-01-31T00:00:00Z", q.Since)
		}
		x.since = t
	}
	switch x.format {
	case ExportNDJSON:
	case ExportCSV:
		x.fields = exportFields(org)
	default:
		return nil, Errorf(KindInvalid, "Invalid format '%s': use ndjson or csv", q.Format)
	}
	return x, nil
}

// exportFields are the CSV's field columns: every field of the
// organization's forms (its configurations in order, each form in form
// order) whose value is in data.fields and is not sensitive, once, leaving
// out those the fixed columns already show.
func exportFields(org *Organization) []string {
	seen := map[string]bool{}
	for _, c := range exportColumns {
		seen[c] = true
	}
	var out []string
	for _, c := range org.Configs {
		for _, f := range c.Form.Fields() {
			if f.Type == TypeDocument || f.PersonScoped || f.Sensitive || seen[f.ID] {
				continue
			}
			seen[f.ID] = true
			out = append(out, f.ID)
		}
	}
	return out
}

// ContentType is the media type of the export's rows.
func (x *Export) ContentType() string {
	if x.format == ExportCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/x-ndjson"
}

// Run writes the export to sink, newest application first. It stops at the
// first error, ctx's included.
func (x *Export) Run(ctx context.Context, sink ExportSink) (ExportSummary, error) {
	var sum ExportSummary
	var rows *csv.Writer
	if x.format == ExportCSV {
		rows = csv.NewWriter(sink)
		rows.UseCRLF = true                                 // RFC 4180
		header := slices.Concat(exportColumns[:], x.fields) // a copy: writeRecord changes it
		if err := x.writeRecord(rows, header); err != nil {
			return sum, err
		}
	}
	q := ListQuery{OrgID: x.org.ID, Status: x.status, Limit: exportPageSize}
	for {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		apps, more, err := x.s.store.ListApplications(ctx, q)
		if err != nil {
			return sum, fmt.Errorf("export: list applications: %w", err)
		}
		for _, app := range apps {
			if app.UpdatedAt.Before(x.since) {
				continue
			}
			if err := x.writeApplication(ctx, sink, rows, app, &sum); err != nil {
				return sum, err
			}
		}
		if !more || len(apps) == 0 {
			return sum, nil
		}
		q.Before = apps[len(apps)-1].Seq
	}
}

// writeApplication writes app's row, hands over its files and counts it.
func (x *Export) writeApplication(ctx context.Context, sink ExportSink, rows *csv.Writer, app *Application, sum *ExportSummary) error {
	if rows != nil {
		record, err := x.record(app)
		if err != nil {
			return err
		}
		if err := x.writeRecord(rows, record); err != nil {
			return err
		}
	} else {
		view, err := x.s.View(app, ViewOptions{})
		if err != nil {
			return err
		}
		line, err := x.s.appendView(x.line[:0], &view)
		if err != nil {
			return fmt.Errorf("export application %s: %w", app.ID, err)
		}
		x.line = append(line, '\n')
		if _, err := sink.Write(x.line); err != nil {
			return err
		}
	}
	if x.documents {
		if err := x.writeFiles(ctx, sink, app, sum); err != nil {
			return err
		}
	}
	sum.Applications++
	return sink.Exported()
}

// writeRecord writes one CSV record, formula-safe, and flushes it to the
// sink so that the row precedes the application's files.
func (x *Export) writeRecord(w *csv.Writer, record []string) error {
	for i, cell := range record {
		record[i] = formulaSafe(cell)
	}
	if err := w.Write(record); err != nil {
		return err
	}
	w.Flush()
	return w.Error()
}

// formulaSafe defuses a cell a spreadsheet would run as a formula (OWASP,
// CSV injection): one that starts with =, +, -, @, a tab or a carriage
// return gets a leading single quote.
func formulaSafe(cell string) string {
	if cell != "" && strings.IndexByte("=+-@\t\r", cell[0]) >= 0 {
		return "'" + cell
	}
	return cell
}

// record is app's CSV row, before formulaSafe. A value the application's
// form marks sensitive is left empty, whatever column shows it.
func (x *Export) record(app *Application) ([]string, error) {
	form, err := x.s.formOf(app)
	if err != nil {
		return nil, err
	}
	var contactEmail, contactName string
	if c := app.Data.Meta.PrimaryContact; c != nil {
		contactEmail, contactName = c.Email, c.Name
	}
	country, err := x.cell(form, app, "company_country")
	if err != nil {
		return nil, err
	}
	if _, ok := form.Field("company_country"); !ok {
		country = app.Country // the form does not ask for it
	}
	out := make([]string, 0, len(exportColumns)+len(x.fields))
	out = append(out, app.ID, app.ConfigID, string(app.Status))
	for _, id := range []string{"company_name", "company_number"} {
		v, err := x.cell(form, app, id)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	out = append(out, country, contactEmail, contactName,
		Timestamp(app.CreatedAt), Timestamp(app.UpdatedAt), optionalCell(app.SubmittedAt), optionalCell(app.CompletedAt))
	for _, id := range x.fields {
		v, err := x.cell(form, app, id)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// cell is the CSV cell of field id of app: empty when unset or sensitive
// in form, the text of a string, the literal of a number or a boolean, and
// compact JSON for an object or an array.
func (x *Export) cell(form *Form, app *Application, id string) (string, error) {
	if f, ok := form.Field(id); ok && f.Sensitive {
		return "", nil
	}
	raw := bytes.TrimSpace(app.Data.Fields[id])
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("export application %s: field %s: %w", app.ID, id, err)
		}
		return s, nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", fmt.Errorf("export application %s: field %s: %w", app.ID, id, err)
		}
		return b.String(), nil
	}
	return string(raw), nil
}

// optionalCell is an optional time as a CSV cell: empty, or a timestamp.
func optionalCell(t *time.Time) string {
	if t == nil {
		return ""
	}
	return Timestamp(*t)
}

// writeFiles hands over the files of the documents and registry documents
// that app's view lists: the company's by field id, each person's, each
// entity's, then the registry's in their order. A file removed since app
// was read (a replaced upload) is counted as missing, not copied.
func (x *Export) writeFiles(ctx context.Context, sink ExportSink, app *Application, sum *ExportSummary) error {
	var files []exportBlob
	files = appendExportBlobs(files, app.Data.Documents)
	for i := range app.Data.People {
		files = appendExportBlobs(files, app.Data.People[i].Documents)
	}
	for i := range app.Data.Entities {
		files = appendExportBlobs(files, app.Data.Entities[i].Documents)
	}
	if app.RegistryDocumentsStatus != "" && app.RegistryDocumentsStatus != RegistryDocumentsPending {
		for _, rd := range app.RegistryDocuments {
			if rd.BlobID != "" {
				files = append(files, exportBlob{rd.ID, TypedFileName(cmp.Or(rd.FileName, rd.DocumentType), mimePDF), rd.BlobID})
			}
		}
	}
	if len(files) > 0 && x.s.blobs == nil {
		return errors.New("export: no file store is configured")
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.writeFile(sink, app, f, sum); err != nil {
			return err
		}
	}
	return nil
}

// exportBlob is a file to hand over: its id and name as exported, and its
// blob.
type exportBlob struct{ id, name, blob string }

// appendExportBlobs appends the files of the visible documents of docs
// (a skipped requirement has none), by field id.
func appendExportBlobs(out []exportBlob, docs map[string]Document) []exportBlob {
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		d := docs[id]
		if d.Visible() && d.Status != DocumentSkipped && d.BlobID != "" {
			out = append(out, exportBlob{d.FileID, TypedFileName(d.FileName, d.FileType), d.BlobID})
		}
	}
	return out
}

func (x *Export) writeFile(sink ExportSink, app *Application, f exportBlob, sum *ExportSummary) error {
	file, err := x.s.blobs.Open(f.blob)
	if errors.Is(err, ErrNotFound) {
		x.s.log.Warn("export: a file was removed while exporting", "application_id", app.ID, "file_id", f.id)
		sum.MissingDocuments++
		return nil
	}
	if err != nil {
		return fmt.Errorf("export application %s: open file %s: %w", app.ID, f.id, err)
	}
	defer file.Close()
	if err := sink.File(ExportFile{ApplicationID: app.ID, FileID: f.id, FileName: f.name, Body: file}); err != nil {
		return err
	}
	sum.Documents++
	return nil
}
