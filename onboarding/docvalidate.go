package onboarding

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"slices"
	"strconv"
	"strings"
)

// This file checks uploaded documents against their field
// (docs/applicant-form.md):
// what type a file really is (sniffed from its first bytes, never taken from
// the browser), whether it is within the size limits and, for strict fields
// with max_pages, how many pages a PDF has (counted by the Service's
// PageCounter).

// PageCounter returns the number of pages of a PDF of size bytes readable
// through r. It returns an error, and 0, when it cannot tell: the file is
// not a PDF, is damaged, or has no page; the upload is then rejected as
// unreadable. It must not read outside [0, size), must bound its work and
// memory on any input, and is called concurrently. The pdf package's
// PageCount is the one onboard uses.
type PageCounter func(r io.ReaderAt, size int64) (int, error)

// MIME types the validator recognises from a file's content.
const (
	mimePDF         = "application/pdf"
	mimePNG         = "image/png"
	mimeJPEG        = "image/jpeg"
	mimeHEIC        = "image/heic"
	mimeHEIF        = "image/heif"
	mimeOctetStream = "application/octet-stream"
)

// docSniffLen is how much of a file sniffDocumentType looks at, and how
// much of its end pdfHasEOF looks at.
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

// Applicant-facing rejection messages. The ones with verbs
// are formatted by the functions below.
const (
	docRejectEmpty      = "The file is empty. Choose the file again, or try another copy."
	docRejectType       = "This type of file cannot be accepted. Upload a PDF, or a photo as JPEG, PNG or HEIC."
	docRejectNotPDF     = "The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC."
	docRejectPDFUnread  = "The PDF could not be read. Save it again as a PDF and upload the new copy."
	docRejectTooLarge   = "The file is larger than %s. Upload a smaller file."
	docRejectFieldLarge = "The file is larger than %s, the limit for %s. Upload a smaller file."
	docRejectTypeHere   = "This type of file cannot be accepted here. Upload %s."
	docRejectPages      = "The document has %s; at most %d %s accepted here."
)

// documentVerdict is the outcome of checking an uploaded file against its
// document field.
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
// for field f. maxUpload is the server's per-file limit (0 or less: none);
// countPages counts the pages of a PDF.
// declaredType is the Content-Type the browser sent for the part; it may be
// empty or wrong, and only a validation "none" field ever uses it.
//
// checkDocument reads the first 1024 bytes of the file, the last 1024 of a
// PDF, and the whole of it only for a PDF in a strict field with max_pages.
func checkDocument(f *Field, r io.ReaderAt, size int64, declaredType string, maxUpload int64, countPages PageCounter) documentVerdict {
	head := make([]byte, min(max(size, 0), docSniffLen))
	n, _ := io.ReadFull(io.NewSectionReader(r, 0, int64(len(head))), head)
	sniffed := sniffDocumentType(head[:n])
	if sniffed == mimePDF && !pdfHasEOF(r, size) {
		// Truncated, or not a PDF at all: none of the sniffed types.
		sniffed = ""
	}

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
	// A file the browser sent as a PDF (its name ends in .pdf) that is
	// none is damaged or misnamed: saying "this type" would contradict it.
	unknownType := docRejectType
	if docTypeAliases[declaredType] == mimePDF || declaredType == mimePDF {
		unknownType = docRejectNotPDF
	}
	if !strict {
		if sniffed == "" {
			return reject(unknownType)
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
		return reject(unknownType)
	}
	if f.MaxSize > 0 && size > f.MaxSize {
		return reject(fmt.Sprintf(docRejectFieldLarge, SizeText(f.MaxSize), f.Label))
	}
	if f.MaxPages > 0 && sniffed == mimePDF {
		pages, err := countPages(r, size)
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
// A PDF starts with its header, %PDF-1. or %PDF-2., at byte 0. PDF readers
// accept junk before the header, but a file with anything else first is
// an HTML page or a text file that mentions %PDF-, or a PDF a mail or text
// tool has altered: it is not accepted as a PDF. Whether the file also
// ends like a PDF is pdfHasEOF's question.
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
	if bytes.HasPrefix(head, []byte("%PDF-1.")) || bytes.HasPrefix(head, []byte("%PDF-2.")) {
		return mimePDF
	}
	return ""
}

// pdfHasEOF reports whether the last 1024 bytes of a file of size bytes,
// readable through r, hold the %%EOF marker that ends every complete PDF
// (ISO 32000-1 §7.5.5; readers look for it in the last 1024 bytes). A PDF
// without it is truncated, or not a PDF.
func pdfHasEOF(r io.ReaderAt, size int64) bool {
	n := min(max(size, 0), docSniffLen)
	tail := make([]byte, n)
	m, _ := r.ReadAt(tail, size-n)
	return bytes.Contains(tail[:m], []byte("%%EOF"))
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
