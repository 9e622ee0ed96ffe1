package pdf

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"onboard/pdf/pdftest"
)

var (
	pdfOnePage   = pdftest.Pages(1, 0)
	pdfThreePage = pdftest.Pages(3, 0)
	pdfObjStm    = pdftest.ObjStm(4, nil)

	fileHTML = []byte("<!DOCTYPE html>\n<html><body><script>alert(1)</script></body></html>\n")
)

// Page tree objects for hand-written PDFs.
const (
	catalog2 = "<< /Type /Catalog /Pages 2 0 R >>"
	aPage    = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"
)

func TestPageCount(t *testing.T) {
	// A three-page PDF updated incrementally to drop its last page: the
	// old page object stays in the file.
	dropped := pdftest.AppendUpdate(pdftest.Build(catalog2, "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>", aPage, aPage, aPage),
		6, map[int]string{2: "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>"})
	// Object stream variants.
	lengthRef := bytes.Replace(pdfObjStm, []byte("/Filter/FlateDecode/Length "), []byte("/Filter/FlateDecode/Length 99 0 R/L "), 1)
	hexStm := bytes.Replace(pdfObjStm, []byte("/Type/ObjStm"), []byte("/Type/ObjStm/DecodeParms<</Predictor 12>>"), 1)
	withImage := pdftest.ObjStm(2, bytes.Repeat([]byte("/Type /Page endobj 1 0 obj << /Type /Page >> "), 100))

	tests := []struct {
		name    string
		pdf     []byte
		want    int
		wantErr bool
	}{
		{name: "one page", pdf: pdfOnePage, want: 1},
		{name: "three pages", pdf: pdfThreePage, want: 3},
		{name: "forty pages", pdf: pdftest.Pages(40, 10), want: 40},
		{name: "object stream and xref stream", pdf: pdfObjStm, want: 4},
		{name: "object stream with an image in the clear", pdf: withImage, want: 2},
		{name: "object stream with an indirect length", pdf: lengthRef, want: 4},
		{name: "object stream with a predictor is not read", pdf: hexStm, wantErr: true},
		{name: "nested page tree", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 3 >>",
			"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 5 0 R] /Count 2 >>",
			aPage, aPage, aPage), want: 3},
		{name: "no spaces, comments, escapes", pdf: pdftest.Build(
			"<</Type/Catalog/Pages 2 0 R>>",
			"<</Type/Pages/Kids[3 0 R 4 0 R 5 0 R]/Count 3>>",
			"<</Type/Page/Parent 2 0 R>>",
			"<< /Type % a comment\n /Page >>",
			"<< /Type /P#61ge /Annots [(a string with /Type /Page in it)] >>"), want: 3},
		{name: "page labels and templates are not pages", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", aPage,
			"<< /Type /PageLabel /S /D >>", "<< /Type /Template >>", "<< /Type /Pages >>"), want: 1},
		{name: "incremental update dropping a page", pdf: dropped, want: 2},
		{name: "count lower than the tree", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 1 >>", aPage, aPage, aPage), want: 3},
		{name: "tree with a missing kid: root count", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 4 0 R 9 0 R] /Count 3 >>", aPage, aPage), want: 3},
		{name: "tree with a cycle: root count", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", aPage), want: 2},
		{name: "root count below another node's: the largest count", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 9 0 R] /Count 2 >>",
			"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 5 0 R 6 0 R] /Count 7 >>",
			aPage, aPage, aPage), want: 7},
		{name: "tree with a missing kid, root count below the pages: page objects", pdf: pdftest.Build(catalog2,
			"<< /Type /Pages /Kids [3 0 R 9 0 R] /Count 1 >>", aPage, aPage, aPage, aPage), want: 4},
		{name: "no catalog: page objects", pdf: pdftest.Build("<< /Type /Page >>", "<< /Type /Page >>"), want: 2},
		{name: "only a pages node", pdf: pdftest.Build(catalog2, "<< /Type /Pages /Kids [] /Count 6 >>"), want: 6},
		{name: "page text in a content stream is not a page", pdf: pdftest.Build(
			"<< /Type /Page /Contents 2 0 R >>",
			pdftest.StreamObject("", []byte("/Type /Page\n3 0 obj << /Type /Page >> endobj"))), want: 1},
		{name: "stream with a wrong length", pdf: pdftest.Build(
			"<< /Type /Page >>",
			"<< /Length 5 >>\nstream\n/Type /Page 9 0 obj << /Type /Page >> endobj\nendstream",
			"<< /Type /Page >>"), want: 2},
		{name: "empty tree", pdf: pdftest.Build(catalog2, "<< /Type /Pages /Kids [] /Count 0 >>"), wantErr: true},
		{name: "no objects", pdf: []byte("%PDF-1.7\n%%EOF\n"), wantErr: true},
		{name: "html", pdf: fileHTML, wantErr: true},
		{name: "empty", pdf: nil, wantErr: true},
		{name: "truncated object stream", pdf: pdfObjStm[:len(pdfObjStm)/3], wantErr: true},
		{name: "deep nesting", pdf: pdftest.Build(strings.Repeat("[", 10000) + "<< /Type /Page >>"), wantErr: true},
		{name: "unterminated string", pdf: pdftest.Build("<< /Type /Page >>", "(((("), want: 1},
	}
	for _, tt := range tests {
		r := pdftest.NewReadRecorder(t, tt.pdf)
		got, err := PageCount(r, int64(len(tt.pdf)))
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: PageCount = %d, want an error", tt.name, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: PageCount = %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
}

// PageCount's error is ErrNoPages.
func TestPageCountErrNoPages(t *testing.T) {
	for _, data := range [][]byte{nil, fileHTML, []byte("%PDF-1.7\n%%EOF\n")} {
		if n, err := PageCount(bytes.NewReader(data), int64(len(data))); n != 0 || !errors.Is(err, ErrNoPages) {
			t.Errorf("PageCount(%q) = %d, %v; want 0, ErrNoPages", data, n, err)
		}
	}
}

// The sandbox registry's documents are one-page PDFs.
func TestPageCountRegistryDocuments(t *testing.T) {
	files, err := filepath.Glob("../testdata/registry/companies-house/documents/*.pdf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no registry documents found: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := PageCount(bytes.NewReader(data), int64(len(data))); n != 1 || err != nil {
			t.Errorf("PageCount(%s) = %d, %v; want 1", filepath.Base(name), n, err)
		}
	}
}

// An object stream that inflates to more than the 64 MiB budget: objects
// beyond it are not read, and the count stops promptly.
func TestPageCountInflateLimit(t *testing.T) {
	bomb := func(at int) []byte {
		header := fmt.Sprintf("2 %d ", at)
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write([]byte(header))
		w.Write(make([]byte, at)) // NUL is white space
		w.Write([]byte("<</Type/Page>>"))
		w.Close()
		return pdftest.Build(fmt.Sprintf("<</Type/ObjStm/N 1/First %d/Filter/FlateDecode/Length %d>>\nstream\n%s\nendstream",
			len(header), z.Len(), z.Bytes()))
	}
	near, far := bomb(1<<20), bomb(70<<20)
	if n, err := PageCount(bytes.NewReader(near), int64(len(near))); n != 1 || err != nil {
		t.Errorf("page 1 MiB into an object stream: PageCount = %d, %v; want 1", n, err)
	}
	start := time.Now()
	if n, err := PageCount(bytes.NewReader(far), int64(len(far))); err == nil {
		t.Errorf("page 70 MiB into an object stream: PageCount = %d, want an error", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("PageCount of a %d-byte file took %v", len(far), d)
	}
}

// TestPageCountNeverUndercounts: when objects of the file go unread (an
// object stream beyond the work budget, or one whose filter is not read),
// the page tree's claims are not believed: there is no count, so that a
// field with max_pages refuses the file as unreadable. Pages hidden after
// 70 MiB of compressed padding were counted from the root's /Count.
func TestPageCountNeverUndercounts(t *testing.T) {
	predictor := pdftest.PaddedObjStm(500, 0, 1)
	predictor = bytes.Replace(predictor, []byte("/Type /ObjStm"), []byte("/Type /ObjStm /DecodeParms << /Predictor 12 >>"), 1)
	for _, tt := range []struct {
		name string
		pdf  []byte
	}{
		{"500 pages after 70 MiB of padding, root /Count 1", pdftest.PaddedObjStm(500, 70<<20, 1)},
		{"500 pages in an object stream with a predictor, root /Count 1", predictor},
	} {
		if n, err := PageCount(bytes.NewReader(tt.pdf), int64(len(tt.pdf))); !errors.Is(err, ErrNoPages) {
			t.Errorf("%s: PageCount = %d, %v; want ErrNoPages", tt.name, n, err)
		}
	}
}

// TestPageCountLargeDocuments: documents large in every way that a
// budget bounds, but within it, are counted exactly.
func TestPageCountLargeDocuments(t *testing.T) {
	for _, tt := range []struct {
		name string
		pdf  []byte
		want int
	}{
		{"300 pages of 64 KiB each", pdftest.Pages(300, 64<<10), 300},
		{"20000 pages in an object stream", pdftest.ObjStm(20000, nil), 20000},
		{"a 40 MiB image in the clear", pdftest.ObjStm(3, make([]byte, 40<<20)), 3},
		{"pages after 32 MiB of padding in an object stream", pdftest.PaddedObjStm(500, 32<<20, 500), 500},
	} {
		if n, err := PageCount(bytes.NewReader(tt.pdf), int64(len(tt.pdf))); n != tt.want || err != nil {
			t.Errorf("%s: PageCount = %d, %v; want %d", tt.name, n, err, tt.want)
		}
	}
}

func FuzzPageCount(f *testing.F) {
	seeds := [][]byte{pdfOnePage, pdfThreePage, pdfObjStm, pdftest.ObjStm(2, []byte("image")),
		pdftest.Build(catalog2, "<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", aPage),
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
		r := pdftest.NewReadRecorder(t, data)
		n, err := PageCount(r, int64(len(data)))
		if err == nil && n <= 0 {
			t.Errorf("PageCount = %d without an error", n)
		}
		if err != nil && n != 0 {
			t.Errorf("PageCount = %d with error %v", n, err)
		}
	})
}

// BenchmarkPageCount counts the pages of ~1 MiB PDFs: a classic one whose
// stream data is skipped by /Length, and one with an object stream to
// inflate and a large image in the clear.
func BenchmarkPageCount(b *testing.B) {
	image := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range image {
		image[i] = byte(rng.Uint32())
	}
	files := []struct {
		name  string
		pdf   []byte
		pages int
	}{
		{"classic", pdftest.Pages(40, 26<<10), 40},
		{"objstm", pdftest.ObjStm(40, image), 40},
		{"classic-500-pages", pdftest.Pages(500, 0), 500},
	}
	for _, f := range files {
		b.Run(f.name, func(b *testing.B) {
			r := bytes.NewReader(f.pdf)
			b.SetBytes(int64(len(f.pdf)))
			b.ReportAllocs()
			for b.Loop() {
				if n, err := PageCount(r, int64(len(f.pdf))); n != f.pages || err != nil {
					b.Fatalf("PageCount = %d, %v; want %d", n, err, f.pages)
				}
			}
		})
	}
}
