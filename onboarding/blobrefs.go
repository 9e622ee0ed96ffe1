package onboarding

// BlobIDs returns the ids of the blobs the application refers to: the file
// of every document of the company, its people and its entities (rejected
// uploads too: the record keeps them), and of every registry document. An
// id appears once per reference; the order is unspecified. A backup copies
// exactly these files beside the record (onboard backup, docs/operations.md).
func (a *Application) BlobIDs() []string {
	var ids []string
	for _, docs := range a.Data.documentOwners() {
		ids = appendDocumentBlobs(ids, docs)
	}
	for _, d := range a.RegistryDocuments {
		if d.BlobID != "" {
			ids = append(ids, d.BlobID)
		}
	}
	return ids
}

// BlobIDs returns the ids of the blobs the RFI request refers to: the file
// of every document provided, as Application.BlobIDs does.
func (r *RFIRequest) BlobIDs() []string {
	return appendDocumentBlobs(nil, r.Documents)
}

func appendDocumentBlobs(ids []string, docs map[string]Document) []string {
	for _, d := range docs {
		if d.BlobID != "" {
			ids = append(ids, d.BlobID)
		}
	}
	return ids
}
