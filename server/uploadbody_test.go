package server

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onboard/onboarding"
)

// uploadBody is a multipart body as the documents page sends it, for the
// document field, with a file part named name holding content; its
// boundary is "B".
func uploadBody(csrf, field, name string, content []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "--B\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n%s\r\n", csrf)
	fmt.Fprintf(&b, "--B\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\n%s\r\n", field)
	fmt.Fprintf(&b, "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\nContent-Type: application/pdf\r\n\r\n", name)
	b.Write(content)
	b.WriteString("\r\n--B--\r\n")
	return b.Bytes()
}

// failingReader gives its bytes, then err: a request body as net/http
// hands it over when the client hangs up part-way (io.ErrUnexpectedEOF) or
// stops sending until the server's read deadline (a timeout).
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// storedFiles lists every file under the blob store, temporary ones
// included.
func storedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

// An upload whose body cannot be read in full (cut short, stalled, not
// well-formed multipart) answers 400 with the documents page and its
// message, stores no file and changes no document: never a 500.
func TestUploadBodyUnreadable(t *testing.T) {
	pdf := testPDF(t)
	cases := []struct {
		name string
		body func(csrf string) io.Reader
	}{
		{"no closing boundary", func(csrf string) io.Reader {
			b := uploadBody(csrf, "certificate_of_incorporation", "cert.pdf", pdf)
			return bytes.NewReader(b[:len(b)-len("\r\n--B--\r\n")])
		}},
		{"client hangs up mid-file", func(csrf string) io.Reader {
			b := uploadBody(csrf, "certificate_of_incorporation", "cert.pdf", pdf)
			return &failingReader{bytes.NewReader(b[:len(b)-len(pdf)/2]), io.ErrUnexpectedEOF}
		}},
		{"client stalls mid-file", func(csrf string) io.Reader {
			b := uploadBody(csrf, "certificate_of_incorporation", "cert.pdf", pdf)
			return &failingReader{bytes.NewReader(b[:len(b)-len(pdf)/2]), os.ErrDeadlineExceeded}
		}},
		{"NUL in the file name", func(csrf string) io.Reader {
			return bytes.NewReader(uploadBody(csrf, "certificate_of_incorporation", "a\x00b.pdf", pdf))
		}},
		{"cut in a small part", func(csrf string) io.Reader {
			b := uploadBody(csrf, "certificate_of_incorporation", "cert.pdf", pdf)
			return &failingReader{bytes.NewReader(b[:len("--B\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n")+4]), io.ErrUnexpectedEOF}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			id := e.create(t, "acme", "")
			a := e.applicantAt(t, e.primaryLink(t, id))
			a.signIn()
			a.get("/s/documents")
			before := storedFiles(t, e.blobsDir)

			r := httptest.NewRequest("POST", a.base+"/documents", tc.body(a.csrf))
			r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
			w := a.send(r)
			wantPage(t, w, http.StatusBadRequest, onboarding.ErrUploadIncomplete.Message)
			if got := storedFiles(t, e.blobsDir); len(got) != len(before) {
				t.Errorf("files in the blob store: %v, want %v", got, before)
			}
			if docs := e.apiApp(t, id)["data"].(map[string]any)["documents"]; docs != nil && len(docs.(map[string]any)) != 0 {
				t.Errorf("documents after a failed upload: %v", docs)
			}
			// The page still works, and a whole upload afterwards is stored.
			a.get("/s/documents")
			wantRedirect(t, a.upload("certificate_of_incorporation", "", "cert.pdf", "application/pdf", pdf), a.base+"/s/documents?done=uploaded#doc-certificate_of_incorporation")
		})
	}
}

// The RFI page's uploads share the handling: a body cut short is 400
// with the RFI page.
func TestRFIUploadBodyUnreadable(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, _ := e.signedInRFI(t)
	b := uploadBody(a.csrf, "bank_statement", "statement.pdf", testPDF(t))
	r := httptest.NewRequest("POST", a.base+"/documents", &failingReader{bytes.NewReader(b[:len(b)-100]), io.ErrUnexpectedEOF})
	r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
	w := a.send(r)
	wantPage(t, w, http.StatusBadRequest, onboarding.ErrUploadIncomplete.Message, "Send your documents")
	if got := storedFiles(t, e.blobsDir); len(got) != 0 {
		t.Errorf("files in the blob store after a failed upload: %v", got)
	}
	if strings.Contains(w.Body.String(), "statement.pdf") {
		t.Error("the page shows the file that was not uploaded")
	}
}
