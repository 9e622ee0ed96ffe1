package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// A database whose write-ahead logs still hold memtables (a server killed,
// or stopped with no room to flush) cannot be opened for writing on a full
// disk: the open flushes them through memory maps. Badger opens it
// read-only, replaying the logs into memory, except that it refuses a log
// whose file runs past its last entry (ErrTruncateNeeded): every log does,
// since its file is created at full size. Opening for writing truncates
// such a log at its last entry; openReadOnly does the same, which frees
// space and needs none, and opens again. Before that it cuts each log at
// its first hole, past which Badger wrote nothing: reading a hole through
// a memory map allocates a page on some filesystems (tmpfs), a SIGBUS on
// a full one, and Badger's replay reads ahead of its last entry.

// truncateNeeded finds, in Badger's refusal, the log's file id, where its
// entries end and the file's size.
var truncateNeeded = regexp.MustCompile(`while opening fid: (\d+)\b.* end offset: (\d+) < size: (\d+)`)

// maxTruncations bounds the logs openReadOnly truncates: Badger keeps a
// handful of memtables (NumMemtables), each in its own log.
const maxTruncations = 16

// openReadOnly opens the database of opts read-only, truncating each
// write-ahead log that Badger refuses for running past its last entry at
// that entry, as an open for writing would.
func openReadOnly(opts badger.Options) (*badger.DB, error) {
	opts = readOnlyOptions(opts)
	if err := cutLogsAtHoles(opts.Dir); err != nil {
		return nil, err
	}
	for range maxTruncations {
		db, err := badger.Open(opts)
		if err == nil || !strings.Contains(err.Error(), badger.ErrTruncateNeeded.Error()) {
			return db, err
		}
		if terr := truncateLog(opts.Dir, err.Error()); terr != nil {
			return nil, fmt.Errorf("%w (%v)", err, terr)
		}
	}
	return nil, fmt.Errorf("more than %d write-ahead logs to truncate in %s", maxTruncations, opts.Dir)
}

// truncateLog truncates the write-ahead log that refusal names at the end
// of its entries, after checking that the file is the size Badger saw.
func truncateLog(dir, refusal string) error {
	m := truncateNeeded.FindStringSubmatch(refusal)
	if m == nil {
		return fmt.Errorf("no log named in Badger's refusal")
	}
	fid, err1 := strconv.Atoi(m[1])
	end, err2 := strconv.ParseInt(m[2], 10, 64)
	size, err3 := strconv.ParseInt(m[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || end <= 0 || end >= size {
		return fmt.Errorf("unexpected figures in Badger's refusal")
	}
	path := filepath.Join(dir, fmt.Sprintf("%05d.mem", fid))
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() != size {
		return fmt.Errorf("%s is %d bytes, not the %d Badger saw", path, st.Size(), size)
	}
	return os.Truncate(path, end)
}

// seekHole is lseek's SEEK_HOLE (Linux): the offset of the first hole at or
// after the offset given, the file's size when it has none.
const seekHole = 4

// cutLogsAtHoles truncates each write-ahead log (*.mem) in dir at the start
// of its first hole. A log is written from its start, page after page, so
// nothing it holds lies past its first hole. A filesystem that cannot tell
// holes answers the file's size, and the log is left as it is.
func cutLogsAtHoles(dir string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "*.mem"))
	if err != nil {
		return err
	}
	for _, path := range logs {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		st, err := f.Stat()
		if err == nil {
			var hole int64
			hole, err = f.Seek(0, seekHole)
			if err == nil && hole > 0 && hole < st.Size() {
				err = f.Truncate(hole)
			}
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("cut write-ahead log %s at its first hole: %w", path, err)
		}
	}
	return nil
}
