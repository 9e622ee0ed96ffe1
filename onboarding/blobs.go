package onboarding

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"time"
)

// Blobs keeps files: registry filings and uploaded documents. The blobs
// package implements it over a directory.
type Blobs interface {
	// Put stores what r yields, at most max bytes, and returns the new
	// blob's id and size. Content over max fails with an error wrapping
	// ErrFileTooLarge and stores nothing.
	Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error)
	// Open opens blob id for reading; a missing blob (or an id that is
	// not a blob id) is an error wrapping ErrNotFound.
	Open(id string) (BlobFile, error)
	// Delete removes a blob; removing a missing blob is not an error.
	Delete(id string) error
}

// BlobFile is an open blob: read in order or at any offset, with its size
// and time from Stat. The caller closes it.
type BlobFile interface {
	io.ReadSeekCloser
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

// LinkSigner makes expiring download links for blobs.
type LinkSigner interface {
	// SignedLink returns base followed by the path and query (starting
	// with "/") of a GET download of blob id as d says, valid for ttl: a
	// link with the public URL as base, a path relative to it with "".
	SignedLink(base, id string, d Download, ttl time.Duration) string
	// Verify checks the query of a signed link to blob id for method and
	// returns how to serve it; an error means a bad or expired link.
	Verify(method, id string, q url.Values) (Download, error)
}

// Download says how a signed link serves a blob.
type Download struct {
	FileName    string // offered to the browser in Content-Disposition
	ContentType string // sent as Content-Type
	Inline      bool   // Content-Disposition inline rather than attachment
}

// ErrFileTooLarge is wrapped by Blobs.Put when the content exceeds its limit.
var ErrFileTooLarge = errors.New("file is larger than the limit")

// ErrInvalidLink is the answer to a download link whose signature is wrong
// or whose time is up.
var ErrInvalidLink = &Error{Kind: KindForbidden, Message: "Invalid or expired link"}

// ErrFileNotFound is the answer to a valid link whose file no longer
// exists, or to a link when no files are kept.
var ErrFileNotFound = &Error{Kind: KindNotFound, Message: "Not found"}

// OpenDownload checks a signed download link (method, blob id and the
// link's query) and opens the blob it grants. A bad or expired link is
// ErrInvalidLink; a valid link to a blob that no longer exists is
// ErrFileNotFound.
func (s *Service) OpenDownload(method, id string, q url.Values) (BlobFile, Download, error) {
	if s.links == nil || s.blobs == nil {
		return nil, Download{}, ErrFileNotFound
	}
	d, err := s.links.Verify(method, id, q)
	if err != nil {
		return nil, Download{}, ErrInvalidLink
	}
	f, err := s.blobs.Open(id)
	if errors.Is(err, ErrNotFound) {
		return nil, Download{}, ErrFileNotFound
	}
	if err != nil {
		return nil, Download{}, fmt.Errorf("open blob: %w", err)
	}
	return f, d, nil
}
