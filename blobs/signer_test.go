package blobs_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"onboard/blobs"
	"onboard/onboarding"
)

var testKey = bytes.Repeat([]byte("k"), blobs.MinKeySize)

// t0 is the test clock's start: a whole second, so that expiries are exact.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for a Signer.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newSigner(t testing.TB, c *clock) *blobs.Signer {
	t.Helper()
	s, err := blobs.NewSigner(testKey, c.now)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return s
}

// splitPath parses a signed path into its id and query.
func splitPath(t *testing.T, p string) (string, url.Values) {
	t.Helper()
	u, err := url.Parse(p)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", p, err)
	}
	id, ok := strings.CutPrefix(u.Path, "/files/")
	if !ok || u.Scheme != "" || u.Host != "" {
		t.Fatalf("signed path %q does not start with /files/", p)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("query of %q: %v", p, err)
	}
	return id, q
}

func TestNewSigner(t *testing.T) {
	for _, n := range []int{0, 16, blobs.MinKeySize - 1} {
		if _, err := blobs.NewSigner(make([]byte, n), nil); err == nil {
			t.Errorf("NewSigner(%d-byte key) succeeded; want an error", n)
		}
	}
	// A nil clock means time.Now; the key is copied.
	key := bytes.Clone(testKey)
	s, err := blobs.NewSigner(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	key[0] ^= 0xff
	id := uuid.NewString()
	gotID, q := splitPath(t, s.SignedLink("", id, onboarding.Download{FileName: "a.pdf"}, time.Minute))
	if _, err := s.Verify("GET", gotID, q); err != nil {
		t.Errorf("Verify of a fresh link with the real clock: %v", err)
	}
}

func TestSignedLinkFormat(t *testing.T) {
	c := &clock{t0}
	s := newSigner(t, c)
	id := uuid.NewString()
	d := onboarding.Download{FileName: "Fáilte – a&b=c+d%20 ?.pdf", ContentType: "application/pdf; charset=x", Inline: true}
	p := s.SignedLink("", id, d, 15*time.Minute)

	u, err := url.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/files/"+id {
		t.Errorf("path = %q; want /files/%s", u.Path, id)
	}
	q := u.Query()
	// The query is exactly what url.Values.Encode makes: sorted and escaped.
	if u.RawQuery != q.Encode() {
		t.Errorf("raw query = %q\nwant url.Values encoding %q", u.RawQuery, q.Encode())
	}
	sig := q.Get("signature")
	if raw, err := base64.RawURLEncoding.DecodeString(sig); err != nil || len(raw) != 32 {
		t.Errorf("signature %q is not 32 bytes of unpadded base64url (%v)", sig, err)
	}
	want := url.Values{
		"disposition": {"inline"},
		"expires":     {strconv.FormatInt(t0.Add(15*time.Minute).Unix(), 10)},
		"filename":    {d.FileName},
		"type":        {d.ContentType},
		"signature":   {sig},
	}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if strings.Contains(p, "–") || strings.Contains(p, " ") {
		t.Errorf("signed path %q is not fully escaped", p)
	}
	// With a base, the link is the base followed by the same path.
	if got := s.SignedLink("https://onboard.example", id, d, 15*time.Minute); got != "https://onboard.example"+p {
		t.Errorf("with a base: %q, want %q", got, "https://onboard.example"+p)
	}
}

func TestSignedLinkRoundTrip(t *testing.T) {
	downloads := []onboarding.Download{
		{FileName: "report.pdf", ContentType: "application/pdf"},
		{FileName: "report.pdf", ContentType: "application/pdf", Inline: true},
		{FileName: "Fáilte – report.pdf", ContentType: "application/pdf"},
		{FileName: `a&b=c+d%20"q" ?#x.pdf`, ContentType: "image/png"},
		{},
		{FileName: "x", ContentType: ""},
		{FileName: strings.Repeat("long name ", 50), ContentType: "application/octet-stream"},
	}
	c := &clock{t0}
	s := newSigner(t, c)
	for _, d := range downloads {
		id := uuid.NewString()
		gotID, q := splitPath(t, s.SignedLink("", id, d, time.Hour))
		if gotID != id {
			t.Errorf("path id = %q; want %q", gotID, id)
		}
		got, err := s.Verify("GET", gotID, q)
		if err != nil {
			t.Errorf("Verify(SignedLink(%+v)): %v", d, err)
			continue
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("Verify returned another download (-want +got):\n%s", diff)
		}
	}
}

func TestVerify(t *testing.T) {
	const ttl = 10 * time.Minute
	id := uuid.NewString()
	other := uuid.NewString()
	d := onboarding.Download{FileName: "report.pdf", ContentType: "application/pdf"}
	expires := t0.Add(ttl)

	set := func(key, value string) func(url.Values) {
		return func(q url.Values) { q.Set(key, value) }
	}
	// flipLast changes the signature's last character to another that
	// decodes to the same 32 bytes (its two low bits are unused).
	flipLast := func(q url.Values) {
		sig := q.Get("signature")
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		i := strings.IndexByte(alphabet, sig[len(sig)-1])
		q.Set("signature", sig[:len(sig)-1]+string(alphabet[i^1]))
	}

	tests := []struct {
		name   string
		method string               // default GET
		id     string               // default id
		edit   func(q url.Values)   // changes the signed query
		at     time.Time            // the clock when verifying; default t0
		signer func() *blobs.Signer // default the signing Signer
		ok     bool
	}{
		{name: "valid", ok: true},
		{name: "valid just before expiry", at: expires.Add(-time.Nanosecond), ok: true},
		{name: "valid exactly at expiry", at: expires, ok: true},
		{name: "expired one nanosecond after expiry", at: expires.Add(time.Nanosecond)},
		{name: "expired one second after expiry", at: expires.Add(time.Second)},
		{name: "expired long ago", at: expires.Add(24 * time.Hour)},
		{name: "unknown extra parameter is ignored", edit: set("utm_source", "mail"), ok: true},

		{name: "tampered signature", edit: func(q url.Values) {
			sig := []byte(q.Get("signature"))
			if sig[0] == 'A' {
				sig[0] = 'B'
			} else {
				sig[0] = 'A'
			}
			q.Set("signature", string(sig))
		}},
		{name: "non-canonical spelling of the signature", edit: flipLast},
		{name: "signature with padding", edit: func(q url.Values) { q.Set("signature", q.Get("signature")+"=") }},
		{name: "signature truncated", edit: func(q url.Values) { q.Set("signature", q.Get("signature")[:42]) }},
		{name: "signature in standard base64", edit: func(q url.Values) {
			raw, _ := base64.RawURLEncoding.DecodeString(q.Get("signature"))
			q.Set("signature", base64.StdEncoding.EncodeToString(raw))
		}},
		{name: "garbled signature", edit: set("signature", "!!!not base64!!!")},
		{name: "empty signature", edit: set("signature", "")},
		{name: "missing signature", edit: func(q url.Values) { q.Del("signature") }},
		{name: "signature twice", edit: func(q url.Values) { q.Add("signature", q.Get("signature")) }},
		{name: "other key", signer: func() *blobs.Signer {
			s, err := blobs.NewSigner(bytes.Repeat([]byte("o"), 32), (&clock{t0}).now)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},

		{name: "tampered id", id: other},
		{name: "upper-case id", id: strings.ToUpper(id)},
		{name: "invalid id", id: "../" + id},
		{name: "other method", method: "POST"},
		{name: "HEAD must be verified as GET", method: "HEAD"},

		{name: "tampered disposition", edit: set("disposition", "inline")},
		{name: "unknown disposition", edit: set("disposition", "form-data")},
		{name: "missing disposition", edit: func(q url.Values) { q.Del("disposition") }},
		{name: "tampered filename", edit: set("filename", "invoice.pdf")},
		{name: "filename emptied", edit: set("filename", "")},
		{name: "missing filename", edit: func(q url.Values) { q.Del("filename") }},
		{name: "filename twice", edit: func(q url.Values) { q.Add("filename", "evil.html") }},
		{name: "tampered type", edit: set("type", "text/html")},
		{name: "missing type", edit: func(q url.Values) { q.Del("type") }},

		{name: "tampered expiry", edit: set("expires", strconv.FormatInt(expires.Unix()+3600, 10))},
		{name: "malformed expiry", edit: set("expires", "soon")},
		{name: "empty expiry", edit: set("expires", "")},
		{name: "missing expiry", edit: func(q url.Values) { q.Del("expires") }},
		{name: "expiry with plus sign", edit: set("expires", "+"+strconv.FormatInt(expires.Unix(), 10))},
		{name: "expiry with leading zero", edit: set("expires", "0"+strconv.FormatInt(expires.Unix(), 10))},
		{name: "expiry in exponent form", edit: set("expires", "1e10")},
		{name: "negative expiry", edit: set("expires", "-1")},
		{name: "expiry overflowing int64", edit: set("expires", "99999999999999999999")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t0}
			s := newSigner(t, c)
			_, q := splitPath(t, s.SignedLink("", id, d, ttl))
			if tt.edit != nil {
				tt.edit(q)
			}
			method, vid := "GET", id
			if tt.method != "" {
				method = tt.method
			}
			if tt.id != "" {
				vid = tt.id
			}
			if !tt.at.IsZero() {
				c.t = tt.at
			}
			if tt.signer != nil {
				s = tt.signer()
				c.t = t0
			}
			got, err := s.Verify(method, vid, q)
			if tt.ok {
				if err != nil {
					t.Fatalf("Verify: %v; want success", err)
				}
				if diff := cmp.Diff(d, got); diff != "" {
					t.Errorf("download (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, blobs.ErrInvalidLink) {
				t.Fatalf("Verify = %+v, %v; want an error wrapping ErrInvalidLink", got, err)
			}
			if got != (onboarding.Download{}) {
				t.Errorf("Verify returned %+v with its error; want the zero Download", got)
			}
		})
	}
}

// TestExpiryTruncatedToSecond documents that expires is now+ttl rounded
// down to the second: a link never outlives its ttl, and may end up to a
// second sooner.
func TestExpiryTruncatedToSecond(t *testing.T) {
	start := t0.Add(700 * time.Millisecond)
	c := &clock{start}
	s := newSigner(t, c)
	id := uuid.NewString()
	_, q := splitPath(t, s.SignedLink("", id, onboarding.Download{}, time.Minute))
	if got, want := q.Get("expires"), strconv.FormatInt(t0.Add(time.Minute).Unix(), 10); got != want {
		t.Errorf("expires = %s; want %s (start+ttl truncated)", got, want)
	}
	c.t = t0.Add(time.Minute) // the expiry instant: still valid
	if _, err := s.Verify("GET", id, q); err != nil {
		t.Errorf("at the expiry second: %v; want valid", err)
	}
	c.t = start.Add(time.Minute) // start+ttl, 0.7 s after the expiry second
	if _, err := s.Verify("GET", id, q); !errors.Is(err, blobs.ErrInvalidLink) {
		t.Errorf("at start+ttl: %v; want ErrInvalidLink", err)
	}
}

func BenchmarkSignedLink(b *testing.B) {
	s := newSigner(b, &clock{t0})
	id := uuid.NewString()
	d := onboarding.Download{FileName: "Fáilte – report.pdf", ContentType: "application/pdf"}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.SignedLink("", id, d, time.Hour)
	}
}

func BenchmarkVerify(b *testing.B) {
	s := newSigner(b, &clock{t0})
	id := uuid.NewString()
	d := onboarding.Download{FileName: "Fáilte – report.pdf", ContentType: "application/pdf"}
	u, err := url.Parse(s.SignedLink("", id, d, time.Hour))
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify("GET", id, q); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzSignedLink checks, for any file name and content type, that the query
// is exactly url.Values' encoding and that the link verifies to the same
// download.
func FuzzSignedLink(f *testing.F) {
	f.Add("report.pdf", "application/pdf", false)
	f.Add("Fáilte – report.pdf", "image/png", true)
	f.Add("a&b=c+d%20 ?#;/\\\"'\x00\xff", "text/plain; charset=utf-8", false)
	f.Add("", "", true)
	s, err := blobs.NewSigner(testKey, (&clock{t0}).now)
	if err != nil {
		f.Fatal(err)
	}
	id := uuid.NewString()
	f.Fuzz(func(t *testing.T, name, ctype string, inline bool) {
		d := onboarding.Download{FileName: name, ContentType: ctype, Inline: inline}
		p := s.SignedLink("", id, d, time.Hour)
		u, err := url.Parse(p)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", p, err)
		}
		q := u.Query()
		if u.RawQuery != q.Encode() {
			t.Fatalf("raw query %q differs from url.Values encoding %q", u.RawQuery, q.Encode())
		}
		got, err := s.Verify("GET", id, q)
		if err != nil {
			t.Fatalf("Verify(SignedLink(%+v)): %v", d, err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("download (-want +got):\n%s", diff)
		}
	})
}
