package onboarding

import (
	"context"
	"errors"
	"io"
	"time"
)

// Blobs keeps files: registry filings and uploaded documents. The blobs
// package implements it over a directory.
type Blobs interface {
	// Put stores what r yields, at most max bytes, and returns the new
	// blob's id and size. Content over max fails with an error wrapping
	// ErrFileTooLarge and stores nothing.
	Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error)
	// Delete removes a blob; removing a missing blob is not an error.
	Delete(id string) error
}

// LinkSigner makes expiring download links for blobs.
type LinkSigner interface {
	// SignedPath returns the path and query (relative to the public URL,
	// starting with "/") of a GET download of blob id as d says, valid for ttl.
	SignedPath(id string, d Download, ttl time.Duration) string
}

// Download says how a signed link serves a blob.
type Download struct {
	FileName    string // offered to the browser in Content-Disposition
	ContentType string // sent as Content-Type
	Inline      bool   // Content-Disposition inline rather than attachment
}

// ErrFileTooLarge is wrapped by Blobs.Put when the content exceeds its limit.
var ErrFileTooLarge = errors.New("file is larger than the limit")
