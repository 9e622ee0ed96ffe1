package server

import (
	"encoding/json"
	"maps"
	"slices"

	"onboard/onboarding"
)

// renderDocuments renders the visible documents of a company, person or
// entity (spec 2.5), each with a fresh download_url when it has a file.
func (s *Server) renderDocuments(docs map[string]onboarding.Document) map[string]documentResponse {
	out := make(map[string]documentResponse, len(docs))
	for id, d := range docs {
		if !d.Visible() {
			continue
		}
		out[id] = documentResponse{
			FileID:             d.FileID,
			FileName:           d.FileName,
			FileType:           d.FileType,
			UploadedAt:         timestamp(d.UploadedAt),
			Status:             d.Status,
			AcceptanceReason:   d.AcceptanceReason,
			UserOverrideReason: d.UserOverrideReason,
			OverriddenAt:       optionalTimestamp(d.OverriddenAt),
			DownloadURL:        s.svc.DocumentURL(&d, onboarding.DocumentLinkTTL),
		}
	}
	return out
}

func (s *Server) renderApplication(app *onboarding.Application) applicationResponse {
	d := app.Data
	fields := d.Fields
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	out := applicationResponse{
		ID:       app.ID,
		ConfigID: app.ConfigID,
		Status:   app.Status,
		Link:     s.svc.ParticipantLink(app, app.Primary()),
		Data: dataResponse{
			Fields:    fields,
			People:    make([]personResponse, 0, len(d.People)),
			Entities:  make([]entityResponse, 0, len(d.Entities)),
			Ownership: make([]ownershipResponse, 0, len(d.Ownership)),
			Documents: s.renderDocuments(d.Documents),
		},
		Participants: make([]participantResponse, 0, len(app.Participants)),
		CreatedAt:    timestamp(app.CreatedAt),
		UpdatedAt:    timestamp(app.UpdatedAt),
		SubmittedAt:  optionalTimestamp(app.SubmittedAt),
		CompletedAt:  optionalTimestamp(app.CompletedAt),
	}
	for _, p := range d.People {
		out.Data.People = append(out.Data.People, personResponse{
			ID: p.ID, Source: p.Source, Roles: p.Roles, FullName: p.FullName, FirstName: p.FirstName,
			LastName: p.LastName, Email: p.Email, PhoneNumber: p.PhoneNumber, DateOfBirth: p.DateOfBirth,
			Nationality: p.Nationality, HomeAddress: p.HomeAddress, Documents: s.renderDocuments(p.Documents),
		})
	}
	for _, e := range d.Entities {
		out.Data.Entities = append(out.Data.Entities, entityResponse{
			ID: e.ID, Source: e.Source, Name: e.Name, Type: e.Type, Country: e.Country, Documents: s.renderDocuments(e.Documents),
		})
	}
	for _, o := range d.Ownership {
		out.Data.Ownership = append(out.Data.Ownership, ownershipResponse{
			ID: o.ID, OwnerType: o.OwnerType, OwnerID: o.OwnerID, OwnedType: o.OwnedType, OwnedID: o.OwnedID,
			Percentage: o.Percentage, PercentageBand: o.PercentageBand, IsDirect: o.IsDirect, IsNominee: o.IsNominee,
		})
	}
	if app.RegistryDocumentsStatus != "" {
		// Spec 2.1: the list stays empty until retrieval has completed,
		// even when some filings are already stored.
		var docs []registryDocumentResponse
		if app.RegistryDocumentsStatus != onboarding.RegistryDocumentsPending {
			docs = make([]registryDocumentResponse, len(app.RegistryDocuments))
			for i, rd := range app.RegistryDocuments {
				docs[i] = registryDocumentResponse{
					ID: rd.ID, Source: rd.Source, DocumentType: rd.DocumentType,
					FilingDate: optionalString(rd.FilingDate), FetchedAt: optionalTimestamp(rd.FetchedAt),
					DownloadURL: s.svc.RegistryDocumentURL(rd),
				}
			}
		} else {
			docs = []registryDocumentResponse{}
		}
		out.RegistryDocuments = &docs
		out.RegistryDocumentsStatus = app.RegistryDocumentsStatus
	}
	m := d.Meta
	out.Data.Meta = metaResponse{RegistrySources: m.RegistrySources, WebsiteFavicon: m.WebsiteFavicon, WebExtractedIndustry: m.WebExtractedIndustry}
	if m.PrimaryContact != nil {
		out.Data.Meta.PrimaryContact = &contactResponse{Name: optionalString(m.PrimaryContact.Name), Email: m.PrimaryContact.Email, Role: m.PrimaryContact.Role}
	}
	for i := range app.Participants {
		p := &app.Participants[i]
		out.Participants = append(out.Participants, participantResponse{
			Email: p.Email, Name: optionalString(p.Name), Role: p.Role, Link: s.svc.ParticipantLink(app, p),
		})
	}
	return out
}

// renderSummary renders a list item (spec 4.3). Its documents are one flat
// list in a stable order: the company's documents by field id, then each
// person's (in people order) by field id, then each entity's likewise.
func (s *Server) renderSummary(app *onboarding.Application) applicationSummary {
	sum := applicationSummary{
		ID:          app.ID,
		ConfigID:    app.ConfigID,
		Status:      app.Status,
		CompanyName: optionalString(app.CompanyName()),
		Documents:   []summaryDocument{},
		CreatedAt:   timestamp(app.CreatedAt),
		UpdatedAt:   timestamp(app.UpdatedAt),
		SubmittedAt: optionalTimestamp(app.SubmittedAt),
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

// renderCatalog renders a form's field catalog (spec 2.4) once per form.
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
