package onboarding

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"
)

// This file checks uploaded documents against their field (DESIGN §5.6):
// what type a file really is (sniffed from its first bytes, never taken from
// the browser), whether it is within the size limits and, for strict fields
// with max_pages, how many pages a PDF has.

// MIME types the validator recognises from a file's content.
const (
	mimePDF         = "application/pdf"
	mimePNG         = "image/png"
	mimeJPEG        = "image/jpeg"
	mimeHEIC        = "image/heic"
	mimeHEIF        = "image/heif"
	mimeOctetStream = "application/octet-stream"
)

// docSniffLen is how much of a file sniffDocumentType looks at. PDF readers
// accept a %PDF- header anywhere in the first 1024 bytes.
const docSniffLen = 1024

// docNoneSafeTypes are the declared types a validation "none" document may
// keep when its content is none of the sniffed types: types a browser will
// not run as a page or a script when the file is served back.
var docNoneSafeTypes = map[string]bool{
	mimePDF: true, mimePNG: true, mimeJPEG: true, mimeHEIC: true, mimeHEIF: true,
	"image/gif": true, "image/webp": true, "image/tiff": true,
	"text/plain": true, "text/csv": true,
	"application/msword": true, "application/vnd.ms-excel": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       true,
}

// docTypeAliases maps spellings operators write in a form's accept list to
// the type sniffDocumentType reports.
var docTypeAliases = map[string]string{
	"image/jpg":         mimeJPEG,
	"image/pjpeg":       mimeJPEG,
	"application/x-pdf": mimePDF,
}

// docShortNames are the names an applicant knows the sniffed types by, in
// the order messages list them.
var docShortNames = []struct{ mime, name string }{
	{mimePDF, "PDF"}, {mimePNG, "PNG"}, {mimeJPEG, "JPEG"}, {mimeHEIC, "HEIC"}, {mimeHEIF, "HEIF"},
}

// Applicant-facing rejection messages (DESIGN §5.6). The ones with verbs
// are formatted by the functions below.
const (
	docRejectEmpty      = "The file is empty. Choose the file again, or try another copy."
	docRejectType       = "This type of file cannot be accepted. Upload a PDF, or a photo as JPEG, PNG or HEIC."
	docRejectPDFUnread  = "The PDF could not be read. Save it again as a PDF and upload the new copy."
	docRejectTooLarge   = "The file is larger than %s. Upload a smaller file."
	docRejectFieldLarge = "The file is larger than %s, the limit for %s. Upload a smaller file."
	docRejectTypeHere   = "This type of file cannot be accepted here. Upload %s."
	docRejectPages      = "The document has %s; at most %d %s accepted here."
)

// documentVerdict is the outcome of checking an uploaded file against its
// document field (DESIGN §5.6).
type documentVerdict struct {
	// FileType is the MIME type to record and serve the file with.
	FileType string
	// Reason is the acceptance reason when the file is accepted:
	// ReasonNoValidatorConfigured, ReasonBaselinePassed or
	// ReasonValidationPassed.
	Reason string
	// Reject is the applicant-facing reason when the file is rejected;
	// empty when it is accepted.
	Reject string
}

// checkDocument validates a stored upload of size bytes, readable through r,
// for field f. maxUpload is the server's per-file limit (0 or less: none).
// declaredType is the Content-Type the browser sent for the part; it may be
// empty or wrong, and only a validation "none" field ever uses it.
//
// checkDocument reads the first 1024 bytes of the file, and the whole of it
// only for a PDF in a strict field with max_pages.
func checkDocument(f *Field, r io.ReaderAt, size int64, declaredType string, maxUpload int64) documentVerdict {
	head := make([]byte, min(max(size, 0), docSniffLen))
	n, _ := io.ReadFull(io.NewSectionReader(r, 0, int64(len(head))), head)
	sniffed := sniffDocumentType(head[:n])

	if f.Validation == docValidationNone {
		return documentVerdict{FileType: noneFileType(sniffed, declaredType), Reason: ReasonNoValidatorConfigured}
	}
	// "" and "baseline" are baseline; NewForm rejects any other value, so
	// anything else is treated as the stricter of the two.
	strict := f.Validation == docValidationStrict
	reject := func(msg string) documentVerdict { return documentVerdict{Reject: msg} }

	switch {
	case size <= 0 || n == 0:
		return reject(docRejectEmpty)
	case maxUpload > 0 && size > maxUpload:
		return reject(fmt.Sprintf(docRejectTooLarge, SizeText(maxUpload)))
	}
	if !strict {
		if sniffed == "" {
			return reject(docRejectType)
		}
		return documentVerdict{FileType: sniffed, Reason: ReasonBaselinePassed}
	}

	// Strict: the baseline checks, then the field's own rules. With an
	// accept list, an unrecognised file is told what this field takes
	// rather than what baseline fields take.
	if len(f.Accept) > 0 {
		if sniffed == "" || !docAccepts(f.Accept, sniffed) {
			return reject(fmt.Sprintf(docRejectTypeHere, docAcceptText(f.Accept)))
		}
	} else if sniffed == "" {
		return reject(docRejectType)
	}
	if f.MaxSize > 0 && size > f.MaxSize {
		return reject(fmt.Sprintf(docRejectFieldLarge, SizeText(f.MaxSize), f.Label))
	}
	if f.MaxPages > 0 && sniffed == mimePDF {
		pages, err := pdfPageCount(r, size)
		if err != nil {
			return reject(docRejectPDFUnread)
		}
		if pages > f.MaxPages {
			verb := "are"
			if f.MaxPages == 1 {
				verb = "is"
			}
			return reject(fmt.Sprintf(docRejectPages, docCount(pages, "page", "pages"), f.MaxPages, verb))
		}
	}
	// Images are one page, within any max_pages.
	return documentVerdict{FileType: sniffed, Reason: ReasonValidationPassed}
}

// noneFileType is the type a validation "none" document is recorded with:
// its sniffed type, else the declared type when it is a safe one, else
// application/octet-stream.
func noneFileType(sniffed, declared string) string {
	if sniffed != "" {
		return sniffed
	}
	t, _, err := mime.ParseMediaType(declared)
	if err == nil && docNoneSafeTypes[t] {
		return t
	}
	return mimeOctetStream
}

// docAccepts reports whether a strict field's accept list takes type t.
func docAccepts(accept []string, t string) bool {
	for _, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		if alias, ok := docTypeAliases[a]; ok {
			a = alias
		}
		if a == t {
			return true
		}
	}
	return false
}

// docAcceptText names what an accept list takes, for example "a PDF file" or
// "a PDF, PNG or JPEG file". It names only the types a strict field can
// accept at all (the sniffed ones); a list with none of them (a form that
// accepts nothing) is named in full.
func docAcceptText(accept []string) string {
	var names []string
	for _, s := range docShortNames {
		if docAccepts(accept, s.mime) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		for _, a := range accept {
			_, sub, _ := strings.Cut(strings.TrimSpace(a), "/")
			if name := strings.ToUpper(sub); name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return "another file"
	}
	list := names[0]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	article := "a"
	if strings.ContainsRune("AEIOU", rune(list[0])) {
		article = "an"
	}
	return article + " " + list + " file"
}

// SizeText formats a byte count for an applicant: "25 MB", "2.5 MB",
// "500 KB", "100 bytes", with 1 MB = 1 MiB. The figure is rounded down to
// one decimal, so that "larger than" stays true of every rejected file.
func SizeText(n int64) string {
	const kb, mb, gb = 1 << 10, 1 << 20, 1 << 30
	unit, name := int64(1), ""
	switch {
	case n >= gb:
		unit, name = gb, "GB"
	case n >= mb:
		unit, name = mb, "MB"
	case n >= kb:
		unit, name = kb, "KB"
	default:
		return docCount(int(n), "byte", "bytes")
	}
	whole, tenths := n/unit, n%unit*10/unit
	if tenths == 0 {
		return fmt.Sprintf("%d %s", whole, name)
	}
	return fmt.Sprintf("%d.%d %s", whole, tenths, name)
}

// docCount is "1 page" or "3 pages".
func docCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// HEIF brands (ISO/IEC 23008-12) of the ftyp box: the HEVC-coded ones are
// HEIC; mif1 and msf1 alone are the generic HEIF image and sequence brands.
var (
	heicBrands = []string{"heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"}
	heifBrands = []string{"mif1", "msf1"}
	avifBrands = []string{"avif", "avis"}
)

// sniffDocumentType returns "application/pdf", "image/png", "image/jpeg",
// "image/heic" or "image/heif" from a file's first bytes (up to 1024 are
// looked at), or "" when it is none of them.
//
// An AVIF image is a HEIF file too (major brand avif, compatible mif1) but
// an AV1-coded one that few HEIF readers decode: it is not recognised unless
// it also carries a HEIC brand.
func sniffDocumentType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return mimePNG
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return mimeJPEG
	}
	if t := sniffHEIF(head); t != "" {
		return t
	}
	if bytes.Contains(head[:min(len(head), docSniffLen)], []byte("%PDF-")) {
		return mimePDF
	}
	return ""
}

// sniffHEIF recognises an ISO-BMFF file whose first box is an ftyp box with
// a HEIC or HEIF brand.
func sniffHEIF(head []byte) string {
	if len(head) < 16 || string(head[4:8]) != "ftyp" {
		return ""
	}
	size := int64(be32(head[0:4]))
	hdr := int64(8)
	switch size {
	case 0: // the box runs to the end of the file
		size = int64(len(head))
	case 1: // a 64-bit size follows the type
		if len(head) < 24 {
			return ""
		}
		size = int64(be32(head[8:12]))<<32 | int64(be32(head[12:16]))
		hdr = 16
	}
	if size < hdr+8 || size > 4096 {
		return ""
	}
	end := min(size, int64(len(head)))
	// Major brand, minor version, then compatible brands.
	brands := []string{string(head[hdr : hdr+4])}
	for i := hdr + 8; i+4 <= end; i += 4 {
		brands = append(brands, string(head[i:i+4]))
	}
	has := func(set []string) bool {
		return slices.ContainsFunc(brands, func(b string) bool { return slices.Contains(set, b) })
	}
	switch {
	case has(heicBrands):
		return mimeHEIC
	case has(avifBrands):
		return ""
	case has(heifBrands):
		return mimeHEIF
	}
	return ""
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// pdfPageCount returns the number of pages of a PDF of size bytes readable
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
// The count, best first:
//  1. the number of leaves of the page tree walked from the catalog's root
//     Pages node, when the whole tree resolves (every kid is a known Page or
//     Pages object, no cycle);
//  2. the root Pages node's /Count, when it is at least the /Count of every
//     other Pages node (a root holds all of them);
//  3. the number of distinct page objects found;
//  4. the largest /Count of any Pages node.
//
// It returns an error when none of these finds a page.
//
// Limits: the cross-reference table is not used, so objects that an update
// deleted but left in the file are still seen (the page tree walk and the
// root /Count make this harmless when the tree is readable); object streams
// compressed with any filter other than FlateDecode (or with a predictor),
// or encrypted, are not read, so a PDF whose page tree lives only there is
// reported as unreadable; page objects without /Type are only counted
// through the tree walk. Work is bounded: at most 64 MiB are inflated (or
// read from unfiltered object streams) in total and at most twice the file plus 16 MiB of compressed data read,
// nesting is limited to 32 levels, and at most 2^20 page-tree objects and
// 2^20 kids are tracked.
func pdfPageCount(r io.ReaderAt, size int64) (int, error) {
	if size <= 0 {
		return 0, errPDFNoPages
	}
	s := &pdfScan{
		r:              r,
		size:           size,
		objs:           make(map[int64]*pdfObject),
		root:           -1,
		lastCatalog:    -1,
		inflateLeft:    pdfMaxInflate,
		compressedLeft: 2*size + 16<<20,
	}
	s.p.lex.b = newPDFFileBuf(r, size)
	s.scanFile()
	n := s.pageCount()
	if n <= 0 {
		return 0, errPDFNoPages
	}
	return int(min(n, 1<<31-1)), nil
}

var errPDFNoPages = errors.New("pdf: no page found")

// Bounds of pdfPageCount's work and memory.
const (
	pdfMaxInflate    = 64 << 20 // bytes inflated from object streams, in total
	pdfMaxDepth      = 32       // nesting of arrays and dictionaries
	pdfMaxObjects    = 1 << 20  // page-tree objects tracked
	pdfMaxKids       = 1 << 20  // kids of Pages nodes tracked, in total
	pdfMaxObjStmObjs = 1 << 17  // objects read from one object stream
	pdfWindow        = 32 << 10 // read window of the file scan
)

// pdfObject is what the scan keeps of one page-tree object.
type pdfObject struct {
	kind     uint8   // pdfPage, pdfPages or pdfCatalog
	count    int64   // Pages: /Count, -1 when absent or not a number
	kids     []int64 // Pages: object numbers of /Kids
	kidsOK   bool    // Pages: /Kids was an array and was kept whole
	pagesRef int64   // Catalog: object number of /Pages, -1 when absent
}

const (
	pdfPage uint8 = iota + 1
	pdfPages
	pdfCatalog
)

// pdfScan is the state of one pdfPageCount.
type pdfScan struct {
	r    io.ReaderAt
	size int64
	p    pdfParser // over the file

	objs        map[int64]*pdfObject
	extraPages  int64 // page objects beyond pdfMaxObjects
	kidsKept    int
	root        int64 // /Root of the last trailer, -1 when none
	lastCatalog int64

	inflateLeft    int64
	compressedLeft int64
}

// scanFile reads the file's top level: indirect objects, trailers and
// streams.
func (s *pdfScan) scanFile() {
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
			var d pdfDict
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
func (s *pdfScan) indirectObject(num int64) {
	lx := &s.p.lex
	var d pdfDict
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
func (s *pdfScan) record(num int64, d *pdfDict) {
	if d != nil && d.typ == nameXRef && d.rootRef >= 0 {
		s.root = d.rootRef // a cross-reference stream is also a trailer
	}
	var o *pdfObject
	if d != nil {
		switch d.typ {
		case namePage:
			o = &pdfObject{kind: pdfPage}
		case namePages:
			o = &pdfObject{kind: pdfPages, count: d.count, kids: d.kids, kidsOK: d.kidsOK}
			if s.kidsKept+len(d.kids) > pdfMaxKids {
				o.kids, o.kidsOK = nil, false
			}
			s.kidsKept += len(o.kids)
		case nameCatalog:
			o = &pdfObject{kind: pdfCatalog, pagesRef: d.pagesRef}
			s.lastCatalog = num
		}
	}
	if o == nil {
		delete(s.objs, num)
		return
	}
	if _, ok := s.objs[num]; !ok && len(s.objs) >= pdfMaxObjects {
		if o.kind == pdfPage {
			s.extraPages++
		}
		return
	}
	s.objs[num] = o
}

// skipStream moves the scan past the data of the stream whose "stream"
// keyword is t: by the dictionary's /Length when "endstream" follows it, else
// by searching for "endstream".
func (s *pdfScan) skipStream(t pdfToken, d *pdfDict) {
	lx := &s.p.lex
	lx.nback = 0
	start := pdfDataStart(s.r, t.end, s.size)
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

// pdfDataStart returns where the data of a stream begins: after the end of
// line that follows the "stream" keyword ending at end.
func pdfDataStart(r io.ReaderAt, end, size int64) int64 {
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
// ends at end.
func (s *pdfScan) objectStream(end int64, d *pdfDict) {
	plain := len(d.filters) == 0 && !d.filterBad
	if d.n <= 0 || d.first < 0 || !(plain || d.flateOnly()) || s.inflateLeft <= 0 || s.compressedLeft <= 0 {
		return
	}
	start := pdfDataStart(s.r, end, s.size)
	length := s.size - start
	if d.length >= 0 && d.length < length {
		length = d.length
	}
	var data io.Reader = &pdfBudgetReader{r: io.NewSectionReader(s.r, start, length), left: &s.compressedLeft}
	if !plain {
		zr, err := zlib.NewReader(data)
		if err != nil {
			return
		}
		defer zr.Close()
		data = zr
	}
	out := &io.LimitedReader{R: data, N: s.inflateLeft}
	defer func() { s.inflateLeft = out.N }()

	var p pdfParser
	p.lex.b = newPDFStreamBuf(out)
	type entry struct{ num, off int64 }
	var entries []entry
	for int64(len(entries)) < min(d.n, pdfMaxObjStmObjs) {
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
	slices.SortStableFunc(entries, func(a, b entry) int { return compareInt64(a.off, b.off) })
	for _, e := range entries {
		if e.num < 0 || e.off < 0 || !p.skipTo(d.first+e.off) {
			continue
		}
		var od pdfDict
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

// pdfBudgetReader reads from r while a shared budget lasts.
type pdfBudgetReader struct {
	r    io.Reader
	left *int64
}

func (b *pdfBudgetReader) Read(p []byte) (int, error) {
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

// pageCount applies the order of pdfPageCount's comment.
func (s *pdfScan) pageCount() int64 {
	var counted, maxCount int64
	for _, o := range s.objs {
		switch o.kind {
		case pdfPage:
			counted++
		case pdfPages:
			maxCount = max(maxCount, o.count)
		}
	}
	counted += s.extraPages

	catalog := s.root
	if o, ok := s.objs[catalog]; !ok || o.kind != pdfCatalog {
		catalog = s.lastCatalog
	}
	if c, ok := s.objs[catalog]; ok && c.kind == pdfCatalog {
		if root, ok := s.objs[c.pagesRef]; ok && root.kind == pdfPages {
			if n, ok := s.walk(c.pagesRef); ok && n > 0 {
				return n
			}
			if root.count > 0 && root.count >= maxCount {
				return root.count
			}
		}
	}
	if counted > 0 {
		return counted
	}
	return maxCount
}

// walk counts the leaves of the page tree under Pages node root; ok is false
// when the tree does not resolve completely.
func (s *pdfScan) walk(root int64) (n int64, ok bool) {
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
		case o.kind == pdfPage:
			n++
		case o.kind == pdfPages && o.kidsOK:
			stack = append(stack, o.kids...)
		default:
			return 0, false
		}
	}
	return n, true
}

// pdfDict is what the parser keeps of an object's top-level dictionary.
type pdfDict struct {
	typ       string  // /Type, when a name the scan knows
	count     int64   // /Count
	length    int64   // /Length, when a direct number
	n, first  int64   // /N and /First of an object stream
	pagesRef  int64   // /Pages of a catalog
	rootRef   int64   // /Root of a trailer
	kids      []int64 // /Kids references
	kidsOK    bool
	filters   []string // /Filter names ("" for names the scan does not know)
	filterBad bool     // /Filter was not a name or an array of names
	predictor int64    // /Predictor of /DecodeParms
	parmsBad  bool     // /DecodeParms was not a dictionary or null
}

func (d *pdfDict) reset() {
	*d = pdfDict{count: -1, length: -1, n: -1, first: -1, pagesRef: -1, rootRef: -1}
}

// flateOnly reports whether the stream is FlateDecode without a predictor.
func (d *pdfDict) flateOnly() bool {
	return !d.filterBad && len(d.filters) == 1 && d.filters[0] == nameFlateDecode && !d.parmsBad && d.predictor <= 1
}

// pdfVal is the kind of a parsed value.
type pdfVal uint8

const (
	valOther pdfVal = iota
	valInt
	valName
	valRef
	valDict
	valArray
	valNull
	valEnd // a keyword that ends an object (endobj, stream, ...) was met
)

// pdfParser parses PDF objects from a lexer.
type pdfParser struct {
	lex pdfLexer
	// last holds the payload of the last value parseValue returned: the
	// number of an integer or reference, the name of a name.
	lastInt  int64
	lastName string
}

// parseValue parses the value that starts with token t. The entries of a
// dictionary are stored in d when d is not nil.
func (p *pdfParser) parseValue(t pdfToken, depth int, d *pdfDict) pdfVal {
	switch t.kind {
	case tokInt:
		t2 := p.lex.next()
		if t2.kind == tokInt {
			t3 := p.lex.next()
			if t3.kind == tokKeyword && t3.s == kwR {
				p.lastInt = t.i
				return valRef
			}
			p.lex.unread(t3)
		}
		p.lex.unread(t2)
		p.lastInt = t.i
		return valInt
	case tokName:
		p.lastName = t.s
		return valName
	case tokDictOpen:
		if depth >= pdfMaxDepth {
			p.skipContainer()
		} else {
			p.parseDict(depth+1, d)
		}
		return valDict
	case tokArrayOpen:
		if depth >= pdfMaxDepth {
			p.skipContainer()
		} else {
			p.parseArray(depth+1, nil, nil)
		}
		return valArray
	case tokKeyword:
		switch t.s {
		case kwNull:
			return valNull
		case kwObj, kwEndobj, kwStream, kwEndstream, kwTrailer, kwXref, kwStartxref:
			p.lex.unread(t)
			return valEnd
		}
	case tokEOF:
		return valEnd
	}
	return valOther
}

// parseDict parses dictionary entries up to ">>"; d, when not nil, receives
// the entries the scan needs.
func (p *pdfParser) parseDict(depth int, d *pdfDict) {
	for {
		k := p.lex.next()
		switch k.kind {
		case tokEOF, tokDictClose:
			return
		case tokKeyword:
			if p.parseValue(k, depth, nil) == valEnd {
				return
			}
			continue
		case tokName:
		default:
			continue // junk in place of a key
		}
		t := p.lex.next()
		if t.kind == tokDictClose {
			return
		}
		if d == nil {
			if p.parseValue(t, depth, nil) == valEnd {
				return
			}
			continue
		}
		if !p.dictEntry(k.s, t, depth, d) {
			return
		}
	}
}

// dictEntry parses the value, starting with t, of key in dictionary d. It
// returns false when the dictionary ended early.
func (p *pdfParser) dictEntry(key string, t pdfToken, depth int, d *pdfDict) bool {
	switch {
	case key == nameKids && t.kind == tokArrayOpen && depth < pdfMaxDepth:
		d.kids = d.kids[:0]
		d.kidsOK = p.parseArray(depth+1, &d.kids, nil)
		return true
	case key == nameFilter && t.kind == tokArrayOpen && depth < pdfMaxDepth:
		d.filters = d.filters[:0]
		d.filterBad = !p.parseArray(depth+1, nil, &d.filters)
		return true
	case key == nameDecodeParms && t.kind == tokDictOpen && depth < pdfMaxDepth:
		var parms pdfDict
		parms.reset()
		p.parseDict(depth+1, &parms)
		d.predictor, d.parmsBad = parms.predictor, false
		return true
	}
	v := p.parseValue(t, depth, nil)
	switch key {
	case nameType:
		if v == valName {
			d.typ = p.lastName
		}
	case nameCount:
		d.count = -1
		if v == valInt {
			d.count = p.lastInt
		}
	case nameLength:
		d.length = -1
		if v == valInt {
			d.length = p.lastInt
		}
	case nameN:
		if v == valInt {
			d.n = p.lastInt
		}
	case nameFirst:
		if v == valInt {
			d.first = p.lastInt
		}
	case namePages:
		if v == valRef {
			d.pagesRef = p.lastInt
		}
	case nameRoot:
		if v == valRef {
			d.rootRef = p.lastInt
		}
	case namePredictor:
		if v == valInt {
			d.predictor = p.lastInt
		}
	case nameFilter:
		d.filters = d.filters[:0]
		d.filterBad = v != valName
		if v == valName {
			d.filters = append(d.filters, p.lastName)
		}
	case nameDecodeParms:
		d.parmsBad = v != valNull
	case nameKids:
		d.kids, d.kidsOK = nil, false
	}
	return v != valEnd
}

// parseArray parses array elements up to "]". When refs is not nil it
// collects the object numbers of references, when names is not nil the
// names; it returns false when an element of another kind was met, or too
// many were collected.
func (p *pdfParser) parseArray(depth int, refs *[]int64, names *[]string) bool {
	ok := true
	for {
		t := p.lex.next()
		switch t.kind {
		case tokEOF:
			return false
		case tokArrayClose:
			return ok
		case tokDictClose:
			p.lex.unread(t) // let the enclosing dictionary end
			return false
		}
		v := p.parseValue(t, depth, nil)
		switch {
		case v == valEnd:
			return false
		case refs != nil && v == valRef && len(*refs) < pdfMaxKids:
			*refs = append(*refs, p.lastInt)
		case names != nil && v == valName && len(*names) < 8:
			*names = append(*names, p.lastName)
		case refs != nil || names != nil:
			ok = false
		}
	}
}

// skipContainer skips tokens up to the end of the array or dictionary just
// opened, without recursion.
func (p *pdfParser) skipContainer() {
	for level := 1; level > 0; {
		t := p.lex.next()
		switch t.kind {
		case tokEOF:
			return
		case tokDictOpen, tokArrayOpen:
			level++
		case tokDictClose, tokArrayClose:
			level--
		case tokKeyword:
			switch t.s {
			case kwObj, kwEndobj, kwStream, kwEndstream, kwTrailer, kwXref, kwStartxref:
				p.lex.unread(t)
				return
			}
		}
	}
}

// skipTo moves an object stream's parser to offset target of the decoded
// stream, keeping any looked-ahead token that starts there or later. It
// returns false when the parser is already past target.
func (p *pdfParser) skipTo(target int64) bool {
	lx := &p.lex
	for lx.nback > 0 && lx.back[lx.nback-1].pos < target {
		lx.nback--
	}
	if lx.nback > 0 {
		return true
	}
	if pos := lx.b.pos(); pos <= target {
		return lx.b.discard(target - pos)
	}
	return false
}

// Names and keywords the scan acts on. The lexer returns these constants
// (so comparisons are of interned strings and lexing allocates nothing) and
// "" for any other name or keyword.
const (
	nameType        = "Type"
	namePage        = "Page"
	namePages       = "Pages"
	nameCatalog     = "Catalog"
	nameObjStm      = "ObjStm"
	nameXRef        = "XRef"
	nameCount       = "Count"
	nameKids        = "Kids"
	nameLength      = "Length"
	nameN           = "N"
	nameFirst       = "First"
	nameRoot        = "Root"
	nameFilter      = "Filter"
	nameFlateDecode = "FlateDecode"
	nameDecodeParms = "DecodeParms"
	namePredictor   = "Predictor"

	kwObj       = "obj"
	kwEndobj    = "endobj"
	kwStream    = "stream"
	kwEndstream = "endstream"
	kwR         = "R"
	kwTrailer   = "trailer"
	kwXref      = "xref"
	kwStartxref = "startxref"
	kwNull      = "null"
)

func pdfInternName(b []byte) string {
	switch string(b) {
	case nameType:
		return nameType
	case namePage:
		return namePage
	case namePages:
		return namePages
	case nameCatalog:
		return nameCatalog
	case nameObjStm:
		return nameObjStm
	case nameXRef:
		return nameXRef
	case nameCount:
		return nameCount
	case nameKids:
		return nameKids
	case nameLength:
		return nameLength
	case nameN:
		return nameN
	case nameFirst:
		return nameFirst
	case nameRoot:
		return nameRoot
	case nameFilter:
		return nameFilter
	case nameFlateDecode:
		return nameFlateDecode
	case nameDecodeParms:
		return nameDecodeParms
	case namePredictor:
		return namePredictor
	}
	return ""
}

func pdfInternKeyword(b []byte) string {
	switch string(b) {
	case kwObj:
		return kwObj
	case kwEndobj:
		return kwEndobj
	case kwStream:
		return kwStream
	case kwEndstream:
		return kwEndstream
	case kwR:
		return kwR
	case kwTrailer:
		return kwTrailer
	case kwXref:
		return kwXref
	case kwStartxref:
		return kwStartxref
	case kwNull:
		return kwNull
	}
	return ""
}

// pdfTokKind is the kind of a lexical token.
type pdfTokKind uint8

const (
	tokEOF pdfTokKind = iota
	tokInt
	tokReal
	tokName
	tokKeyword
	tokString
	tokDictOpen
	tokDictClose
	tokArrayOpen
	tokArrayClose
	tokOther
)

// pdfToken is one lexical token; pos and end are its offsets in the input.
type pdfToken struct {
	kind     pdfTokKind
	s        string // interned name or keyword
	i        int64  // integer value
	pos, end int64
}

// pdfLexer splits PDF bytes into tokens (ISO 32000-1 §7.2), with room to
// push back the two tokens of look-ahead that "N G R" needs.
type pdfLexer struct {
	b       *pdfBuf
	back    [4]pdfToken
	nback   int
	scratch [64]byte
}

func (l *pdfLexer) next() pdfToken {
	if l.nback > 0 {
		l.nback--
		return l.back[l.nback]
	}
	return l.lex()
}

func (l *pdfLexer) unread(t pdfToken) {
	if l.nback < len(l.back) {
		l.back[l.nback] = t
		l.nback++
	}
}

func pdfIsSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func pdfIsDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func pdfIsRegular(c byte) bool { return !pdfIsSpace(c) && !pdfIsDelim(c) }

func pdfHexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (l *pdfLexer) lex() pdfToken {
	b := l.b
	for {
		pos := b.pos()
		c, ok := b.readByte()
		if !ok {
			return pdfToken{kind: tokEOF, pos: pos, end: pos}
		}
		t := pdfToken{pos: pos}
		switch {
		case pdfIsSpace(c):
			continue
		case c == '%':
			b.skipLine()
			continue
		case c == '/':
			t.kind, t.s = tokName, l.name()
		case c == '(':
			b.skipLiteralString()
			t.kind = tokString
		case c == '<':
			if n, ok := b.peekByte(); ok && n == '<' {
				b.readByte()
				t.kind = tokDictOpen
			} else {
				b.skipPast([]byte(">"))
				t.kind = tokString
			}
		case c == '>':
			t.kind = tokOther
			if n, ok := b.peekByte(); ok && n == '>' {
				b.readByte()
				t.kind = tokDictClose
			}
		case c == '[':
			t.kind = tokArrayOpen
		case c == ']':
			t.kind = tokArrayClose
		case pdfIsDelim(c): // ) { }
			t.kind = tokOther
		default:
			l.regular(c, &t)
		}
		t.end = b.pos()
		return t
	}
}

// name reads the rest of a name after "/", decoding #xx escapes.
func (l *pdfLexer) name() string {
	b := l.b
	n, long := 0, false
	for {
		c, ok := b.peekByte()
		if !ok || !pdfIsRegular(c) {
			break
		}
		b.readByte()
		if c == '#' {
			if h, ok := b.peekByte(); ok {
				if hi, ok := pdfHexVal(h); ok {
					b.readByte()
					if l2, ok := b.peekByte(); ok {
						if lo, ok := pdfHexVal(l2); ok {
							b.readByte()
							c = hi<<4 | lo
						}
					}
				}
			}
		}
		if n < len(l.scratch) {
			l.scratch[n] = c
			n++
		} else {
			long = true
		}
	}
	if long {
		return ""
	}
	return pdfInternName(l.scratch[:n])
}

// regular reads a number or keyword that starts with c.
func (l *pdfLexer) regular(c byte, t *pdfToken) {
	b := l.b
	n, long := 0, false
	for {
		if n < len(l.scratch) {
			l.scratch[n] = c
			n++
		} else {
			long = true
		}
		next, ok := b.peekByte()
		if !ok || !pdfIsRegular(next) {
			break
		}
		b.readByte()
		c = next
	}
	word := l.scratch[:n]
	if long {
		t.kind = tokKeyword
		return
	}
	digits := word
	if digits[0] == '+' || digits[0] == '-' {
		digits = digits[1:]
	}
	isInt := len(digits) > 0 && len(digits) <= 18
	isNum := len(digits) > 0
	dots := 0
	for _, d := range digits {
		switch {
		case d == '.':
			isInt = false
			dots++
		case d < '0' || d > '9':
			isInt, isNum = false, false
		}
	}
	switch {
	case isInt:
		v, _ := strconv.ParseInt(string(word), 10, 64)
		t.kind, t.i = tokInt, v
	case isNum && dots <= 1:
		t.kind = tokReal
	default:
		t.kind, t.s = tokKeyword, pdfInternKeyword(word)
	}
}

// pdfBuf reads its input through a window: from an io.ReaderAt (a file,
// seekable, never beyond its size) or from an io.Reader (a decoded stream,
// forward only).
type pdfBuf struct {
	ra  io.ReaderAt
	end int64 // ra: the size
	rd  io.Reader
	buf []byte
	off int64 // offset of buf[0] in the input
	i   int   // position in buf
	eof bool  // rd: no more input
}

func newPDFFileBuf(r io.ReaderAt, size int64) *pdfBuf {
	return &pdfBuf{ra: r, end: size, buf: make([]byte, 0, pdfWindow)}
}

func newPDFStreamBuf(r io.Reader) *pdfBuf {
	return &pdfBuf{rd: r, buf: make([]byte, 0, 4<<10)}
}

func (b *pdfBuf) pos() int64 { return b.off + int64(b.i) }

// fill loads the input that follows the window; it returns false at the end.
func (b *pdfBuf) fill() bool {
	next := b.off + int64(len(b.buf))
	b.off, b.i, b.buf = next, 0, b.buf[:0]
	if b.ra != nil {
		if next >= b.end {
			return false
		}
		buf := b.buf[:min(int64(cap(b.buf)), b.end-next)]
		n, _ := b.ra.ReadAt(buf, next)
		if n < len(buf) {
			b.end = next + int64(n) // a short file: stop where it stops
		}
		b.buf = buf[:n]
		return n > 0
	}
	for !b.eof {
		n, err := b.rd.Read(b.buf[:cap(b.buf)])
		if err != nil {
			b.eof = true
		}
		if n > 0 {
			b.buf = b.buf[:n]
			return true
		}
	}
	return false
}

func (b *pdfBuf) readByte() (byte, bool) {
	if b.i >= len(b.buf) && !b.fill() {
		return 0, false
	}
	c := b.buf[b.i]
	b.i++
	return c, true
}

func (b *pdfBuf) peekByte() (byte, bool) {
	if b.i >= len(b.buf) && !b.fill() {
		return 0, false
	}
	return b.buf[b.i], true
}

// seek moves a file window to offset p.
func (b *pdfBuf) seek(p int64) {
	if p >= b.off && p <= b.off+int64(len(b.buf)) {
		b.i = int(p - b.off)
		return
	}
	b.off, b.i, b.buf = min(max(p, 0), b.end), 0, b.buf[:0]
}

// discard skips n bytes forward; it returns false at the end of the input.
func (b *pdfBuf) discard(n int64) bool {
	if b.ra != nil {
		p := b.pos() + n
		b.seek(p)
		return p <= b.end
	}
	for n > 0 {
		if b.i >= len(b.buf) && !b.fill() {
			return false
		}
		k := min(n, int64(len(b.buf)-b.i))
		b.i += int(k)
		n -= k
	}
	return true
}

// skipPast moves past the next occurrence of pat, or to the end.
func (b *pdfBuf) skipPast(pat []byte) {
	for {
		if b.i >= len(b.buf) && !b.fill() {
			return
		}
		if j := bytes.Index(b.buf[b.i:], pat); j >= 0 {
			b.i += j + len(pat)
			return
		}
		// Keep the last len(pat)-1 bytes: pat may straddle two windows.
		keep := min(len(pat)-1, len(b.buf)-b.i)
		if b.ra != nil {
			next := b.off + int64(len(b.buf)) - int64(keep)
			if !b.fillAt(next) {
				return
			}
			continue
		}
		b.i = len(b.buf) // a stream: the bytes kept would be lost anyway
	}
}

// fillAt loads a file window at offset p (which must be past the start of
// the current window, so that scanning always moves forward).
func (b *pdfBuf) fillAt(p int64) bool {
	if len(b.buf) > 0 && p <= b.off {
		p = b.off + int64(len(b.buf)) // no progress possible: drop the overlap
	}
	b.off, b.i, b.buf = p, 0, b.buf[:0]
	return b.fill()
}

// skipLine moves past the end of the current line.
func (b *pdfBuf) skipLine() {
	for {
		c, ok := b.peekByte()
		if !ok || c == '\n' || c == '\r' {
			return
		}
		b.i++
	}
}

// skipLiteralString moves past the end of a (string), whose "(" was read.
func (b *pdfBuf) skipLiteralString() {
	for depth := 1; depth > 0; {
		c, ok := b.readByte()
		switch {
		case !ok:
			return
		case c == '\\':
			b.readByte()
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
	}
}
