package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
)

// RecordsError is why what Restore read is not records that Backup wrote.
// Its text completes a sentence whose subject is the records: "they are
// cut short".
type RecordsError string

func (e RecordsError) Error() string { return string(e) }

// Bounds of what checkedRecords accepts: Badger refuses longer keys in a
// transaction, and its stream never writes a list anywhere near a GiB (it
// cuts them at about 100 MiB).
const (
	maxRecordKey  = 65000
	maxRecordList = 1 << 30
	// maxRecordVersion is far beyond any commit timestamp a store reaches,
	// and far below the wrap-around at which DB.Load's next timestamp
	// becomes 0 and its Close never returns.
	maxRecordVersion = 1 << 62
	// safeMeta are the bits of Badger's internal metadata that its own
	// backups may carry: deleted, earlier versions discardable, merge
	// entry. Backup writes none.
	safeMeta = 1<<0 | 1<<2 | 1<<3
)

// checkedRecords reads Badger's backup format (a little-endian uint64
// length, then a protobuf KVList of that many bytes, repeated) from r and
// passes on only lists it has checked: whole, decodable, and holding
// records as Backup writes them. DB.Load trusts its input: a length it
// cannot hold panics it, and a record with Badger's internal flags, or a
// version at the top of the range, makes a database that breaks when read
// or that never closes. A list that fails its check ends the stream with a
// RecordsError, which DB.Load returns as it is.
type checkedRecords struct {
	r    io.Reader
	out  bytes.Buffer // the checked list being passed on
	list bytes.Buffer // the list being read
	n    int          // lists read
	err  error
}

func (c *checkedRecords) Read(p []byte) (int, error) {
	for c.out.Len() == 0 {
		if c.err != nil {
			return 0, c.err
		}
		c.err = c.next()
	}
	return c.out.Read(p)
}

// next reads and checks the next list into c.out; io.EOF at the end of
// the last list.
func (c *checkedRecords) next() error {
	var head [8]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return c.readError(err)
	}
	c.n++
	size := binary.LittleEndian.Uint64(head[:])
	if size > maxRecordList {
		return RecordsError(fmt.Sprintf("are not in Badger's backup format: list %d claims %d bytes", c.n, size))
	}
	// Copied as it arrives, so that a length the data does not back costs
	// no more memory than the data.
	c.list.Reset()
	if n, err := io.CopyN(&c.list, c.r, int64(size)); err != nil {
		if errors.Is(err, io.EOF) && n < int64(size) {
			return RecordsError(fmt.Sprintf("are cut short: list %d has %d of its %d bytes", c.n, n, size))
		}
		return c.readError(err)
	}
	var list pb.KVList
	if err := proto.Unmarshal(c.list.Bytes(), &list); err != nil {
		return RecordsError(fmt.Sprintf("are not in Badger's backup format: list %d does not decode", c.n))
	}
	for _, kv := range list.Kv {
		if why := checkRecord(kv); why != "" {
			return RecordsError(fmt.Sprintf("hold an invalid record in list %d: %s", c.n, why))
		}
	}
	c.out.Write(head[:])
	c.out.Write(c.list.Bytes())
	return nil
}

// readError is err, met while reading a list: an early end is the
// records' fault, anything else the reader's.
func (c *checkedRecords) readError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return RecordsError(fmt.Sprintf("are cut short in list %d", c.n+1))
	}
	return err
}

// checkRecord says what is wrong with a record for Backup's output, or
// "": a key of 1 to maxRecordKey bytes, one byte of user metadata at
// most, one byte of Badger's internal metadata at most with none but the
// safeMeta bits (another marks the value as a pointer into a value log the
// restore does not have, or as part of a transaction), and a version in
// 1..maxRecordVersion.
func checkRecord(kv *pb.KV) string {
	switch {
	case len(kv.Key) == 0:
		return "an empty key"
	case len(kv.Key) > maxRecordKey:
		return fmt.Sprintf("a key of %d bytes", len(kv.Key))
	case len(kv.Meta) > 1 || len(kv.Meta) == 1 && kv.Meta[0]&^safeMeta != 0:
		return fmt.Sprintf("Badger's internal metadata %x", kv.Meta)
	case len(kv.UserMeta) > 1:
		return fmt.Sprintf("%d bytes of user metadata", len(kv.UserMeta))
	case kv.Version == 0 || kv.Version > maxRecordVersion:
		return fmt.Sprintf("version %d", kv.Version)
	}
	return ""
}
