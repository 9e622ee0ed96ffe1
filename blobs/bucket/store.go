package bucket

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"onboard/blobs"
	"onboard/onboarding"
)

// Options say which bucket holds the blobs and how to reach it: the
// [blobs] s3_* settings.
type Options struct {
	// Endpoint is the S3 API's base URL, such as
	// https://s3.eu-west-2.amazonaws.com or http://127.0.0.1:7070.
	Endpoint string
	// Bucket is the bucket's name; it must exist (onboard does not create
	// buckets).
	Bucket string
	// Region signs the requests; us-east-1 when empty.
	Region string
	// Prefix, when set, is put before every key: the blobs of this
	// service are prefix/id. A prefix that does not end in "/" gets one;
	// a leading "/" is dropped.
	Prefix string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// rather than in the host name (bucket.endpoint/key), as most
	// self-hosted S3-compatible servers need.
	PathStyle bool
	// AccessKeyID and SecretAccessKey sign the requests.
	AccessKeyID     string
	SecretAccessKey string
}

// defaultRegion signs requests when Options.Region is empty.
const defaultRegion = "us-east-1"

// requestTimeout bounds each request made for a method that has no
// context of its own (Delete, Walk), the wait for the headers of every
// answer, and a silence of the server while an answer is read: a blob
// open for reading (Open has no context) fails rather than hang when the
// server stops sending.
const requestTimeout = time.Minute

// partSize is the size of the parts of a multipart upload, and the
// size up to which Put sends a blob in one request: S3's smallest part,
// so that an upload in progress holds as little memory as S3 allows.
const partSize = 5 << 20

// Store keeps blobs as the objects of one S3 bucket, under a key prefix.
// It implements onboarding.Blobs, onboarding.BlobBatcher and
// onboarding.SweptBlobs, and is safe for concurrent use.
type Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending in "/"
	endpoint string // for messages
	keyID    string // for messages
}

var (
	_ onboarding.Blobs       = (*Store)(nil)
	_ onboarding.BlobBatcher = (*Store)(nil)
	_ onboarding.SweptBlobs  = (*Store)(nil)
	_ blobs.Guarded          = (*Store)(nil)
)

// New returns the store of the bucket o names. It checks the options but
// makes no request: Check does, before the store is trusted.
func New(o Options) (*Store, error) { return newStore(o) }

// newStore is New, with changes to the client's options after New's.
func newStore(o Options, optFns ...func(*s3.Options)) (*Store, error) {
	if o.Endpoint == "" {
		return nil, errors.New("s3: no endpoint")
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("s3: endpoint %q is not an http:// or https:// URL", o.Endpoint)
	}
	if o.Bucket == "" {
		return nil, errors.New("s3: no bucket")
	}
	if o.AccessKeyID == "" || o.SecretAccessKey == "" {
		return nil, errors.New("s3: no access key id or secret access key")
	}
	region := o.Region
	if region == "" {
		region = defaultRegion
	}
	prefix := strings.TrimLeft(o.Prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	creds := aws.Credentials{AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey, Source: "onboard configuration"}
	httpClient := awshttp.NewBuildableClient().WithReadTimeout(requestTimeout).WithTransportOptions(func(t *http.Transport) {
		t.ResponseHeaderTimeout = requestTimeout
		t.MaxIdleConnsPerHost = 64 // concurrent uploads and downloads of one instance
	})
	client := s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(o.Endpoint),
		UsePathStyle: o.PathStyle,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
		HTTPClient: httpClient,
		// Checksums only where the API requires them: many S3-compatible
		// servers reject the trailing checksums the SDK would otherwise
		// add to every upload. Requests are still signed (SigV4).
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}, optFns...)
	return &Store{
		client: client, bucket: o.Bucket, prefix: prefix,
		endpoint: o.Endpoint, keyID: o.AccessKeyID,
	}, nil
}

// key returns the object key of blob id, or false when id is not a blob id
// (blobs.ValidID): the only place an outside id becomes a key.
func (s *Store) key(id string) (string, bool) {
	if !blobs.ValidID(id) {
		return "", false
	}
	return s.prefix + id, true
}

// Delete removes blob id. A missing blob is not an error, and neither is an
// id that is not a blob id: no such blob can exist.
func (s *Store) Delete(id string) error {
	key, ok := s.key(id)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := s.deleteKey(ctx, key); err != nil {
		return fmt.Errorf("s3: delete %s: %w", id, err)
	}
	return nil
}

// deleteKey removes the object at key; a missing one is not an error.
func (s *Store) deleteKey(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// Batch starts a batch of new blobs (onboarding.BlobBatcher). An object is
// durable once its upload has returned, so a batch's Put is Store.Put and
// its Sync has nothing to do.
func (s *Store) Batch() onboarding.BlobBatch { return batch{s} }

// batch is a Store's batch: every Put already durable.
type batch struct{ *Store }

// Sync does nothing: every blob of the batch is durable already.
func (batch) Sync() error { return nil }

// isNotFound reports whether err is S3's answer for a missing object.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return true
	}
	code := errorCode(err)
	return code == "NoSuchKey" || code == "NotFound"
}

// errorCode returns the S3 error code of err, or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// cleanupContext is the context of the clean-up after a failed request:
// not cancelled with the request's, but bounded.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
}
