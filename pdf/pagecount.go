package pdf

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"slices"
)

// PageCount returns the number of pages of a PDF of size bytes readable
// through r.
//
// How: a single forward scan of the file with a small window (it never reads
// outside [0, size) and never holds more than the window and one decoded
// object's interesting entries in memory). The scanner tokenises the file
// the way a PDF reader does (comments, strings, names with #xx escapes,
// dictionaries, arrays, "N G obj" headers) and skips stream data by its
// /Length, or by searching for "endstream" when /Length is indirect or wrong.
// For every indirect object it keeps only what the page tree needs: whether
// it is a /Type /Page, a /Type /Pages node (its /Count and /Kids) or the
// /Type /Catalog (its /Pages). Objects inside /Type /ObjStm streams with
// /Filter /FlateDecode (how most PDF writers since PDF 1.5 store them) are
// inflated with compress/zlib and read the same way, as are those of
// unfiltered object streams. A later definition of an
// object number replaces an earlier one, as incremental updates do. The
// /Root of the last trailer (or cross-reference stream) names the catalog.
//
// The count is a bound the caller can hold a document to (max_pages), so
// it never comes from a claim the scan could not check against every
// object of the file:
//   - when the scan did not read every object (an object stream it cannot
//     decode, or one beyond the work bounds below), there is no count: an
//     object it skipped may be a page, or a later version of a Pages node;
//   - otherwise, the number of leaves of the page tree walked from the
//     catalog's root Pages node, when the whole tree resolves (every kid is
//     a known Page or Pages object, no cycle);
//   - otherwise (a damaged tree), the larger of the number of distinct page
//     objects found and the largest /Count of any Pages node.
//
// It returns ErrNoPages when there is no count or it finds no page, which
// is also the answer for a file that is not a PDF at all. Calls are
// independent and may run concurrently.
//
// Limits: the cross-reference table is not used, so objects that an update
// deleted but left in the file are still seen (the page tree walk makes
// this harmless when the tree is readable; a damaged tree may then count
// more pages than the document shows, never fewer); object streams
// compressed with any filter other than FlateDecode (or with a predictor),
// or encrypted, are not read, so a PDF that has one is reported as
// unreadable; page objects without /Type are only counted through the tree
// walk. Work is bounded: at most 64 MiB are inflated (or
// read from unfiltered object streams) in total and at most twice the file
// plus 16 MiB of compressed data read, nesting is limited to 32 levels, and
// at most 2^20 page-tree objects and 2^20 kids are tracked.
func PageCount(r io.ReaderAt, size int64) (int, error) {
	if size <= 0 {
		return 0, ErrNoPages
	}
	s := &scanner{
		r:              r,
		size:           size,
		objs:           make(map[int64]*treeObject),
		root:           -1,
		lastCatalog:    -1,
		inflateLeft:    maxInflate,
		compressedLeft: 2*size + 16<<20,
	}
	s.p.lex.b = newFileBuffer(r, size)
	s.scanFile()
	n := s.pageCount()
	if n <= 0 {
		return 0, ErrNoPages
	}
	return int(min(n, 1<<31-1)), nil
}

// ErrNoPages is PageCount's error for a file in which it finds no page: not
// a PDF, a damaged one, or one whose page tree it cannot read (see Limits).
var ErrNoPages = errors.New("pdf: no page found")

// Bounds of PageCount's work and memory.
const (
	maxInflate    = 64 << 20 // bytes inflated from object streams, in total
	maxDepth      = 32       // nesting of arrays and dictionaries
	maxObjects    = 1 << 20  // page-tree objects tracked
	maxKids       = 1 << 20  // kids of Pages nodes tracked, in total
	maxObjStmObjs = 1 << 17  // objects read from one object stream
	readWindow    = 32 << 10 // read window of the file scan
)

// treeObject is what the scan keeps of one page-tree object.
type treeObject struct {
	kind     uint8   // kindPage, kindPages or kindCatalog
	count    int64   // Pages: /Count, -1 when absent or not a number
	kids     []int64 // Pages: object numbers of /Kids
	kidsOK   bool    // Pages: /Kids was an array and was kept whole
	pagesRef int64   // Catalog: object number of /Pages, -1 when absent
}

const (
	kindPage uint8 = iota + 1
	kindPages
	kindCatalog
)

// scanner is the state of one PageCount.
type scanner struct {
	r    io.ReaderAt
	size int64
	p    parser // over the file

	objs        map[int64]*treeObject
	extraPages  int64 // page objects beyond maxObjects
	kidsKept    int
	root        int64 // /Root of the last trailer, -1 when none
	lastCatalog int64

	inflateLeft    int64
	compressedLeft int64
	// incomplete is set when an object may have gone unread: an object
	// stream not decoded whole, or objects and kids beyond the bounds.
	incomplete bool
}

// scanFile reads the file's top level: indirect objects, trailers and
// streams.
func (s *scanner) scanFile() {
	lx := &s.p.lex
	var n1, n2 int64 // the last two integers, for "N G obj"
	ints := 0
	for {
		t := lx.next()
		switch {
		case t.kind == tokEOF:
			return
		case t.kind == tokInt:
			n2, n1 = n1, t.i
			ints++
			continue
		case t.kind == tokKeyword && t.s == kwObj:
			if ints >= 2 && n2 >= 0 {
				s.indirectObject(n2)
			}
		case t.kind == tokKeyword && t.s == kwTrailer:
			var d dict
			d.reset()
			if t2 := lx.next(); t2.kind == tokDictOpen {
				s.p.parseDict(1, &d)
				if d.rootRef >= 0 {
					s.root = d.rootRef
				}
			} else {
				lx.unread(t2)
			}
		case t.kind == tokKeyword && t.s == kwStream:
			// A stream whose object header was not understood.
			s.skipStream(t, nil)
		}
		ints = 0
	}
}

// indirectObject reads the body of object num after its "obj" keyword.
func (s *scanner) indirectObject(num int64) {
	lx := &s.p.lex
	var d dict
	d.reset()
	v := s.p.parseValue(lx.next(), 0, &d)
	if v != valDict {
		s.record(num, nil)
		return
	}
	if t := lx.next(); t.kind == tokKeyword && t.s == kwStream {
		if d.typ == nameObjStm {
			s.objectStream(t.end, &d)
		}
		s.skipStream(t, &d)
	} else {
		lx.unread(t)
	}
	s.record(num, &d)
}

// record keeps what object num says about the page tree; d is nil when the
// object is not a dictionary.
func (s *scanner) record(num int64, d *dict) {
	if d != nil && d.typ == nameXRef && d.rootRef >= 0 {
		s.root = d.rootRef // a cross-reference stream is also a trailer
	}
	var o *treeObject
	if d != nil {
		switch d.typ {
		case namePage:
			o = &treeObject{kind: kindPage}
		case namePages:
			o = &treeObject{kind: kindPages, count: d.count, kids: d.kids, kidsOK: d.kidsOK}
			if s.kidsKept+len(d.kids) > maxKids {
				o.kids, o.kidsOK = nil, false
				s.incomplete = true
			}
			s.kidsKept += len(o.kids)
		case nameCatalog:
			o = &treeObject{kind: kindCatalog, pagesRef: d.pagesRef}
			s.lastCatalog = num
		}
	}
	if o == nil {
		delete(s.objs, num)
		return
	}
	if _, ok := s.objs[num]; !ok && len(s.objs) >= maxObjects {
		if o.kind == kindPage {
			s.extraPages++
		}
		s.incomplete = true
		return
	}
	s.objs[num] = o
}

// skipStream moves the scan past the data of the stream whose "stream"
// keyword is t: by the dictionary's /Length when "endstream" follows it, else
// by searching for "endstream".
func (s *scanner) skipStream(t token, d *dict) {
	lx := &s.p.lex
	lx.nback = 0
	start := dataStart(s.r, t.end, s.size)
	if d != nil && d.length >= 0 && d.length <= s.size-start {
		end := start + d.length
		var tail [32]byte
		n, _ := s.r.ReadAt(tail[:min(int64(len(tail)), s.size-end)], end)
		b := bytes.TrimLeft(tail[:n], "\x00\t\n\f\r ")
		if bytes.HasPrefix(b, []byte("endstream")) {
			lx.b.seek(end + int64(n-len(b)) + int64(len("endstream")))
			return
		}
	}
	lx.b.seek(start)
	lx.b.skipPast([]byte("endstream"))
}

// dataStart returns where the data of a stream begins: after the end of
// line that follows the "stream" keyword ending at end.
func dataStart(r io.ReaderAt, end, size int64) int64 {
	var eol [2]byte
	n, _ := r.ReadAt(eol[:min(2, max(size-end, 0))], end)
	switch {
	case n >= 2 && eol[0] == '\r' && eol[1] == '\n':
		return end + 2
	case n >= 1 && (eol[0] == '\n' || eol[0] == '\r'):
		return end + 1
	}
	return end
}

// objectStream reads the objects of a /Type /ObjStm stream whose keyword
// ends at end. A stream it does not read whole (a filter it does not
// decode, damaged or cut-short data, a work bound reached) makes the scan
// incomplete.
func (s *scanner) objectStream(end int64, d *dict) {
	plain := len(d.filters) == 0 && !d.filterBad
	if d.n <= 0 {
		return // no objects
	}
	if d.first < 0 || d.n > maxObjStmObjs || !(plain || d.flateOnly()) || s.inflateLeft <= 0 || s.compressedLeft <= 0 {
		s.incomplete = true
		return
	}
	start := dataStart(s.r, end, s.size)
	length := s.size - start
	if d.length >= 0 && d.length < length {
		length = d.length
	}
	var data io.Reader = &budgetReader{r: io.NewSectionReader(s.r, start, length), left: &s.compressedLeft}
	if !plain {
		zr, err := zlib.NewReader(data)
		if err != nil {
			s.incomplete = true
			return
		}
		defer zr.Close()
		data = zr
	}
	src := &errReader{r: data}
	out := &io.LimitedReader{R: src, N: s.inflateLeft}
	read := true // every object the header lists was found
	defer func() {
		s.inflateLeft = out.N
		if !read || src.err != nil || out.N <= 0 {
			s.incomplete = true
		}
	}()

	var p parser
	p.lex.b = newStreamBuffer(out)
	type entry struct{ num, off int64 }
	var entries []entry
	for int64(len(entries)) < d.n {
		t1 := p.lex.next()
		if t1.kind != tokInt {
			p.lex.unread(t1)
			break
		}
		t2 := p.lex.next()
		if t2.kind != tokInt {
			p.lex.unread(t2)
			p.lex.unread(t1)
			break
		}
		entries = append(entries, entry{t1.i, t2.i})
	}
	read = int64(len(entries)) == d.n
	slices.SortStableFunc(entries, func(a, b entry) int { return compareInt64(a.off, b.off) })
	for _, e := range entries {
		if e.num < 0 || e.off < 0 || !p.skipTo(d.first+e.off) {
			read = false
			continue
		}
		var od dict
		od.reset()
		if p.parseValue(p.lex.next(), 0, &od) == valDict {
			s.record(e.num, &od)
		} else {
			s.record(e.num, nil)
		}
	}
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// errReader remembers the first error of r other than io.EOF.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// budgetReader reads from r while a shared budget lasts.
type budgetReader struct {
	r    io.Reader
	left *int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if int64(len(p)) > *b.left {
		p = p[:*b.left]
	}
	n, err := b.r.Read(p)
	*b.left -= int64(n)
	return n, err
}

// pageCount applies the rules of PageCount's comment; 0 for no count.
func (s *scanner) pageCount() int64 {
	if s.incomplete {
		return 0
	}
	var counted, maxCount int64
	for _, o := range s.objs {
		switch o.kind {
		case kindPage:
			counted++
		case kindPages:
			maxCount = max(maxCount, o.count)
		}
	}
	counted += s.extraPages

	catalog := s.root
	if o, ok := s.objs[catalog]; !ok || o.kind != kindCatalog {
		catalog = s.lastCatalog
	}
	if c, ok := s.objs[catalog]; ok && c.kind == kindCatalog {
		if root, ok := s.objs[c.pagesRef]; ok && root.kind == kindPages {
			if n, ok := s.walk(c.pagesRef); ok && n > 0 {
				return n
			}
		}
	}
	return max(counted, maxCount)
}

// walk counts the leaves of the page tree under Pages node root; ok is false
// when the tree does not resolve completely.
func (s *scanner) walk(root int64) (n int64, ok bool) {
	seen := make(map[int64]bool)
	stack := []int64{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			return 0, false // a cycle, or a node with two parents
		}
		seen[id] = true
		o, found := s.objs[id]
		switch {
		case !found:
			return 0, false
		case o.kind == kindPage:
			n++
		case o.kind == kindPages && o.kidsOK:
			stack = append(stack, o.kids...)
		default:
			return 0, false
		}
	}
	return n, true
}
