package onboarding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTypedFileName(t *testing.T) {
	for _, tt := range []struct{ name, ctype, want string }{
		{"statement.pdf", mimePDF, "statement.pdf"},
		{"STATEMENT.PDF", mimePDF, "STATEMENT.PDF"},
		{"statement.html", mimePDF, "statement.html.pdf"},
		{"statement", mimePDF, "statement.pdf"},
		{"statement.pdf.svg", mimePDF, "statement.pdf.svg.pdf"},
		{"scan.jpeg", mimeJPEG, "scan.jpeg"},
		{"scan.JPG", mimeJPEG, "scan.JPG"},
		{"scan.png", mimeJPEG, "scan.png.jpg"},
		{"photo.heic", mimeHEIF, "photo.heic"},
		{"photo", mimeHEIC, "photo.heic"},
		{"logo.svg", mimePNG, "logo.svg.png"},
		// Types the documents do not accept are left as they are.
		{"notes.txt", "text/plain", "notes.txt"},
		{"page.html", "", "page.html"},
	} {
		if got := TypedFileName(tt.name, tt.ctype); got != tt.want {
			t.Errorf("TypedFileName(%q, %q) = %q, want %q", tt.name, tt.ctype, got, tt.want)
		}
	}
}

// TestExportedNamesCarryTheirType: an export names a polyglot PDF uploaded
// as statement.html by what it was accepted as.
func TestExportedNamesCarryTheirType(t *testing.T) {
	docs := map[string]Document{
		"bank_statement": {FileID: "f1", FileName: "statement.html", FileType: mimePDF, BlobID: "b1", Status: DocumentAccepted},
		"passport":       {FileID: "f2", FileName: "passport.jpg", FileType: mimeJPEG, BlobID: "b2", Status: DocumentAccepted},
	}
	got := appendExportBlobs(nil, docs)
	want := []exportBlob{{"f1", "statement.html.pdf", "b1"}, {"f2", "passport.jpg", "b2"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(exportBlob{})); diff != "" {
		t.Errorf("exported files (-want +got):\n%s", diff)
	}
}
