package bucket

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"onboard/blobs"
)

// staleUpload is the age after which Walk aborts a multipart upload under
// the prefix: no Put takes that long, so such an upload is the leftover of
// a process that died mid-Put.
const staleUpload = time.Hour

// Walk calls fn with the id and modification time of every blob in the
// store (the objects directly under the prefix whose names are blob ids;
// anything else is skipped), in no particular order. An error from fn
// stops the walk and is returned. A blob removed while the walk runs may
// or may not be seen.
//
// Walk serves the orphan sweep, so it also sweeps what a crash leaves in
// a bucket: it aborts, best effort, the multipart uploads under the
// prefix begun more than an hour ago.
func (s *Store) Walk(fn func(id string, modified time.Time) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.bucket, Prefix: aws.String(s.prefix), Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		page, err := p.NextPage(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("s3: walk: %w", err)
		}
		for _, obj := range page.Contents {
			id, ok := strings.CutPrefix(aws.ToString(obj.Key), s.prefix)
			if !ok || !blobs.ValidID(id) || obj.LastModified == nil {
				continue
			}
			if err := fn(id, *obj.LastModified); err != nil {
				return fmt.Errorf("s3: walk: %w", err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	s.abortStaleUploads(ctx, time.Now().Add(-staleUpload))
	return nil
}

// abortStaleUploads aborts the multipart uploads under the prefix begun
// before cutoff and returns how many it aborted. Errors are ignored: an
// upload not aborted now is tried again at the next walk, and it never
// affects a stored blob.
func (s *Store) abortStaleUploads(ctx context.Context, cutoff time.Time) int {
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: aws.String(s.prefix)}
	aborted := 0
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return aborted
		}
		for _, u := range out.Uploads {
			id, ok := strings.CutPrefix(aws.ToString(u.Key), s.prefix)
			if !ok || !blobs.ValidID(id) || u.Initiated == nil || !u.Initiated.Before(cutoff) {
				continue
			}
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: &s.bucket, Key: u.Key, UploadId: u.UploadId,
			})
			if err == nil {
				aborted++
			}
		}
		if !aws.ToBool(out.IsTruncated) || (out.NextKeyMarker == nil && out.NextUploadIdMarker == nil) {
			return aborted
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
