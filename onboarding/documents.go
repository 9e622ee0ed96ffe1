package onboarding

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Lifetimes of signed document download links.
const (
	// DocumentLinkTTL is how long a download_url in the get-application
	// and list-applications payloads works.
	DocumentLinkTTL = 60 * time.Second
	// DocumentDownloadTTL is how long the URL from get document
	// works.
	DocumentDownloadTTL = time.Hour
)

// ErrDocumentNotFound is the 404 of get document: no document with that id
// is visible in the application.
var ErrDocumentNotFound = &Error{Kind: KindNotFound, Message: "Document not found"}

// defaultDocumentType is served for a document stored without a MIME type.
const defaultDocumentType = "application/octet-stream"

// DocumentURL is a fresh signed download link for an uploaded document,
// valid for ttl, that offers the file as an attachment under its original
// name and type. It is "" when the Service signs no links or the document
// has no file: a skipped requirement has none, and a rejected upload is
// never offered to the API.
func (s *Service) DocumentURL(d *Document, ttl time.Duration) string {
	l, ok := s.documentLink(d, ttl)
	if !ok {
		return ""
	}
	return s.SignLink(l)
}

// documentLink is what DocumentURL signs, and false when it answers "".
func (s *Service) documentLink(d *Document, ttl time.Duration) (UnsignedLink, bool) {
	if s.links == nil || d.BlobID == "" || d.Status == DocumentSkipped || !d.Visible() {
		return UnsignedLink{}, false
	}
	ctype := d.FileType
	if ctype == "" {
		ctype = defaultDocumentType
	}
	return UnsignedLink{blobID: d.BlobID, download: Download{FileName: d.FileName, ContentType: ctype}, ttl: ttl}, true
}

// UnsignedLink is what a download link signs: a blob, how it downloads, and
// for how long from the moment it is signed. The zero value is no link.
type UnsignedLink struct {
	blobID   string
	download Download
	ttl      time.Duration
}

// IsZero reports whether l is no link.
func (l UnsignedLink) IsZero() bool { return l.blobID == "" }

// SignLink returns l signed now, under the public URL; the Service must
// sign links (Options.Links set).
func (s *Service) SignLink(l UnsignedLink) string {
	return s.links.SignedLink(s.publicURL, l.blobID, l.download, l.ttl)
}

// DocumentLink is what get document answers.
type DocumentLink struct {
	URL      string // signed, valid DocumentDownloadTTL
	FileName string
	FileType string
}

// GetDocument returns a download link, valid DocumentDownloadTTL, for the
// document docID of an application of k's organization: a company
// document or one of any person or entity. Only documents that appear in
// the application's payloads and have a file count: a rejected upload, a
// skipped requirement, an unknown id or another application's document is
// ErrDocumentNotFound.
func (s *Service) GetDocument(ctx context.Context, k *APIKey, appID, docID string) (*DocumentLink, error) {
	if err := Authorize(k, ScopeApplicationsRead); err != nil {
		return nil, err
	}
	app, err := s.application(ctx, k, appID)
	if err != nil {
		return nil, err
	}
	// As for applications, only the canonical form names a document.
	if u, err := uuid.Parse(docID); err != nil || u.String() != docID {
		return nil, ErrDocumentNotFound
	}
	d := app.findDocument(docID)
	if d == nil {
		return nil, ErrDocumentNotFound
	}
	link := s.DocumentURL(d, DocumentDownloadTTL)
	if link == "" { // the Service signs no links
		return nil, ErrDocumentNotFound
	}
	return &DocumentLink{URL: link, FileName: d.FileName, FileType: d.FileType}, nil
}

// findDocument returns the document with file id among the company's, every
// person's and every entity's documents, or nil. Rejected and skipped
// documents, and documents without a file, are never found.
func (a *Application) findDocument(id string) *Document {
	match := func(docs map[string]Document) *Document {
		for _, d := range docs {
			if d.FileID == id && d.Visible() && d.Status != DocumentSkipped && d.BlobID != "" {
				return &d
			}
		}
		return nil
	}
	for _, docs := range a.Data.documentOwners() {
		if d := match(docs); d != nil {
			return d
		}
	}
	return nil
}
