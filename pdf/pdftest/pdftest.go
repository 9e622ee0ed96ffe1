// Package pdftest writes small PDF files for tests, so that every byte a
// test depends on is visible in its source (the sandbox's sample document,
// onboarding/sample.pdf, is held to Build's output too): classic files with a
// cross-reference table, files in the PDF 1.5 shape with an object stream
// and a cross-reference stream, and incremental updates. Its ReadRecorder
// is a file that checks how a reader of such files reads it.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// Build writes a classic PDF: objs[i] is object i+1 (object 1 is the
// root), then a cross-reference table and a trailer.
func Build(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// AppendUpdate appends an incremental update to a PDF written by Build
// that replaces or adds the objects of objs (by object number).
func AppendUpdate(base []byte, size int, objs map[int]string) []byte {
	b := bytes.NewBuffer(bytes.Clone(base))
	i := bytes.LastIndex(base, []byte("startxref\n"))
	var prev int
	fmt.Sscanf(string(base[i+len("startxref\n"):]), "%d", &prev)
	offs := map[int]int{}
	for num := 1; num < size; num++ {
		if o, ok := objs[num]; ok {
			offs[num] = b.Len()
			fmt.Fprintf(b, "%d 0 obj\n%s\nendobj\n", num, o)
		}
	}
	xref := b.Len()
	b.WriteString("xref\n")
	for num := 1; num < size; num++ {
		if off, ok := offs[num]; ok {
			fmt.Fprintf(b, "%d 1\n%010d 00000 n \n", num, off)
		}
	}
	fmt.Fprintf(b, "trailer\n<< /Size %d /Root 1 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n", size, prev, xref)
	return b.Bytes()
}

// StreamObject is the text of a stream object: dict (without its << >>)
// with a /Length entry added, then data.
func StreamObject(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// Pages is a classic PDF of n pages, each with a content stream of the
// page's text followed by pad bytes of noise.
func Pages(n, pad int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	for i := range n {
		page := len(objs) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", page+1))
		content := fmt.Appendf(nil, "BT /F1 12 Tf 72 720 Td (Page %d) Tj ET\n%%", i+1)
		for range pad {
			content = append(content, byte(rng.Uint32()))
		}
		objs = append(objs, StreamObject("", content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return Build(objs...)
}

func zlibBytes(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// ObjStm is a PDF 1.5 file in the shape most writers produce: the
// catalog, the page tree and n pages in a FlateDecode object stream, a
// FlateDecode cross-reference stream and no trailer dictionary. A non-nil
// image is added as an uncompressed stream object in the clear.
func ObjStm(n int, image []byte) []byte {
	inner := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for range n {
		kids = append(kids, fmt.Sprintf("%d 0 R", len(inner)+1))
		inner = append(inner, "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>")
	}
	inner[1] = fmt.Sprintf("<</Type/Pages/Count %d/Kids[%s]>>", n, strings.Join(kids, " "))
	var header, body bytes.Buffer
	for i, o := range inner {
		fmt.Fprintf(&header, "%d %d ", i+1, body.Len())
		body.WriteString(o)
		body.WriteString("\n")
	}
	stm, num := len(inner)+1, len(inner)+2
	z := zlibBytes(append(header.Bytes(), body.Bytes()...))

	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	type row struct{ typ, f2, f3 int }
	rows := []row{{0, 0, 65535}}
	for i := range inner {
		rows = append(rows, row{2, stm, i})
	}
	rows = append(rows, row{1, b.Len(), 0})
	fmt.Fprintf(&b, "%d 0 obj\n<</Type/ObjStm/N %d/First %d/Filter/FlateDecode/Length %d>>\nstream\n", stm, len(inner), header.Len(), len(z))
	b.Write(z)
	b.WriteString("\nendstream\nendobj\n")
	if image != nil {
		num++
		rows = append(rows, row{1, b.Len(), 0})
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", stm+1, StreamObject("/Type /XObject /Subtype /Image /Width 1 /Height 1", image))
	}
	rows = append(rows, row{1, b.Len(), 0})
	var xr []byte
	for _, r := range rows {
		xr = append(xr, byte(r.typ), byte(r.f2>>24), byte(r.f2>>16), byte(r.f2>>8), byte(r.f2), byte(r.f3>>8), byte(r.f3))
	}
	xz := zlibBytes(xr)
	xref := b.Len()
	fmt.Fprintf(&b, "%d 0 obj\n<</Type/XRef/Size %d/W[1 4 2]/Root 1 0 R/Filter/FlateDecode/Length %d>>\nstream\n", num, num+1, len(xz))
	b.Write(xz)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// PaddedObjStm is a classic PDF whose catalog and root Pages node are in
// the clear, the node claiming /Count count, and whose n pages (the node's
// kids) are in a FlateDecode object stream after pad bytes of padding
// (NULs, white space to a PDF reader, which compress to almost nothing):
// a reader that stops inflating before the pages never sees them.
func PaddedObjStm(n, pad, count int) []byte {
	var kids []string
	var header bytes.Buffer
	for i := range n {
		kids = append(kids, fmt.Sprintf("%d 0 R", i+4))
		fmt.Fprintf(&header, "%d %d ", i+4, pad+i*len(objStmPage))
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(header.Bytes())
	zeros := make([]byte, 1<<20)
	for left := pad; left > 0; left -= len(zeros) {
		w.Write(zeros[:min(left, len(zeros))])
	}
	for range n {
		w.Write([]byte(objStmPage))
	}
	w.Close()
	return Build(
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), count),
		fmt.Sprintf("<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", n, header.Len(), z.Len(), z.Bytes()),
	)
}

// objStmPage is a page object of PaddedObjStm's object stream.
const objStmPage = "<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>\n"

// ReadRecorder is a file that records how far and how much it was read, and
// fails the test on a read outside it. It is safe for concurrent use.
type ReadRecorder struct {
	t    testing.TB
	data []byte

	mu    sync.Mutex
	end   int64 // the furthest byte read, plus one
	bytes int64 // bytes read in all
}

// NewReadRecorder returns a ReadRecorder of data that reports to t.
func NewReadRecorder(t testing.TB, data []byte) *ReadRecorder {
	return &ReadRecorder{t: t, data: data}
}

// ReadAt implements io.ReaderAt.
func (r *ReadRecorder) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(r.data)) {
		r.t.Errorf("ReadAt(len %d, off %d) outside a file of %d bytes", len(p), off, len(r.data))
	}
	if off >= int64(len(r.data)) || off < 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	r.mu.Lock()
	r.end = max(r.end, off+int64(n))
	r.bytes += int64(n)
	r.mu.Unlock()
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// End is the offset just past the furthest byte read so far.
func (r *ReadRecorder) End() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}

// BytesRead is the number of bytes read so far, counting a byte read twice
// twice.
func (r *ReadRecorder) BytesRead() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}
