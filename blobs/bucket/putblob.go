package bucket

import (
	"context"
	"fmt"
	"io"
)

// PutBlob stores the size bytes r yields as blob id, replacing an object
// there already: a restore puts each file of a backup under the id its
// records name (backup.BlobWriter). It sends them as Put does, so the
// object appears whole or not at all; content longer or shorter than size
// fails and leaves no object.
func (s *Store) PutBlob(ctx context.Context, id string, r io.Reader, size int64) error {
	key, ok := s.key(id)
	if !ok {
		return fmt.Errorf("s3: put blob: %q is not a blob id", id)
	}
	if size < 0 {
		return fmt.Errorf("s3: put blob %s: negative size %d", id, size)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("s3: put blob %s: %w", id, err)
	}
	in := io.LimitReader(ctxReader{ctx: ctx, r: r}, size+1)
	part := partSizeFor(size)
	buf, eof, err := fill(in, nil, part)
	if err != nil {
		return fmt.Errorf("s3: put blob %s: %w", id, err)
	}
	if eof {
		if int64(len(buf)) > size {
			return fmt.Errorf("s3: put blob %s: content over %d bytes", id, size)
		}
		if int64(len(buf)) < size {
			return fmt.Errorf("s3: put blob %s: %d bytes read, %d expected", id, len(buf), size)
		}
		return s.putObject(ctx, key, buf)
	}
	n, err := s.putMultipart(ctx, key, in, buf, part, size)
	if err != nil {
		return err
	}
	if n != size {
		s.forget(ctx, key)
		return fmt.Errorf("s3: put blob %s: %d bytes read, %d expected", id, n, size)
	}
	return nil
}
