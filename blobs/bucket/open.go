package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"onboard/onboarding"
)

// skipAhead is how far forward a read may be from where the open answer
// stands and still be reached by reading and discarding the bytes in
// between rather than by a new request.
const skipAhead = 64 << 10

// Open returns blob id opened for reading; the caller closes it. A missing
// blob, or an id that is not a blob id, fails with an error wrapping
// onboarding.ErrNotFound.
//
// Open sends a GET of the whole object, whose answer gives the size and
// time and serves the reads that follow in order. A read elsewhere (a
// Seek, or ReadAt at another offset) sends a ranged GET from that offset
// to the end, which serves the reads in order from there: reading a blob
// in order, from any offset, is one request.
func (s *Store) Open(id string) (onboarding.BlobFile, error) {
	key, ok := s.key(id)
	if !ok {
		return nil, fmt.Errorf("s3: open blob: invalid id: %w", onboarding.ErrNotFound)
	}
	out, err := s.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if isNotFound(err) {
		return nil, fmt.Errorf("s3: open blob %s: %w", id, onboarding.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("s3: open blob %s: %w", id, err)
	}
	if out.ContentLength == nil || out.LastModified == nil {
		out.Body.Close()
		return nil, fmt.Errorf("s3: open blob %s: the answer has no Content-Length or Last-Modified", id)
	}
	return &object{
		s: s, id: id, key: key,
		size: *out.ContentLength, modTime: *out.LastModified,
		body: out.Body,
	}, nil
}

// object is an open blob (onboarding.BlobFile). Read and Seek share an
// offset; ReadAt does not touch it. All of them read through one open
// answer at a time, under mu, so parallel ReadAt calls are safe but take
// turns.
type object struct {
	s       *Store
	id, key string
	size    int64
	modTime time.Time

	mu     sync.Mutex
	off    int64         // the offset of Read
	body   io.ReadCloser // the open answer, or nil
	pos    int64         // the offset of body's next byte
	closed bool
}

// Read reads from the offset that Read and Seek move.
func (o *object) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, o.errClosed("read")
	}
	if o.off >= o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(int64(len(p)), o.size-o.off)]
	n, err := o.readAt(p, o.off, false)
	o.off += int64(n)
	return n, err
}

// ReadAt reads len(p) bytes at off, fewer with io.EOF at the end.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, o.errClosed("read")
	}
	if off < 0 {
		return 0, fmt.Errorf("s3: read blob %s: negative offset %d", o.id, off)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), o.size-off)
	n, err := o.readAt(p[:want], off, true)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// readAt reads into p at off, which lies within the blob and p with it:
// as a Read (what one read of the answer gives) or all of p. It uses the
// open answer when it stands at off, or a little before; otherwise it
// closes it and asks for the object from off to its end.
func (o *object) readAt(p []byte, off int64, full bool) (int, error) {
	if o.body != nil && o.pos != off {
		if off > o.pos && off-o.pos <= skipAhead {
			n, err := io.CopyN(io.Discard, o.body, off-o.pos)
			o.pos += n
			if err != nil {
				o.dropBody()
			}
		} else {
			o.dropBody()
		}
	}
	if o.body == nil {
		out, err := o.s.client.GetObject(context.Background(), &s3.GetObjectInput{
			Bucket: &o.s.bucket, Key: &o.key, Range: aws.String(fmt.Sprintf("bytes=%d-", off)),
		})
		if isNotFound(err) {
			return 0, fmt.Errorf("s3: read blob %s: deleted meanwhile: %w", o.id, onboarding.ErrNotFound)
		}
		if err != nil {
			return 0, fmt.Errorf("s3: read blob %s at %d: %w", o.id, off, err)
		}
		o.body, o.pos = out.Body, off
	}
	var n int
	var err error
	if full {
		n, err = io.ReadFull(o.body, p)
	} else {
		n, err = o.body.Read(p)
	}
	o.pos += int64(n)
	switch {
	case err == nil && o.pos == o.size:
		o.dropBody() // all read: the connection goes back to the pool
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		o.dropBody()
		if o.pos < off+int64(len(p)) && (full || n == 0) {
			return n, fmt.Errorf("s3: read blob %s: the answer ended at %d of %d bytes: %w", o.id, o.pos, o.size, io.ErrUnexpectedEOF)
		}
		err = nil
	case err != nil:
		o.dropBody()
		return n, fmt.Errorf("s3: read blob %s: %w", o.id, err)
	}
	return n, err
}

// dropBody closes the open answer, if any.
func (o *object) dropBody() {
	if o.body != nil {
		o.body.Close()
		o.body = nil
	}
}

// Seek sets the offset of Read; it sends no request.
func (o *object) Seek(offset int64, whence int) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, o.errClosed("seek")
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.off + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return 0, fmt.Errorf("s3: seek blob %s: invalid whence %d", o.id, whence)
	}
	if abs < 0 {
		return 0, fmt.Errorf("s3: seek blob %s: negative position %d", o.id, abs)
	}
	o.off = abs
	return abs, nil
}

// Stat returns the blob's size and the time its object was stored.
func (o *object) Stat() (fs.FileInfo, error) {
	return fileInfo{name: o.id, size: o.size, modTime: o.modTime}, nil
}

// Close closes the open answer; further reads fail.
func (o *object) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return o.errClosed("close")
	}
	o.closed = true
	o.dropBody()
	return nil
}

func (o *object) errClosed(op string) error {
	return fmt.Errorf("s3: %s blob %s: %w", op, o.id, fs.ErrClosed)
}

// fileInfo describes an open blob.
type fileInfo struct {
	name    string
	size    int64
	modTime time.Time
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() fs.FileMode  { return 0o400 }
func (fi fileInfo) ModTime() time.Time { return fi.modTime }
func (fi fileInfo) IsDir() bool        { return false }
func (fi fileInfo) Sys() any           { return nil }
