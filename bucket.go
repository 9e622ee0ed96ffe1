package main

import (
	"context"

	"onboard/blobs/bucket"
	"onboard/config"
)

// openBucket returns the blob store in the bucket blobs.s3_* names, once
// it has checked that the bucket exists and that the key may list, write,
// read and delete under the prefix; an error says what to fix.
func openBucket(ctx context.Context, cfg config.Config) (*bucket.Store, error) {
	b, err := bucket.New(bucket.Options{
		Endpoint: cfg.Blobs.S3Endpoint, Bucket: cfg.Blobs.S3Bucket, Region: cfg.Blobs.S3Region,
		Prefix: cfg.Blobs.S3Prefix, PathStyle: cfg.Blobs.S3PathStyle,
		AccessKeyID: cfg.Blobs.S3AccessKeyID, SecretAccessKey: cfg.Blobs.S3SecretAccessKey,
	})
	if err != nil {
		return nil, err
	}
	if err := b.Check(ctx); err != nil {
		return nil, err
	}
	return b, nil
}
