package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"onboard/onboarding"
)

// contentType is the type every blob is stored with: what a blob holds is
// told by the record that refers to it, not by the object.
const contentType = "application/octet-stream"

// Put stores what r yields as a new blob and returns its id and size. It
// reads at most max+1 bytes: content over max fails with an error wrapping
// onboarding.ErrFileTooLarge and leaves nothing behind. A cancelled ctx
// stops the copy between reads and fails with ctx's error.
//
// Content of up to one part is sent in one PutObject; longer content in a
// multipart upload whose parts are sent as they are read, completed only
// after the last part and aborted on any failure. Either way the object
// appears whole, when the last request succeeds, or not at all. A Put that
// fails after its last request was sent deletes the object, in case the
// server stored it anyway.
func (s *Store) Put(ctx context.Context, r io.Reader, max int64) (id string, size int64, err error) {
	if max < 0 {
		return "", 0, fmt.Errorf("s3: put: negative size limit %d", max)
	}
	if err := ctx.Err(); err != nil {
		return "", 0, fmt.Errorf("s3: put: %w", err)
	}
	u, err := uuid.NewRandom()
	if err != nil {
		return "", 0, fmt.Errorf("s3: put: new id: %w", err)
	}
	id = u.String()
	key := s.prefix + id
	limit := max
	if limit < math.MaxInt64 {
		limit++
	}
	in := io.LimitReader(ctxReader{ctx: ctx, r: r}, limit)
	part := partSizeFor(max)
	buf, eof, err := fill(in, nil, part)
	if err != nil {
		return "", 0, fmt.Errorf("s3: put: %w", err)
	}
	size = int64(len(buf))
	if size > max {
		return "", 0, tooLarge(max)
	}
	if eof {
		err = s.putObject(ctx, key, buf)
	} else {
		size, err = s.putMultipart(ctx, key, in, buf, part, max)
	}
	if err != nil {
		return "", 0, err
	}
	return id, size, nil
}

// putObject stores buf at key in one request.
func (s *Store) putObject(ctx context.Context, key string, buf []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(buf),
		ContentLength: aws.Int64(int64(len(buf))), ContentType: aws.String(contentType),
	})
	if err != nil {
		s.forget(ctx, key)
		return fmt.Errorf("s3: put: %w", err)
	}
	return nil
}

// putMultipart stores at key first (a whole part) and the rest of in, one
// part of part bytes at a time, and returns the size stored. Content over max fails with
// ErrFileTooLarge; any failure aborts the upload.
func (s *Store) putMultipart(ctx context.Context, key string, in io.Reader, first []byte, part int, max int64) (size int64, err error) {
	created, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, ContentType: aws.String(contentType),
	})
	if err != nil {
		return 0, fmt.Errorf("s3: put: start a multipart upload: %w", err)
	}
	uploadID := created.UploadId
	defer func() {
		if err != nil {
			actx, cancel := cleanupContext(ctx)
			defer cancel()
			// A failed abort leaves parts that no object shows; Walk's
			// clean-up of stale uploads removes them later.
			_, _ = s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
				Bucket: &s.bucket, Key: &key, UploadId: uploadID,
			})
		}
	}()
	var parts []types.CompletedPart
	buf, ended := first, false
	for {
		n := int32(len(parts) + 1)
		up, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: &s.bucket, Key: &key, UploadId: uploadID, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(buf), ContentLength: aws.Int64(int64(len(buf))),
		})
		if err != nil {
			return 0, fmt.Errorf("s3: put: upload part %d: %w", n, err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(n)})
		size += int64(len(buf))
		if ended {
			break
		}
		if buf, ended, err = fill(in, buf, part); err != nil {
			return 0, fmt.Errorf("s3: put: %w", err)
		}
		if size+int64(len(buf)) > max {
			return 0, tooLarge(max)
		}
		if len(buf) == 0 {
			break
		}
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		s.forget(ctx, key)
		return 0, fmt.Errorf("s3: put: complete the multipart upload: %w", err)
	}
	return size, nil
}

// forget deletes, best effort, the object at key after its upload failed:
// a request cancelled or timed out after the server received it may have
// stored the object all the same. What this misses, the orphan sweep
// removes.
func (s *Store) forget(ctx context.Context, key string) {
	dctx, cancel := cleanupContext(ctx)
	defer cancel()
	_ = s.deleteKey(dctx, key)
}

// partSizeFor returns the part size of uploads of at most max bytes:
// partSize, or more when max bytes would need more parts than S3 takes,
// up to the largest part S3 takes.
func partSizeFor(max int64) int {
	const maxParts, maxPart = 10_000, 5 << 30
	p := max / maxParts
	if max%maxParts != 0 {
		p++
	}
	if p <= partSize {
		return partSize
	}
	return int(min(p, maxPart))
}

// tooLarge is Put's error for content over max.
func tooLarge(max int64) error {
	return fmt.Errorf("s3: put: content over %d bytes: %w", max, onboarding.ErrFileTooLarge)
}

// fill reads from r into buf (reusing its memory) until it holds n bytes
// or r ends, and reports whether r ended. Memory grows with what is read,
// so that a small blob does not cost a whole part.
func fill(r io.Reader, buf []byte, n int) (_ []byte, eof bool, err error) {
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(max(cap(buf), 32<<10), n-len(buf)))
		}
		m, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}

// ctxReader is a reader that fails with ctx's error, once ctx is done,
// before each read of r.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
