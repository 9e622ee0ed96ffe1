// Package buckettest gives tests a key prefix of their own in the bucket
// of the S3-compatible server named by ONBOARD_TEST_S3_ENDPOINT and
// ONBOARD_TEST_S3_BUCKET, ONBOARD_TEST_S3_ACCESS_KEY_ID and
// ONBOARD_TEST_S3_SECRET_ACCESS_KEY (.ci/services starts versitygw and
// sets them). Without them a test skips with the reason, or fails when
// CI=true, so that CI cannot pass by skipping the S3 backend.
package buckettest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"onboard/blobs/bucket"
)

// The variables naming the test server.
const (
	EnvEndpoint        = "ONBOARD_TEST_S3_ENDPOINT"
	EnvBucket          = "ONBOARD_TEST_S3_BUCKET"
	EnvAccessKeyID     = "ONBOARD_TEST_S3_ACCESS_KEY_ID"
	EnvSecretAccessKey = "ONBOARD_TEST_S3_SECRET_ACCESS_KEY"
)

// Server returns the options of the test bucket, with no prefix and path
// style addressing, skipping t (failing it with CI=true) when the
// variables are not all set.
func Server(t testing.TB) bucket.Options {
	t.Helper()
	o := bucket.Options{
		Endpoint:        os.Getenv(EnvEndpoint),
		Bucket:          os.Getenv(EnvBucket),
		Region:          "us-east-1",
		PathStyle:       true,
		AccessKeyID:     os.Getenv(EnvAccessKeyID),
		SecretAccessKey: os.Getenv(EnvSecretAccessKey),
	}
	if o.Endpoint == "" || o.Bucket == "" || o.AccessKeyID == "" || o.SecretAccessKey == "" {
		const vars = EnvEndpoint + ", " + EnvBucket + ", " + EnvAccessKeyID + " and " + EnvSecretAccessKey
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s are not all set: CI must run the S3 tests (.ci/services start)", vars)
		}
		t.Skipf("%s are not all set: no S3 server to test against (eval \"$(.ci/services start)\" starts one)", vars)
	}
	return o
}

// Options returns the options of the test bucket under a new random
// prefix, so that no two tests see each other's objects. Everything under
// the prefix is removed when t ends.
func Options(t testing.TB) bucket.Options {
	t.Helper()
	o := Server(t)
	o.Prefix = "test-" + strings.ToLower(rand.Text()[:16]) + "/"
	t.Cleanup(func() { RemoveAll(t, o) })
	return o
}

// Client returns a plain S3 client for the bucket of o, to look at or
// change the bucket behind a store's back.
func Client(o bucket.Options) *s3.Client {
	return s3.New(s3.Options{
		Region:       o.Region,
		BaseEndpoint: aws.String(o.Endpoint),
		UsePathStyle: o.PathStyle,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey}, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// Keys returns the keys of the objects under o's prefix, at any depth.
func Keys(t testing.TB, o bucket.Options) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(Client(o), &s3.ListObjectsV2Input{Bucket: &o.Bucket, Prefix: &o.Prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", o.Prefix, err)
		}
		for _, obj := range page.Contents {
			keys = append(keys, aws.ToString(obj.Key))
		}
	}
	return keys
}

// Uploads returns the keys of the multipart uploads in progress under o's
// prefix.
func Uploads(t testing.TB, o bucket.Options) []string {
	t.Helper()
	out, err := Client(o).ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &o.Bucket, Prefix: &o.Prefix})
	if err != nil {
		t.Fatalf("list uploads under %s: %v", o.Prefix, err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

// RemoveAll removes every object and aborts every upload under o's
// prefix, which must not be empty.
func RemoveAll(t testing.TB, o bucket.Options) {
	t.Helper()
	if o.Prefix == "" {
		t.Fatal("buckettest: RemoveAll of the whole bucket")
	}
	ctx := context.Background()
	c := Client(o)
	for _, key := range Keys(t, o) {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &o.Bucket, Key: &key}); err != nil {
			t.Errorf("remove %s: %v", key, err)
		}
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &o.Bucket, Prefix: &o.Prefix})
	if err != nil {
		t.Errorf("list uploads under %s: %v", o.Prefix, err)
		return
	}
	for _, u := range out.Uploads {
		if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &o.Bucket, Key: u.Key, UploadId: u.UploadId}); err != nil {
			t.Errorf("abort upload of %s: %v", aws.ToString(u.Key), err)
		}
	}
}
