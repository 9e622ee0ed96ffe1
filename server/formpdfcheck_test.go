package server

import (
	"net/http"
	"testing"
)

// An HTML page with a PDF header in its first kilobyte and a %%EOF at its
// end, which PDF readers would open, is not a PDF: uploaded through the
// form as bill.pdf, it is rejected and the applicant told why.
func TestFormUploadRejectsHTMLWithPDFHeader(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	a := e.applicantAt(t, e.primaryLink(t, id))
	a.signIn()
	a.get("/s/documents")

	page := []byte("<!DOCTYPE html>\n<html><body><script>alert(1)</script>\n%PDF-1.4\n%%EOF\n</body></html>\n")
	w := a.upload("proof_of_address", "", "bill.pdf", "application/pdf", page)
	wantRedirect(t, w, a.base+"/s/documents?done=rejected#doc-proof_of_address")
	wantPage(t, a.get("/s/documents?done=rejected"), http.StatusOK, "Not accepted",
		"bill.pdf: The file is not a PDF that can be opened: it may be damaged, or another kind of file with a PDF's name. Save or export it again as a PDF, or upload a photo as JPEG, PNG or HEIC.")
}
