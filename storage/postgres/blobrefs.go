package postgres

import (
	"context"
	"fmt"
)

// BlobReferences returns the set of blobs that the application and RFI
// request records refer to, read from one snapshot: the blob_ids column
// every write of a record fills from its BlobIDs, so no record is decoded.
func (s *Store) BlobReferences(ctx context.Context) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT unnest(blob_ids) FROM applications WHERE blob_ids IS NOT NULL
		UNION SELECT unnest(blob_ids) FROM rfi_requests WHERE blob_ids IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("blob references: %w", err)
		}
		set[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("blob references: %w", err)
	}
	return set, nil
}
