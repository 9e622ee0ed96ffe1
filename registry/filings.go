package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"onboard/onboarding"
)

// Limits of a filing download: the whole exchange (metadata, redirect and
// content) must finish within downloadTimeout, and a document may not be
// larger than maxDocument.
const (
	downloadTimeout = 2 * time.Minute
	maxDocument     = 50 << 20
)

// chDocumentHost is the domain of the Companies House APIs; credentials go
// only to hosts in it (and to the configured base URL's host).
const chDocumentHost = "company-information.service.gov.uk"

// chFilingList is a page of GET /company/{n}/filing-history.
type chFilingList struct {
	Items      []chFiling `json:"items"`
	TotalCount int        `json:"total_count"`
}

// chFiling holds the members of a filing-history item that onboard reads.
type chFiling struct {
	TransactionID string `json:"transaction_id"`
	Category      string `json:"category"`
	Type          string `json:"type"`
	Date          string `json:"date"`
	Links         struct {
		DocumentMetadata string `json:"document_metadata"`
	} `json:"links"`
}

// chDocumentMetadata holds the members of Document API metadata that onboard reads.
type chDocumentMetadata struct {
	Links struct {
		Document string `json:"document"`
	} `json:"links"`
	Resources map[string]struct {
		ContentLength int64 `json:"content_length"`
	} `json:"resources"`
}

// Filings lists the filings of a company that have a document, newest
// first, as Companies House orders them. Filings without a
// links.document_metadata have no image and are left out. The CRO charges
// for documents, so Irish companies have none.
func (r *Registry) Filings(ctx context.Context, country, number string) ([]onboarding.Filing, error) {
	a, err := r.adapters.of(country)
	if err != nil || a.filings == nil {
		return nil, err
	}
	n, err := a.normalize(number)
	if err != nil {
		return nil, err
	}
	return a.filings(ctx, n)
}

func (c *companiesHouse) filings(ctx context.Context, number string) ([]onboarding.Filing, error) {
	var out []onboarding.Filing
	err := c.list(ctx, "/company/"+number+"/filing-history", func(body []byte) (int, int, error) {
		var page chFilingList
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, 0, err
		}
		for _, f := range page.Items {
			if f.Links.DocumentMetadata == "" || f.TransactionID == "" {
				continue
			}
			date := isoDate(f.Date)
			out = append(out, onboarding.Filing{
				Ref:          f.TransactionID,
				DocumentType: documentType(f.Category, f.Type),
				FilingDate:   date,
				FileName:     fileName(number, f.Type, date),
				Document:     f.Links.DocumentMetadata,
			})
		}
		return len(page.Items), page.TotalCount, nil
	})
	return out, err
}

// documentType names a filing in onboard's terms from its form type and
// category, as Companies House's filing history gives them. Categories onboard has no name for are
// passed on with underscores ("change-of-name" → "change_of_name").
func documentType(category, formType string) string {
	switch strings.ToUpper(formType) {
	case "NEWINC", "IN01", "LLIN01":
		return "certificate_of_incorporation"
	case "AA":
		return "annual_accounts"
	case "CS01", "AR01":
		return "confirmation_statement"
	}
	switch category = strings.ToLower(strings.TrimSpace(category)); category {
	case "":
		return "other"
	case "persons-with-significant-control":
		return "psc_notice"
	case "accounts":
		return "annual_accounts"
	case "incorporation":
		return "certificate_of_incorporation"
	case "confirmation-statement", "annual-return":
		return "confirmation_statement"
	}
	return strings.ReplaceAll(category, "-", "_")
}

// fileName is the download name of a filing: "10000001-cs01-2025-03-20.pdf".
func fileName(number, formType, date string) string {
	var b strings.Builder
	b.WriteString(number)
	for _, part := range []string{strings.ToLower(formType), date} {
		part = strings.Map(func(r rune) rune {
			if r == '-' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
				return r
			}
			return -1
		}, part)
		if part != "" {
			b.WriteString("-" + part)
		}
	}
	b.WriteString(".pdf")
	return b.String()
}

// OpenFiling fetches the PDF of a filing of a company of country. For
// Companies House it uses the Document API: the metadata at the filing's
// link, then its content with Accept: application/pdf, whose 302 points at
// a pre-signed storage URL that is fetched without credentials. The
// returned reader yields the PDF; it fails if the content does not start
// with %PDF- or exceeds 50 MiB. Closing it releases the connection. A
// country without documents (IE) is a plain error: its Filings are always
// empty.
func (r *Registry) OpenFiling(ctx context.Context, country string, f onboarding.Filing) (io.ReadCloser, error) {
	a, err := r.adapters.of(country)
	if err != nil {
		return nil, err
	}
	if a.openFiling == nil {
		return nil, errNotOffered(country, "documents")
	}
	return a.openFiling(ctx, f)
}

// openFiling opens the document of f, one of filings' results.
func (c *companiesHouse) openFiling(ctx context.Context, f onboarding.Filing) (io.ReadCloser, error) {
	return c.openDocument(ctx, f.Document)
}

func (c *companiesHouse) openDocument(ctx context.Context, metadataURL string) (io.ReadCloser, error) {
	metaURL, err := c.trusted(metadataURL)
	if err != nil {
		return nil, err
	}
	r, err := c.getURL(ctx, metaURL, "application/json", true)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, c.unexpectedStatus(metaURL.Path, r)
	}
	var meta chDocumentMetadata
	if err := json.Unmarshal(r.body, &meta); err != nil {
		return nil, c.failed(metaURL.Path, err)
	}
	if len(meta.Resources) > 0 {
		if _, ok := meta.Resources["application/pdf"]; !ok {
			return nil, c.failed(metaURL.Path, errors.New("the document has no application/pdf resource"))
		}
	}
	contentLink := meta.Links.Document
	if contentLink == "" {
		contentLink = strings.TrimSuffix(metaURL.String(), "/") + "/content"
	}
	contentURL, err := c.trusted(contentLink)
	if err != nil {
		return nil, err
	}
	if err := c.wait(ctx, contentURL.Path); err != nil {
		return nil, err
	}
	// The content, its redirect and the download share one time limit,
	// released when the caller closes the reader.
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	rc, err := c.fetchContent(ctx, contentURL)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{ReadCloser: rc, cancel: cancel}, nil
}

// fetchContent asks for a document's content and follows its redirect to
// the storage host without credentials.
func (c *companiesHouse) fetchContent(ctx context.Context, contentURL *url.URL) (io.ReadCloser, error) {
	resp, err := c.send(ctx, contentURL, "application/pdf", true)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		location := resp.Header.Get("Location")
		loc, err := contentURL.Parse(location)
		drain(resp)
		if location == "" || err != nil || (loc.Scheme != "https" && loc.Scheme != "http") || loc.Host == "" {
			return nil, c.failed(contentURL.Path, fmt.Errorf("redirect to %q", resp.Header.Get("Location")))
		}
		// The pre-signed storage URL carries its own authorisation: our
		// credentials must not go there.
		if resp, err = c.send(ctx, loc, "application/pdf", false); err != nil {
			return nil, err
		}
		return c.pdfBody(loc.Host+loc.Path, resp)
	default:
		return c.pdfBody(contentURL.Path, resp)
	}
}

// trusted parses a Document API link and checks that it is a Companies
// House URL, so that credentials never go to a host named in an answer.
func (c *companiesHouse) trusted(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return nil, c.failed("document", errors.New("unusable document link"))
	}
	host := u.Hostname()
	switch {
	case host == c.base.Hostname() && u.Scheme == c.base.Scheme:
	case u.Scheme == "https" && (host == chDocumentHost || strings.HasSuffix(host, "."+chDocumentHost)):
	default:
		// Credentials go over https to Companies House, or to the
		// configured base URL (a proxy or a test double), and nowhere else.
		return nil, c.failed("document", fmt.Errorf("document link %q is not an https Companies House URL", u.Redacted()))
	}
	return u, nil
}

// pdfBody checks a document answer and returns its body as a capped reader
// that must start with the PDF signature.
func (c *companiesHouse) pdfBody(where string, resp *http.Response) (io.ReadCloser, error) {
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, c.unexpectedStatus(where, &response{status: resp.StatusCode, header: resp.Header, body: body})
	}
	if resp.ContentLength > maxDocument {
		resp.Body.Close()
		return nil, c.failed(where, fmt.Errorf("document of %d bytes is over the %d byte limit", resp.ContentLength, maxDocument))
	}
	br := bufio.NewReader(resp.Body)
	head, err := br.Peek(len(pdfMagic))
	if err != nil || !bytes.Equal(head, pdfMagic) {
		resp.Body.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, c.unavailable(where, err)
		}
		return nil, c.failed(where, fmt.Errorf("content is not a PDF (Content-Type %q)", resp.Header.Get("Content-Type")))
	}
	return &documentReader{r: br, body: resp.Body, left: maxDocument, c: c, where: where}, nil
}

var pdfMagic = []byte("%PDF-")

// documentReader reads a document body, failing past maxDocument bytes and
// classifying read errors as the registry being unavailable (a dropped
// connection is worth retrying).
type documentReader struct {
	r     io.Reader
	body  io.Closer
	left  int64
	c     *companiesHouse
	where string
}

func (d *documentReader) Read(p []byte) (int, error) {
	if int64(len(p)) > d.left+1 {
		p = p[:d.left+1]
	}
	n, err := d.r.Read(p)
	d.left -= int64(n)
	if d.left < 0 {
		return 0, d.c.failed(d.where, fmt.Errorf("document is over the %d byte limit", maxDocument))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return n, d.c.unavailable(d.where, err)
	}
	return n, err
}

func (d *documentReader) Close() error { return d.body.Close() }

// cancelOnClose releases a download's context when its reader is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// drain discards a little of an unwanted body so the connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
}
