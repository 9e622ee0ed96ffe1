package backup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"onboard/onboarding"
	"onboard/storage/dump"
	"onboard/storage/record"
)

// The records of an archive of format version 2: records.ndjson, one
// dump.Line per line as encoding/json writes it, in the order the store
// dumped them.

// Records is a store a Maker backs up: either backend.
type Records interface {
	// Dump passes every record of one consistent snapshot to emit, as
	// lines in the order of dump.Kinds; emit's error, or ctx's, stops it
	// and is returned.
	Dump(ctx context.Context, emit func(*dump.Line) error) error
}

// Loader is a store a restore loads records into: either backend.
type Loader interface {
	// Load writes the lines next yields (io.EOF after the last) into the
	// store, which must hold no record (dump.ErrNotEmpty otherwise),
	// with everything the store derives from them. A line it cannot load
	// for what it holds is a *dump.LineError.
	Load(ctx context.Context, next func() (*dump.Line, error)) error
}

// maxLine bounds a line of records.ndjson that a reader accepts: far
// above any record's size (an application with every document is a few
// tens of KiB), and low enough that a forged archive cannot have the
// reader hold gigabytes.
const maxLine = 64 << 20

// recordsWriter writes lines to w, counting them and collecting the blobs
// the application and RFI request records refer to.
type recordsWriter struct {
	w     *bufio.Writer
	kinds map[string]int
	blobs map[string]bool
}

// newRecordsWriter returns a recordsWriter counting every kind, from 0.
func newRecordsWriter(w io.Writer) *recordsWriter {
	rw := &recordsWriter{w: bufio.NewWriterSize(w, 1<<20), kinds: map[string]int{}, blobs: map[string]bool{}}
	for _, k := range dump.Kinds() {
		rw.kinds[k] = 0
	}
	return rw
}

// write writes l as one line.
func (rw *recordsWriter) write(l *dump.Line) error {
	if err := rw.noteBlobs(l); err != nil {
		return fmt.Errorf("%s record: %w", l.Kind, err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	rw.kinds[l.Kind]++
	if _, err := rw.w.Write(b); err != nil {
		return err
	}
	return rw.w.WriteByte('\n')
}

// noteBlobs adds the blobs l's record refers to, if any.
func (rw *recordsWriter) noteBlobs(l *dump.Line) error {
	var ids []string
	switch l.Kind {
	case dump.Application:
		var a onboarding.Application
		if err := record.Decode(l.Record, &a); err != nil {
			return err
		}
		ids = a.BlobIDs()
	case dump.RFIRequest:
		var r onboarding.RFIRequest
		if err := record.Decode(l.Record, &r); err != nil {
			return err
		}
		ids = r.BlobIDs()
	}
	for _, id := range ids {
		rw.blobs[id] = true
	}
	return nil
}

// flush writes what is buffered.
func (rw *recordsWriter) flush() error { return rw.w.Flush() }

// records counts the lines written.
func (rw *recordsWriter) records() int {
	n := 0
	for _, c := range rw.kinds {
		n += c
	}
	return n
}

// recordsReader reads the lines of records.ndjson, checking each one's
// shape (dump.Line.Check) and, at the end, their counts against the
// manifest's.
type recordsReader struct {
	r     *bufio.Reader
	want  Counts
	n     int
	kinds map[string]int
}

func newRecordsReader(r io.Reader, want Counts) *recordsReader {
	return &recordsReader{r: bufio.NewReaderSize(r, 1<<20), want: want, kinds: map[string]int{}}
}

// next returns the next line; io.EOF after the last. What is wrong with
// the lines is an ArchiveError.
func (rr *recordsReader) next() (*dump.Line, error) {
	b, err := rr.readLine()
	if errors.Is(err, io.EOF) && len(b) == 0 {
		return nil, rr.end()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	rr.n++
	var l dump.Line
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, rr.bad(fmt.Errorf("not a JSON object: %v", err))
	}
	if err := l.Check(); err != nil {
		return nil, rr.bad(err)
	}
	rr.kinds[l.Kind]++
	return &l, nil
}

// readLine reads up to the next newline, which it drops; a last line
// without one is still a line.
func (rr *recordsReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := rr.r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			rr.n++
			return nil, rr.bad(fmt.Errorf("over %d bytes long", maxLine))
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte{'\n'}), err
	}
}

// end checks the counts once every line is read: io.EOF when they match.
func (rr *recordsReader) end() error {
	for _, k := range dump.Kinds() {
		if rr.kinds[k] != rr.want.Kinds[k] {
			return damaged("its records hold %d lines of kind %s; its manifest says %d", rr.kinds[k], k, rr.want.Kinds[k])
		}
	}
	return io.EOF
}

// bad is the ArchiveError of the current line, which err says is wrong.
func (rr *recordsReader) bad(err error) error {
	return notBackup(fmt.Sprintf("its records' line %d: %v", rr.n, err))
}

// lineError turns a store's complaint about a line into an ArchiveError;
// other errors are the store's own.
func lineError(err error) error {
	var le *dump.LineError
	if errors.As(err, &le) {
		return notBackup(fmt.Sprintf("its records' line %d: %v", le.Line, le.Err))
	}
	return err
}
