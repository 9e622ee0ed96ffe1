package onboarding

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/pdf"
	"onboard/pdf/pdftest"
)

// Test files, built here or by pdftest so that every byte a test depends
// on is visible.

var (
	pdfOnePage   = pdftest.Pages(1, 0)
	pdfThreePage = pdftest.Pages(3, 0)
	pdfObjStm    = pdftest.ObjStm(4, nil)

	filePNG  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")
	fileJPEG = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9")
	fileHTML = []byte("<!DOCTYPE html>\n<html><body><script>alert(1)</script></body></html>\n")
	fileGIF  = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")

	// fileHTMLWithPDF is an HTML page that mentions a PDF header and ends
	// like a PDF: PDF readers would open it, onboard does not.
	fileHTMLWithPDF = []byte("<!DOCTYPE html>\n<html><body><script>alert(1)</script>\n%PDF-1.4\n%%EOF\n</body></html>\n")
	// fileTruncatedPDF is a one-page PDF cut short: it has no %%EOF.
	fileTruncatedPDF = pdfOnePage[:len(pdfOnePage)-20]
)

// countPages is the PageCounter main wires into the Service: the verdicts
// are tested with the real page count.
var countPages PageCounter = pdf.PageCount

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
		{"pdf 2.0", []byte("%PDF-2.0\n"), "application/pdf"},
		{"pdf after junk", append(bytes.Repeat([]byte("x"), 1000), "%PDF-1.4\n"...), ""},
		{"pdf after a byte order mark", []byte("\xef\xbb\xbf%PDF-1.4\n"), ""},
		{"pdf after whitespace", []byte("\n%PDF-1.4\n"), ""},
		{"html with a pdf header", fileHTMLWithPDF, ""},
		{"pdf header of no version", []byte("%PDF-\n"), ""},
		{"pdf header of version 3", []byte("%PDF-3.0\n"), ""},
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

// bigFile is a file of size bytes: head, then zeros, then tail at its very
// end; it does not hold the zeros.
type bigFile struct {
	head []byte
	size int64
	tail []byte
}

// pdfEOF is the end of a PDF, for a bigFile's tail.
var pdfEOF = []byte("\n%%EOF\n")

func (f bigFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	short := off+int64(len(p)) > f.size
	p = p[:min(int64(len(p)), f.size-off)]
	n := copy(p, f.head[min(off, int64(len(f.head))):])
	clear(p[n:])
	tailAt := f.size - int64(len(f.tail))
	for i := range p {
		if at := off + int64(i); at >= tailAt {
			p[i] = f.tail[at-tailAt]
		}
	}
	if short {
		return len(p), io.EOF
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
		notPDF   = "The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC."
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
		{name: "none html with a pdf header", field: none, file: bytes.NewReader(fileHTMLWithPDF), declared: "text/html",
			want: ok("application/octet-stream", ReasonNoValidatorConfigured)},
		{name: "none truncated pdf declared pdf", field: none, file: bytes.NewReader(fileTruncatedPDF), declared: "application/pdf",
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
		{name: "none over the upload limit", field: none, file: bigFile{pdfOnePage, 25*mb + 1, pdfEOF},
			want: ok("application/pdf", ReasonNoValidatorConfigured)},

		// baseline, and the default ("").
		{name: "baseline pdf", field: baseline, file: bytes.NewReader(pdfThreePage),
			want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "baseline sandbox sample pdf", field: baseline, file: bytes.NewReader(samplePDF()),
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
		{name: "baseline pdf at the upload limit", field: baseline, file: bigFile{pdfOnePage, 25 * mb, pdfEOF},
			want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "baseline empty", field: baseline, file: bytes.NewReader(nil), declared: "application/pdf",
			want: rejected(empty)},
		{name: "default empty", field: byDefault, file: bytes.NewReader(nil), want: rejected(empty)},
		{name: "baseline over the upload limit", field: baseline, file: bigFile{pdfOnePage, 25*mb + 1, pdfEOF},
			want: rejected(tooLarge)},
		{name: "baseline html declared pdf", field: baseline, file: bytes.NewReader(fileHTML), declared: "application/pdf",
			want: rejected(notPDF)},
		{name: "default html declared pdf", field: byDefault, file: bytes.NewReader(fileHTML), declared: "application/pdf",
			want: rejected(notPDF)},
		{name: "baseline html with a pdf header", field: baseline, file: bytes.NewReader(fileHTMLWithPDF), declared: "application/pdf",
			want: rejected(notPDF)},
		{name: "baseline text renamed pdf", field: baseline, file: bytes.NewReader([]byte("Certificate of incorporation\n")),
			declared: "application/pdf", want: rejected(notPDF)},
		{name: "baseline truncated pdf", field: baseline, file: bytes.NewReader(fileTruncatedPDF), want: rejected(badType)},
		{name: "baseline pdf with %%EOF before its last 1024 bytes", field: baseline,
			file: bigFile{pdfOnePage, 1 * mb, nil}, want: rejected(badType)},
		{name: "baseline pdf with %%EOF at the edge of its last 1024 bytes", field: baseline,
			file: bigFile{pdfOnePage, 1 * mb, append([]byte("%%EOF"), make([]byte, 1019)...)}, want: ok("application/pdf", ReasonBaselinePassed)},
		{name: "baseline pdf with %%EOF just before its last 1024 bytes", field: baseline,
			file: bigFile{pdfOnePage, 1 * mb, append([]byte("%%EOF"), make([]byte, 1020)...)}, want: rejected(badType)},
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
		{name: "strict over the upload limit", field: strict(pdfOnly, 30*mb, 0), file: bigFile{pdfOnePage, 25*mb + 1, pdfEOF},
			want: rejected(tooLarge)},
		{name: "strict html declared pdf, no accept list", field: strict(nil, 0, 0), file: bytes.NewReader(fileHTML),
			declared: "application/pdf", want: rejected(notPDF)},
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
		{name: "strict html with a pdf header, accept list", field: strict(pdfOnly, 0, 0), file: bytes.NewReader(fileHTMLWithPDF),
			want: rejected("This type of file cannot be accepted here. Upload a PDF file.")},
		{name: "strict truncated pdf", field: strict(nil, 0, 0), file: bytes.NewReader(fileTruncatedPDF), want: rejected(badType)},
		{name: "strict heif is not heic", field: strict([]string{"image/heic"}, 0, 0), file: bytes.NewReader(ftyp("mif1")),
			want: rejected("This type of file cannot be accepted here. Upload a HEIC file.")},
		{name: "strict max size MB", field: strict(nil, 2*mb+mb/2, 0), file: bigFile{fileJPEG, 3 * mb, nil},
			want: rejected("The file is larger than 2.5 MB, the limit for Proof of address. Upload a smaller file.")},
		{name: "strict max size KB", field: strict(nil, 500<<10, 0), file: bigFile{pdfOnePage, 500<<10 + 1, pdfEOF},
			want: rejected("The file is larger than 500 KB, the limit for Proof of address. Upload a smaller file.")},
		{name: "strict at max size", field: strict(nil, 500<<10, 0), file: bigFile{pdfOnePage, 500 << 10, pdfEOF},
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
		got := checkDocument(tt.field, tt.file, size, tt.declared, DefaultMaxUploadBytes, countPages)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: checkDocument mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestCheckDocumentReadsOnlyWhatItNeeds(t *testing.T) {
	pdf := pdftest.Pages(5, 100<<10)
	tests := []struct {
		name      string
		field     *Field
		wantBytes int64 // at most; 0: any, up to about twice the file
	}{
		// The first and the last 1024 bytes.
		{"none", &Field{Validation: "none"}, 2048},
		{"baseline", &Field{}, 2048},
		{"strict without max_pages", &Field{Validation: "strict", Accept: []string{"application/pdf"}, MaxSize: 1 << 20}, 2048},
		{"strict with max_pages", &Field{Validation: "strict", MaxPages: 5}, 0},
	}
	for _, tt := range tests {
		r := pdftest.NewReadRecorder(t, pdf)
		v := checkDocument(tt.field, r, int64(len(pdf)), "", DefaultMaxUploadBytes, countPages)
		if v.Reject != "" {
			t.Errorf("%s: rejected: %s", tt.name, v.Reject)
		}
		if end := r.End(); end != int64(len(pdf)) {
			t.Errorf("%s: read up to byte %d, want %d", tt.name, end, len(pdf))
		}
		if n := r.BytesRead(); tt.wantBytes > 0 && n > tt.wantBytes {
			t.Errorf("%s: read %d bytes, want at most %d", tt.name, n, tt.wantBytes)
		}
		// Stream data is skipped by /Length: the scan reads each byte at
		// most about once.
		if n := r.BytesRead(); n > 2*int64(len(pdf)) {
			t.Errorf("%s: read %d bytes of a %d-byte file", tt.name, n, len(pdf))
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

// The sandbox registry's documents are one-page PDFs, accepted by a strict
// field of one page.
func TestCheckDocumentRegistryDocuments(t *testing.T) {
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
		want := documentVerdict{FileType: "application/pdf", Reason: ReasonValidationPassed}
		if diff := cmp.Diff(want, checkDocument(one, bytes.NewReader(data), int64(len(data)), "", DefaultMaxUploadBytes, countPages)); diff != "" {
			t.Errorf("checkDocument(%s) mismatch (-want +got):\n%s", filepath.Base(name), diff)
		}
	}
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
		{"classic", pdftest.Pages(40, 26<<10)},
		{"objstm", pdftest.ObjStm(40, image)},
	}
	for _, f := range files {
		b.Run(f.name, func(b *testing.B) {
			r := bytes.NewReader(f.pdf)
			b.SetBytes(int64(len(f.pdf)))
			b.ReportAllocs()
			for b.Loop() {
				if v := checkDocument(field, r, int64(len(f.pdf)), "application/pdf", DefaultMaxUploadBytes, countPages); v.Reject != "" {
					b.Fatal(v.Reject)
				}
			}
		})
	}
}

// TestCheckDocumentUncountablePages: a PDF whose page tree cannot be
// resolved within the page counter's work budget is refused as unreadable
// by a field with max_pages, however few pages its root /Count claims,
// and accepted by one without (its pages are not counted there).
func TestCheckDocumentUncountablePages(t *testing.T) {
	hidden := pdftest.PaddedObjStm(500, 70<<20, 1) // 500 pages after 70 MiB of padding
	capped := &Field{Label: "Bank statement", Validation: "strict", Accept: []string{"application/pdf"}, MaxPages: 20}
	want := documentVerdict{Reject: docRejectPDFUnread}
	if diff := cmp.Diff(want, checkDocument(capped, bytes.NewReader(hidden), int64(len(hidden)), "application/pdf", DefaultMaxUploadBytes, countPages)); diff != "" {
		t.Errorf("a field of 20 pages (-want +got):\n%s", diff)
	}
	uncapped := &Field{Label: "Bank statement", Validation: "strict", Accept: []string{"application/pdf"}}
	want = documentVerdict{FileType: "application/pdf", Reason: ReasonValidationPassed}
	if diff := cmp.Diff(want, checkDocument(uncapped, bytes.NewReader(hidden), int64(len(hidden)), "application/pdf", DefaultMaxUploadBytes, countPages)); diff != "" {
		t.Errorf("a field without max_pages (-want +got):\n%s", diff)
	}
	counted := pdftest.PaddedObjStm(25, 1<<20, 1) // the same, within the budget
	want = documentVerdict{Reject: "The document has 25 pages; at most 20 are accepted here."}
	if diff := cmp.Diff(want, checkDocument(capped, bytes.NewReader(counted), int64(len(counted)), "application/pdf", DefaultMaxUploadBytes, countPages)); diff != "" {
		t.Errorf("25 pages in a field of 20 (-want +got):\n%s", diff)
	}
}
