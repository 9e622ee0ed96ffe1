package bucket

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// AbortStaleUploads aborts the uploads under the prefix begun before
// cutoff, as Walk does with an hour ago.
func (s *Store) AbortStaleUploads(ctx context.Context, cutoff time.Time) int {
	return s.abortStaleUploads(ctx, cutoff)
}

// PartSizeFor is partSizeFor.
var PartSizeFor = partSizeFor

// NewCounting is New with a client that reports each request to count
// before sending it.
func NewCounting(o Options, count func(*http.Request)) (*Store, error) {
	return newStore(o, func(so *s3.Options) {
		so.HTTPClient = countingClient{next: so.HTTPClient, count: count}
	})
}

// countingClient reports each request, and sends it with next.
type countingClient struct {
	next  s3.HTTPClient
	count func(*http.Request)
}

func (c countingClient) Do(r *http.Request) (*http.Response, error) {
	c.count(r)
	return c.next.Do(r)
}
