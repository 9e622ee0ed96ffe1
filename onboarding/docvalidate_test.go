package onboarding

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Test files, built here so that every byte a test depends on is visible.

// buildPDF writes a classic PDF: objs[i] is object i+1 (object 1 is the
// root), then a cross-reference table and a trailer.
func buildPDF(objs ...string) []byte {
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

// appendUpdate appends an incremental update to a PDF written by buildPDF
// that replaces or adds the objects of objs (by object number).
func appendUpdate(base []byte, size int, objs map[int]string) []byte {
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

func pdfStreamObject(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// pagesPDF is a classic PDF of n pages, each with a content stream of the
// page's text followed by pad bytes of noise.
func pagesPDF(n, pad int) []byte {
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
		objs = append(objs, pdfStreamObject("", content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return buildPDF(objs...)
}

func zlibBytes(data []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// objStmPDF is a PDF 1.5 file in the shape most writers produce: the
// catalog, the page tree and n pages in a FlateDecode object stream, a
// FlateDecode cross-reference stream and no trailer dictionary. A non-nil
// image is added as an uncompressed stream object in the clear.
func objStmPDF(n int, image []byte) []byte {
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
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", stm+1, pdfStreamObject("/Type /XObject /Subtype /Image /Width 1 /Height 1", image))
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

var (
	pdfOnePage   = pagesPDF(1, 0)
	pdfThreePage = pagesPDF(3, 0)
	pdfObjStm    = objStmPDF(4, nil)

	filePNG  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	fileJPEG = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9")
	fileHTML = []byte("<!DOCTYPE html>\n<html><body><script>alert(1)</script></body></html>\n")
	fileGIF  = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
)

// ftyp is an ISO-BMFF file that starts with an ftyp box of the given major
// and compatible brands.
func ftyp(major string, compatible ...string) []byte {
	size := 16 + 4*len(compatible)
	b := []byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}
	b = append(b, "ftyp"+major+"\x00\x00\x00\x00"+strings.Join(compatible, "")...)
	return append(b, "\x00\x00\x00\x08free"...)
}

func TestSniffDocumentType(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"pdf", pdfOnePage, "application/pdf"},
		{"pdf after junk", append(bytes.Repeat([]byte("x"), 1000), "%PDF-1.4\n"...), "application/pdf"},
		{"pdf header past 1024 bytes", append(bytes.Repeat([]byte("x"), 1020), "%PDF-1.4\n"...), ""},
		{"png", filePNG, "image/png"},
		{"jpeg", fileJPEG, "image/jpeg"},
		{"heic major", ftyp("heic", "mif1", "heic"), "image/heic"},
		{"heix", ftyp("heix", "mif1"), "image/heic"},
		{"hevc sequence", ftyp("hevc", "msf1"), "image/heic"},
		{"mif1 with heic compatible", ftyp("mif1", "mif1", "heic"), "image/heic"},
		{"heim", ftyp("mif1", "heim"), "image/heic"},
		{"hevx", ftyp("msf1", "hevx"), "image/heic"},
		{"mif1 only", ftyp("mif1", "mif1", "miaf"), "image/heif"},
		{"msf1", ftyp("msf1", "iso8"), "image/heif"},
		{"avif", ftyp("avif", "mif1", "miaf", "MA1B"), ""},
		{"mp4", ftyp("isom", "isom", "iso2", "mp41"), ""},
		{"ftyp box too short", []byte("\x00\x00\x00\x0cftypheic"), ""},
		{"html", fileHTML, ""},
		{"gif", fileGIF, ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		if got := sniffDocumentType(tt.head); got != tt.want {
			t.Errorf("%s: sniffDocumentType = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// bigFile is a file of size bytes: head, then zeros; it does not hold the
// zeros.
type bigFile struct {
	head []byte
	size int64
}

func (f bigFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := copy(p, f.head[min(off, int64(len(f.head))):])
	clear(p[n:])
	if end := off + int64(len(p)); end > f.size {
		return int(f.size - off), io.EOF
	}
	return len(p), nil
}

func TestCheckDocument(t *testing.T) {
	const mb = 1 << 20
	none := &Field{ID: "doc", Label: "Bank statement", Type: TypeDocument, Validation: "none"}
	baseline := &Field{ID: "doc", Label: "Bank statement", Type: TypeDocument, Validation: "baseline"}
	byDefault := &Field{ID: "doc", Label: "Bank statement", Type: TypeDocument}
	strict := func(accept []string, maxSize int64, maxPages int) *Field {
		return &Field{ID: "doc", Label: "Proof of address", Type: TypeDocument, Validation: "strict",
			Accept: accept, MaxSize: maxSize, MaxPages: maxPages}
	}
	pdfOnly := []string{"application/pdf"}

	const (
		empty    = "The file is empty. Choose the file again, or try another copy."
		tooLarge = "The file is larger than 25 MB. Upload a smaller file."
		badType  = "This type of file cannot be accepted. Upload a PDF, or a photo as JPEG, PNG or HEIC."
		unread   = "The PDF could not be read. Save it again as a PDF and upload the new copy."
	)
	ok := func(typ, reason string) documentVerdict { return documentVerdict{FileType: typ, Reason: reason} }
	rejected := func(msg string) documentVerdict { return documentVerdict{Reject: msg} }

	tests := []struct {
		name     string
		field    *Field
		file     io.ReaderAt
		size     int64 // len of the file when 0 and file is a *bytes.Reader
		declared string
		want     documentVerdict
	}{
		// validation "none": always accepted; the type is sniffed, or a
		// safe declared one, or application/octet-stream.
		{name: "none pdf", field: none, file: bytes.NewReader(pdfOnePage), declared: "text/html",
			want: ok("application/pdf", ReasonNoValidatorConfigured)},
		{name: "none heic", field: none, file: bytes.NewReader(ftyp("heic", "mif1")),
			want: ok("image/heic", ReasonNoValidatorConfigured)},
		{name: "none html declared html", field: none, file: bytes.NewReader(fileHTML), declared: "text/html",
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none svg declared svg", field: none, file: bytes.NewReader([]byte("<svg/>")), declared: "image/svg+xml",
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none xhtml declared", field: none, file: bytes.NewReader(fileHTML), declared: "application/xhtml+xml",
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none gif declared gif", field: none, file: bytes.NewReader(fileGIF), declared: "image/gif",
			want: ok("image/gif", ReasonNoValidatorConfigured)},
		{name: "none text with charset", field: none, file: bytes.NewReader([]byte("hello\n")), declared: "Text/Plain; charset=utf-8",
			want: ok("text/plain", ReasonNoValidatorConfigured)},
		{name: "none docx", field: none, file: bytes.NewReader([]byte("PK\x03\x04")),
			declared: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			want:     ok("application/vnd.openxmlformats-officedocument.wordprocessingml.document", ReasonNoValidatorConfigured)},
		{name: "none nothing declared", field: none, file: bytes.NewReader([]byte("PK\x03\x04")),
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none garbage declared", field: none, file: bytes.NewReader([]byte("x")), declared: "not a type",
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none empty", field: none, file: bytes.NewReader(nil),
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none over the upload limit", field: none, file: bigFile{pdfOnePage, 25*mb + 1},
			want: ok("application/pdf", ReasonNoValidatorConfigured)},

		// baseline, and the default ("").
		{name: "baseline pdf", field: baseline, file: bytes.NewReader(pdfThreePage),
			want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "default pdf", field: byDefault, file: bytes.NewReader(pdfOnePage),
			want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "baseline png declared jpeg", field: baseline, file: bytes.NewReader(filePNG), declared: "image/jpeg",
			want: ok("image/png", ReasonBaselinePassed)},
		{name: "baseline jpeg", field: baseline, file: bytes.NewReader(fileJPEG),
			want: ok("image/jpeg", ReasonBaselinePassed)},
		{name: "baseline heic", field: baseline, file: bytes.NewReader(ftyp("heic", "mif1", "heic")),
			want: ok("image/heic", ReasonBaselinePassed)},
		{name: "baseline heif", field: baseline, file: bytes.NewReader(ftyp("mif1", "mif1")),
			want: ok("image/heif", ReasonBaselinePassed)},
		{name: "baseline pdf at the upload limit", field: baseline, file: bigFile{pdfOnePage, 25 * mb},
			want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "baseline empty", field: baseline, file: bytes.NewReader(nil), declared: "application/pdf",
			want: rejected(empty)},
		{name: "default empty", field: byDefault, file: bytes.NewReader(nil), want: rejected(empty)},
		{name: "baseline over the upload limit", field: baseline, file: bigFile{pdfOnePage, 25*mb + 1},
			want: rejected(tooLarge)},
		{name: "baseline html declared pdf", field: baseline, file: bytes.NewReader(fileHTML), declared: "application/pdf",
			want: rejected(badType)},
		{name: "default html declared pdf", field: byDefault, file: bytes.NewReader(fileHTML), declared: "application/pdf",
			want: rejected(badType)},
		{name: "baseline gif declared gif", field: baseline, file: bytes.NewReader(fileGIF), declared: "image/gif",
			want: rejected(badType)},
		{name: "baseline avif", field: baseline, file: bytes.NewReader(ftyp("avif", "mif1", "miaf")),
			want: rejected(badType)},

		// strict.
		{name: "strict pdf passes", field: strict(pdfOnly, 2*mb, 3), file: bytes.NewReader(pdfThreePage),
			want: ok("application/pdf", ReasonValidationPassed)},
		{name: "strict without rules", field: strict(nil, 0, 0), file: bytes.NewReader(fileJPEG),
			want: ok("image/jpeg", ReasonValidationPassed)},
		{name: "strict image is one page", field: strict(nil, 0, 1), file: bytes.NewReader(filePNG),
			want: ok("image/png", ReasonValidationPassed)},
		{name: "strict accept alias", field: strict([]string{"image/jpg"}, 0, 0), file: bytes.NewReader(fileJPEG),
			want: ok("image/jpeg", ReasonValidationPassed)},
		{name: "strict object stream pdf passes", field: strict(nil, 0, 4), file: bytes.NewReader(pdfObjStm),
			want: ok("application/pdf", ReasonValidationPassed)},
		{name: "strict empty", field: strict(pdfOnly, 0, 1), file: bytes.NewReader(nil), want: rejected(empty)},
		{name: "strict over the upload limit", field: strict(pdfOnly, 30*mb, 0), file: bigFile{pdfOnePage, 25*mb + 1},
			want: rejected(tooLarge)},
		{name: "strict html declared pdf, no accept list", field: strict(nil, 0, 0), file: bytes.NewReader(fileHTML),
			declared: "application/pdf", want: rejected(badType)},
		{name: "strict accept one type", field: strict(pdfOnly, 0, 0), file: bytes.NewReader(filePNG),
			want: rejected("This type of file cannot be accepted here. Upload a PDF file.")},
		{name: "strict accept two types", field: strict([]string{"image/png", "application/pdf"}, 0, 0),
			file: bytes.NewReader(fileJPEG),
			want: rejected("This type of file cannot be accepted here. Upload a PDF or PNG file.")},
		{name: "strict accept three types", field: strict([]string{"image/jpeg", "image/heic", "application/pdf"}, 0, 0),
			file: bytes.NewReader(filePNG),
			want: rejected("This type of file cannot be accepted here. Upload a PDF, JPEG or HEIC file.")},
		{name: "strict accept names only types it can take", field: strict([]string{"image/gif", "image/png"}, 0, 0),
			file: bytes.NewReader(fileGIF),
			want: rejected("This type of file cannot be accepted here. Upload a PNG file.")},
		{name: "strict accept of types it cannot take", field: strict([]string{"image/gif", "image/webp"}, 0, 0),
			file: bytes.NewReader(fileGIF),
			want: rejected("This type of file cannot be accepted here. Upload a GIF or WEBP file.")},
		{name: "strict html declared pdf, accept list", field: strict(pdfOnly, 0, 0), file: bytes.NewReader(fileHTML),
			declared: "application/pdf",
			want:     rejected("This type of file cannot be accepted here. Upload a PDF file.")},
		{name: "strict heif is not heic", field: strict([]string{"image/heic"}, 0, 0), file: bytes.NewReader(ftyp("mif1")),
			want: rejected("This type of file cannot be accepted here. Upload a HEIC file.")},
		{name: "strict max size MB", field: strict(nil, 2*mb+mb/2, 0), file: bigFile{fileJPEG, 3 * mb},
			want: rejected("The file is larger than 2.5 MB, the limit for Proof of address. Upload a smaller file.")},
		{name: "strict max size KB", field: strict(nil, 500<<10, 0), file: bigFile{pdfOnePage, 500<<10 + 1},
			want: rejected("The file is larger than 500 KB, the limit for Proof of address. Upload a smaller file.")},
		{name: "strict at max size", field: strict(nil, 500<<10, 0), file: bigFile{pdfOnePage, 500 << 10},
			want: ok("application/pdf", ReasonValidationPassed)},
		{name: "strict too many pages", field: strict(nil, 0, 2), file: bytes.NewReader(pdfThreePage),
			want: rejected("The document has 3 pages; at most 2 are accepted here.")},
		{name: "strict one page only", field: strict(nil, 0, 1), file: bytes.NewReader(pdfThreePage),
			want: rejected("The document has 3 pages; at most 1 is accepted here.")},
		{name: "strict object stream too many pages", field: strict(pdfOnly, 0, 3), file: bytes.NewReader(pdfObjStm),
			want: rejected("The document has 4 pages; at most 3 are accepted here.")},
		{name: "strict unreadable pdf", field: strict(nil, 0, 5), file: bytes.NewReader([]byte("%PDF-1.7\n%%EOF\n")),
			want: rejected(unread)},
		{name: "strict unreadable pdf, no page limit", field: strict(nil, 0, 0), file: bytes.NewReader([]byte("%PDF-1.7\n%%EOF\n")),
			want: ok("application/pdf", ReasonValidationPassed)},
	}
	for _, tt := range tests {
		size := tt.size
		switch f := tt.file.(type) {
		case *bytes.Reader:
			size = f.Size()
		case bigFile:
			size = f.size
		}
		got := checkDocument(tt.field, tt.file, size, tt.declared, DefaultMaxUploadBytes)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: checkDocument mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// readRecorder is a file that records how far it was read and fails the
// test on a read outside it.
type readRecorder struct {
	t    testing.TB
	data []byte

	mu    sync.Mutex
	end   int64 // the furthest byte read, plus one
	bytes int64 // bytes read in all
}

func (r *readRecorder) ReadAt(p []byte, off int64) (int, error) {
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

func TestCheckDocumentReadsOnlyWhatItNeeds(t *testing.T) {
	pdf := pagesPDF(5, 100<<10)
	tests := []struct {
		name    string
		field   *Field
		wantEnd int64
	}{
		{"none", &Field{Validation: "none"}, 1024},
		{"baseline", &Field{}, 1024},
		{"strict without max_pages", &Field{Validation: "strict", Accept: []string{"application/pdf"}, MaxSize: 1 << 20}, 1024},
		{"strict with max_pages", &Field{Validation: "strict", MaxPages: 5}, int64(len(pdf))},
	}
	for _, tt := range tests {
		r := &readRecorder{t: t, data: pdf}
		v := checkDocument(tt.field, r, int64(len(pdf)), "", DefaultMaxUploadBytes)
		if v.Reject != "" {
			t.Errorf("%s: rejected: %s", tt.name, v.Reject)
		}
		if r.end != tt.wantEnd {
			t.Errorf("%s: read up to byte %d, want %d", tt.name, r.end, tt.wantEnd)
		}
		// Stream data is skipped by /Length: the scan reads each byte at
		// most about once.
		if r.bytes > 2*int64(len(pdf)) {
			t.Errorf("%s: read %d bytes of a %d-byte file", tt.name, r.bytes, len(pdf))
		}
	}
}

func TestDocSizeText(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{25 << 20, "25 MB"},
		{5 << 19, "2.5 MB"},
		{1<<20 + 1<<18, "1.2 MB"}, // 1.25 MB, rounded down
		{1<<20 + 1, "1 MB"},
		{500 << 10, "500 KB"},
		{1 << 10, "1 KB"},
		{1536, "1.5 KB"},
		{100, "100 bytes"},
		{1, "1 byte"},
		{2 << 30, "2 GB"},
	}
	for _, tt := range tests {
		if got := SizeText(tt.n); got != tt.want {
			t.Errorf("SizeText(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// Page tree objects for hand-written PDFs.
const (
	catalog2 = "<< /Type /Catalog /Pages 2 0 R >>"
	aPage    = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"
)

func TestPDFPageCount(t *testing.T) {
	// A three-page PDF updated incrementally to drop its last page: the
	// old page object stays in the file.
	dropped := appendUpdate(buildPDF(catalog2, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>", aPage, aPage, aPage),
		6, map[int]string{2: "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>"})
	// Object stream variants.
	lengthRef := bytes.Replace(pdfObjStm, []byte("/Filter/FlateDecode/Length "), []byte("/Filter/FlateDecode/Length 99 0 R/L "), 1)
	hexStm := bytes.Replace(pdfObjStm, []byte("/Type/ObjStm"), []byte("/Type/ObjStm/DecodeParms<</Predictor 12>>"), 1)
	withImage := objStmPDF(2, bytes.Repeat([]byte("/Type /Page endobj 1 0 obj << /Type /Page >> "), 100))

	tests := []struct {
		name    string
		pdf     []byte
		want    int
		wantErr bool
	}{
		{name: "one page", pdf: pdfOnePage, want: 1},
		{name: "three pages", pdf: pdfThreePage, want: 3},
		{name: "forty pages", pdf: pagesPDF(40, 10), want: 40},
		{name: "object stream and xref stream", pdf: pdfObjStm, want: 4},
		{name: "object stream with an image in the clear", pdf: withImage, want: 2},
		{name: "object stream with an indirect length", pdf: lengthRef, want: 4},
		{name: "object stream with a predictor is not read", pdf: hexStm, wantErr: true},
		{name: "nested page tree", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 3 >>",
			"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 5 0 R] /Count 2 >>",
			aPage, aPage, aPage), want: 3},
		{name: "no spaces, comments, escapes", pdf: buildPDF(
			"<</Type/Catalog/Pages 2 0 R>>",
			"<</Type/Pages/Kids[3 0 R 4 0 R 5 0 R]/Count 3>>",
			"<</Type/Page/Parent 2 0 R>>",
			"<< /Type % a comment\n /Page >>",
			"<< /Type /P#61ge /Annots [(a string with /Type /Page in it)] >>"), want: 3},
		{name: "page labels and templates are not pages", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", aPage,
			"<< /Type /PageLabel /S /D >>", "<< /Type /Template >>", "<< /Type /Pages >>"), want: 1},
		{name: "incremental update dropping a page", pdf: dropped, want: 2},
		{name: "count lower than the tree", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 1 >>", aPage, aPage, aPage), want: 3},
		{name: "tree with a missing kid: root count", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R 4 0 R 9 0 R] /Count 3 >>", aPage, aPage), want: 3},
		{name: "tree with a cycle: root count", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", aPage), want: 2},
		{name: "root count below another node's: page objects", pdf: buildPDF(catalog2,
			"<< /Type /Pages /Kids [3 0 R 9 0 R] /Count 2 >>",
			"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 5 0 R 6 0 R] /Count 7 >>",
			aPage, aPage, aPage), want: 3},
		{name: "no catalog: page objects", pdf: buildPDF("<< /Type /Page >>", "<< /Type /Page >>"), want: 2},
		{name: "only a pages node", pdf: buildPDF(catalog2, "<< /Type /Pages /Kids [] /Count 6 >>"), want: 6},
		{name: "page text in a content stream is not a page", pdf: buildPDF(
			"<< /Type /Page /Contents 2 0 R >>",
			pdfStreamObject("", []byte("/Type /Page\n3 0 obj << /Type /Page >> endobj"))), want: 1},
		{name: "stream with a wrong length", pdf: buildPDF(
			"<< /Type /Page >>",
			"<< /Length 5 >>\nstream\n/Type /Page 9 0 obj << /Type /Page >> endobj\nendstream",
			"<< /Type /Page >>"), want: 2},
		{name: "empty tree", pdf: buildPDF(catalog2, "<< /Type /Pages /Kids [] /Count 0 >>"), wantErr: true},
		{name: "no objects", pdf: []byte("%PDF-1.7\n%%EOF\n"), wantErr: true},
		{name: "html", pdf: fileHTML, wantErr: true},
		{name: "empty", pdf: nil, wantErr: true},
		{name: "truncated object stream", pdf: pdfObjStm[:len(pdfObjStm)/3], wantErr: true},
		{name: "deep nesting", pdf: buildPDF(strings.Repeat("[", 10000) + "<< /Type /Page >>"), wantErr: true},
		{name: "unterminated string", pdf: buildPDF("<< /Type /Page >>", "(((("), want: 1},
	}
	for _, tt := range tests {
		r := &readRecorder{t: t, data: tt.pdf}
		got, err := pdfPageCount(r, int64(len(tt.pdf)))
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: pdfPageCount = %d, want an error", tt.name, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: pdfPageCount = %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}

// The sandbox registry's documents are one-page PDFs.
func TestPDFPageCountRegistryDocuments(t *testing.T) {
	files, err := filepath.Glob("../testdata/registry/companies-house/documents/*.pdf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no registry documents found: %v", err)
	}
	one := &Field{Label: "Certificate", Validation: "strict", Accept: []string{"application/pdf"}, MaxPages: 1}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := pdfPageCount(bytes.NewReader(data), int64(len(data))); n != 1 || err != nil {
			t.Errorf("pdfPageCount(%s) = %d, %v; want 1", filepath.Base(name), n, err)
		}
		want := documentVerdict{FileType: "application/pdf", Reason: ReasonValidationPassed}
		if diff := cmp.Diff(want, checkDocument(one, bytes.NewReader(data), int64(len(data)), "", DefaultMaxUploadBytes)); diff != "" {
			t.Errorf("checkDocument(%s) mismatch (-want +got):\n%s", filepath.Base(name), diff)
		}
	}
}

// An object stream that inflates to more than the 64 MiB budget: objects
// beyond it are not read, and the count stops promptly.
func TestPDFPageCountInflateLimit(t *testing.T) {
	bomb := func(at int) []byte {
		header := fmt.Sprintf("2 %d ", at)
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write([]byte(header))
		w.Write(make([]byte, at)) // NUL is white space
		w.Write([]byte("<</Type/Page>>"))
		w.Close()
		return buildPDF(fmt.Sprintf("<</Type/ObjStm/N 1/First %d/Filter/FlateDecode/Length %d>>\nstream\n%s\nendstream",
			len(header), z.Len(), z.Bytes()))
	}
	near, far := bomb(1<<20), bomb(70<<20)
	if n, err := pdfPageCount(bytes.NewReader(near), int64(len(near))); n != 1 || err != nil {
		t.Errorf("page 1 MiB into an object stream: pdfPageCount = %d, %v; want 1", n, err)
	}
	start := time.Now()
	if n, err := pdfPageCount(bytes.NewReader(far), int64(len(far))); err == nil {
		t.Errorf("page 70 MiB into an object stream: pdfPageCount = %d, want an error", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("pdfPageCount of a %d-byte file took %v", len(far), d)
	}
}

func FuzzPDFPageCount(f *testing.F) {
	seeds := [][]byte{pdfOnePage, pdfThreePage, pdfObjStm, objStmPDF(2, []byte("image")),
		buildPDF(catalog2, "<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", aPage),
		pdfObjStm[:len(pdfObjStm)/2], pdfThreePage[:len(pdfThreePage)/2], fileHTML, nil,
		[]byte("1 0 obj << /Type /ObjStm /N 5 /First 0 /Filter /FlateDecode >> stream\nx\x9c"),
	}
	files, _ := filepath.Glob("../testdata/registry/companies-house/documents/*.pdf")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, data)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &readRecorder{t: t, data: data}
		n, err := pdfPageCount(r, int64(len(data)))
		if err == nil && n <= 0 {
			t.Errorf("pdfPageCount = %d without an error", n)
		}
		if err != nil && n != 0 {
			t.Errorf("pdfPageCount = %d with error %v", n, err)
		}
	})
}

// BenchmarkCheckDocument checks a ~1 MiB PDF in a strict field with
// max_pages, which reads the whole file.
func BenchmarkCheckDocument(b *testing.B) {
	field := &Field{Label: "Bank statement", Validation: "strict", Accept: []string{"application/pdf"}, MaxPages: 50}
	image := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range image {
		image[i] = byte(rng.Uint32())
	}
	files := []struct {
		name string
		pdf  []byte
	}{
		{"classic", pagesPDF(40, 26<<10)},
		{"objstm", objStmPDF(40, image)},
	}
	for _, f := range files {
		b.Run(f.name, func(b *testing.B) {
			r := bytes.NewReader(f.pdf)
			b.SetBytes(int64(len(f.pdf)))
			b.ReportAllocs()
			for b.Loop() {
				if v := checkDocument(field, r, int64(len(f.pdf)), "application/pdf", DefaultMaxUploadBytes); v.Reject != "" {
					b.Fatal(v.Reject)
				}
			}
		})
	}
}
