package blobs_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
	"onboard/onboarding"
)

// FuzzVerify checks Signer.Verify with any method, blob id and query
// string, starting from genuine links. It must not panic, every refusal
// wraps ErrInvalidLink, and the only requests it accepts are the genuine
// links themselves (by their parameters: the query may spell them in
// another order or escaping): a GET of the blob the link was made for,
// answered as the link says.
func FuzzVerify(f *testing.F) {
	s := newSigner(f, &clock{t0})
	const id = "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
	genuine := map[string]onboarding.Download{}
	for _, d := range []onboarding.Download{
		{FileName: "report.pdf", ContentType: "application/pdf"},
		{FileName: "Fáilte – photo.png", ContentType: "image/png", Inline: true},
		{FileName: "a&b=c+d%20 ?#;", ContentType: ""},
	} {
		p := s.SignedLink("", id, d, time.Hour)
		q := p[strings.IndexByte(p, '?')+1:]
		genuine[mustParseQuery(f, q).Get("signature")] = d
		f.Add("GET", id, q)
		f.Add("HEAD", id, q)
		f.Add("GET", strings.ToUpper(id), q)
		f.Add("GET", id, q+"&signature=x")
		f.Add("GET", id, strings.Replace(q, "expires=", "expires=0", 1))
		f.Add("GET", id, strings.Replace(q, "attachment", "inline", 1))
	}
	f.Add("GET", "../../etc/passwd", "")
	f.Add("", "", "signature=&expires=-1&disposition=inline&filename=&type=")
	f.Add("GET", id, "expires=99999999999999999999&disposition=inline&filename=a&type=b&signature=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("GET", id, "%zz=1;x")

	f.Fuzz(func(t *testing.T, method, blobID, rawQuery string) {
		q, _ := url.ParseQuery(rawQuery) // a query that does not parse keeps what did
		d, err := s.Verify(method, blobID, q)
		if err != nil {
			if !errors.Is(err, blobs.ErrInvalidLink) {
				t.Fatalf("Verify(%q, %q, %q) = %v, which does not wrap ErrInvalidLink", method, blobID, rawQuery, err)
			}
			if d != (onboarding.Download{}) {
				t.Fatalf("Verify(%q, %q, %q) refused, yet returned %+v", method, blobID, rawQuery, d)
			}
			return
		}
		want, ok := genuine[q.Get("signature")]
		if !ok || method != "GET" || blobID != id {
			t.Fatalf("Verify(%q, %q, %q) accepted a link that was never signed: %+v", method, blobID, rawQuery, d)
		}
		if diff := cmp.Diff(want, d); diff != "" {
			t.Fatalf("Verify(%q, %q, %q) download (-signed +got):\n%s", method, blobID, rawQuery, diff)
		}
	})
}

func mustParseQuery(t testing.TB, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
