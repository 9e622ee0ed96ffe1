package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/uuid"
)

// probePrefix starts the key of the object Check writes and deletes; it is
// not a blob id, so a walk that meets it (a Check cut short) skips it.
const probePrefix = ".onboard-check-"

// Check makes sure the store can work, as onboard config check and serve
// do before they trust it: the endpoint answers, the bucket exists, the
// credentials are accepted, and the key may list the prefix and write,
// read and delete an object under it (a small probe object, removed
// again). The error says which of these failed, in words an operator can
// act on.
func (s *Store) Check(ctx context.Context) error {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: &s.bucket, Prefix: aws.String(s.prefix), MaxKeys: aws.Int32(1),
	})
	if err != nil {
		return s.explain(ctx, err, "list", "s3:ListBucket")
	}
	key := s.prefix + probePrefix + uuid.NewString()
	probe := []byte("onboard checks that it may write here; this object is removed at once\n")
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(probe),
		ContentLength: aws.Int64(int64(len(probe))), ContentType: aws.String("text/plain"),
	})
	if err != nil {
		return s.explain(ctx, err, "write", "s3:PutObject")
	}
	if err := s.checkRead(ctx, key, probe); err != nil {
		s.forget(ctx, key)
		return err
	}
	if err := s.deleteKey(ctx, key); err != nil {
		return s.explain(ctx, err, "delete", "s3:DeleteObject")
	}
	return nil
}

// checkRead reads the probe object back.
func (s *Store) checkRead(ctx context.Context, key string, want []byte) error {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return s.explain(ctx, err, "read", "s3:GetObject")
	}
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil {
		return s.explain(ctx, err, "read", "s3:GetObject")
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("s3: bucket %q at %s gave back %d bytes for the %d just written", s.bucket, s.endpoint, len(got), len(want))
	}
	return nil
}

// explain turns the failure of a request that would verb (needing
// permission) into an operator's message.
func (s *Store) explain(ctx context.Context, err error, verb, permission string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("s3: check bucket %q at %s: %w", s.bucket, s.endpoint, err)
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		cause := send.Err
		var op *net.OpError
		if errors.As(cause, &op) {
			cause = op // without the request's URL
		}
		return fmt.Errorf("s3: the endpoint %s is unreachable: %w", s.endpoint, cause)
	}
	switch errorCode(err) {
	case "NoSuchBucket":
		return fmt.Errorf("s3: the bucket %q does not exist at %s; onboard does not create buckets", s.bucket, s.endpoint)
	case "InvalidAccessKeyId", "XAdminUserNotFound": // the latter is versitygw's
		return fmt.Errorf("s3: wrong credentials: %s does not know the access key id %q", s.endpoint, s.keyID)
	case "SignatureDoesNotMatch":
		return fmt.Errorf("s3: wrong credentials: the secret access key is not the one of access key id %q", s.keyID)
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException":
		return fmt.Errorf("s3: the bucket %q is not in the configured region, or needs another endpoint: %w", s.bucket, err)
	case "AccessDenied", "AllAccessDisabled":
		return fmt.Errorf("s3: no permission to %s: the key %q may not %s under %q in bucket %q (it needs %s): %w",
			verb, s.keyID, verb, s.prefix, s.bucket, permission, err)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusForbidden {
		// A HEAD-like answer without a body has no code to tell the
		// two apart.
		return fmt.Errorf("s3: wrong credentials or no permission to %s in bucket %q (it needs %s): %w", verb, s.bucket, permission, err)
	}
	return fmt.Errorf("s3: cannot %s in bucket %q at %s: %w", verb, s.bucket, s.endpoint, err)
}
