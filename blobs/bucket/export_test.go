package bucket

import (
	"context"
	"time"
)

// AbortStaleUploads aborts the uploads under the prefix begun before
// cutoff, as Walk does with an hour ago.
func (s *Store) AbortStaleUploads(ctx context.Context, cutoff time.Time) int {
	return s.abortStaleUploads(ctx, cutoff)
}

// PartSizeFor is partSizeFor.
var PartSizeFor = partSizeFor
