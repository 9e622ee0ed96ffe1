package server

import (
	"encoding/json"
	"maps"
	"slices"

	"onboard/onboarding"
)

// renderSummary renders an item of list applications. Its documents are one flat
// list in a stable order: the company's documents by field id, then each
// person's (in people order) by field id, then each entity's likewise.
func (s *Server) renderSummary(app *onboarding.Application) applicationSummary {
	sum := applicationSummary{
		ID:          app.ID,
		ConfigID:    app.ConfigID,
		Status:      app.Status,
		CompanyName: optionalString(app.CompanyName()),
		Documents:   []summaryDocument{},
		CreatedAt:   onboarding.Timestamp(app.CreatedAt),
		UpdatedAt:   onboarding.Timestamp(app.UpdatedAt),
		SubmittedAt: onboarding.OptionalTimestamp(app.SubmittedAt),
	}
	if c := app.Data.Meta.PrimaryContact; c != nil {
		sum.PrimaryContact = summaryContact{Email: optionalString(c.Email), Name: optionalString(c.Name)}
	}
	sum.Documents = s.appendSummaryDocuments(sum.Documents, app.Data.Documents, "", "")
	for i := range app.Data.People {
		p := &app.Data.People[i]
		sum.Documents = s.appendSummaryDocuments(sum.Documents, p.Documents, p.ID, "")
	}
	for i := range app.Data.Entities {
		e := &app.Data.Entities[i]
		sum.Documents = s.appendSummaryDocuments(sum.Documents, e.Documents, "", e.ID)
	}
	return sum
}

// appendSummaryDocuments appends the visible documents of docs in field id
// order, as list items of the given person or entity (both empty for the
// company's own documents).
func (s *Server) appendSummaryDocuments(out []summaryDocument, docs map[string]onboarding.Document, personID, entityID string) []summaryDocument {
	if len(docs) == 0 {
		return out
	}
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		d := docs[id]
		if !d.Visible() {
			continue
		}
		out = append(out, summaryDocument{
			ID: d.FileID, FieldID: id, PersonID: personID, EntityID: entityID, FileName: d.FileName,
			Status: d.Status, UserOverrideReason: d.UserOverrideReason,
			DownloadURL: optionalString(s.svc.DocumentURL(&d, onboarding.DocumentLinkTTL)),
		})
	}
	return out
}

// renderCatalog renders a form's field catalog once per form.
func (s *Server) renderCatalog(form *onboarding.Form) ([]byte, error) {
	if b, ok := s.catalogs.Load(form); ok {
		return b.([]byte), nil
	}
	fields := form.Fields()
	entries := make([]catalogEntry, len(fields))
	for i := range fields {
		f := &fields[i]
		entries[i] = catalogEntry{
			ID: f.ID, Label: f.Label, Type: f.Type, Category: f.Category, Patchable: f.Patchable(),
			Required: f.Required, Description: f.Description, Sensitive: f.Sensitive, Options: f.Options,
		}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return nil, err
	}
	s.catalogs.Store(form, b)
	return b, nil
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
