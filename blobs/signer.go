package blobs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"onboard/onboarding"
)

// MinKeySize is the least number of bytes a signing key must have.
const MinKeySize = 32

// ErrInvalidLink is wrapped by Verify for every link it refuses: a missing,
// garbled or wrong signature, a link made for another blob or with other
// download parameters, a malformed expiry, or an expired link. Callers
// answer all of them alike; the wrapping message says which it was, for logs.
var ErrInvalidLink = errors.New("invalid or expired download link")

// Query parameters of a signed link.
const (
	paramDisposition = "disposition"
	paramExpires     = "expires"
	paramFileName    = "filename"
	paramSignature   = "signature"
	paramType        = "type"
)

// Values of the disposition parameter.
const (
	dispAttachment = "attachment"
	dispInline     = "inline"
)

// linkContext separates link signatures from anything else the key might
// ever sign; it changes if the signed message's layout does.
const linkContext = "onboard/blobs/link/v1"

// sigLen is the length of an encoded signature: 32 bytes in base64url
// without padding.
const sigLen = 43

// Signer makes and checks expiring download links for blobs. It implements
// onboarding.LinkSigner and is safe for concurrent use.
type Signer struct {
	key []byte
	now func() time.Time
	// macs holds HMAC-SHA256 states keyed with key (*macState), reset
	// between uses: a new one hashes the key's two pads first, which was a
	// third of a link's cost (a get signs one link per document).
	macs sync.Pool
}

var _ onboarding.LinkSigner = (*Signer)(nil)

// NewSigner returns a Signer using key, which must be at least MinKeySize
// bytes, and now as its clock (time.Now when nil). The key is copied.
func NewSigner(key []byte, now func() time.Time) (*Signer, error) {
	if len(key) < MinKeySize {
		return nil, fmt.Errorf("blobs: signing key is %d bytes; at least %d are required", len(key), MinKeySize)
	}
	if now == nil {
		now = time.Now
	}
	s := &Signer{key: append([]byte(nil), key...), now: now}
	s.macs.New = func() any {
		return &macState{mac: hmac.New(sha256.New, s.key), msg: make([]byte, 0, newMessageSize)}
	}
	return s, nil
}

// SignedLink returns base followed by "/files/{id}?...": with the public URL
// as base, a link; with "", the path relative to it. It is a GET download
// of blob id served as d says, valid until now+ttl, truncated to the
// second. The query carries disposition, expires, filename, type and
// signature, sorted by key and escaped as url.Values.Encode does.
func (s *Signer) SignedLink(base, id string, d onboarding.Download, ttl time.Duration) string {
	expires := s.now().Add(ttl).Unix()
	disp := dispAttachment
	if d.Inline {
		disp = dispInline
	}
	var sig [sigLen]byte
	s.sign(sig[:], "GET", id, expires, disp, d.FileName, d.ContentType)

	var b strings.Builder
	b.Grow(len(base) + len("/files/?disposition=attachment&expires=&filename=&signature=&type=") +
		len(id) + 20 + 3*len(d.FileName) + 3*len(d.ContentType) + sigLen)
	b.WriteString(base)
	b.WriteString("/files/")
	b.WriteString(url.PathEscape(id))
	// Keys in sorted order, as url.Values.Encode writes them.
	b.WriteString("?" + paramDisposition + "=")
	b.WriteString(disp)
	b.WriteString("&" + paramExpires + "=")
	var num [20]byte
	b.Write(strconv.AppendInt(num[:0], expires, 10))
	b.WriteString("&" + paramFileName + "=")
	writeQueryEscaped(&b, d.FileName)
	b.WriteString("&" + paramSignature + "=")
	b.Write(sig[:])
	b.WriteString("&" + paramType + "=")
	writeQueryEscaped(&b, d.ContentType)
	return b.String()
}

// writeQueryEscaped writes s to b escaped as url.QueryEscape does (and so
// url.Values.Encode), without building an intermediate string: unreserved
// bytes as they are, space as "+", every other byte as %XX.
func writeQueryEscaped(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
}

// Verify checks a request for blob id, made with method, whose query is q,
// against the link's signature and expiry, and returns how to serve the
// blob. A link is valid up to and including the second its expires names
// (by the Signer's clock) and invalid after it. Every refusal wraps
// ErrInvalidLink. A HEAD request should be verified as "GET".
func (s *Signer) Verify(method, id string, q url.Values) (onboarding.Download, error) {
	var d onboarding.Download
	if !ValidID(id) {
		return d, invalid("malformed blob id")
	}
	sig, ok := single(q, paramSignature)
	if !ok {
		return d, invalid("missing signature")
	}
	disp, ok := single(q, paramDisposition)
	if !ok || (disp != dispAttachment && disp != dispInline) {
		return d, invalid("missing or malformed disposition")
	}
	exp, ok := single(q, paramExpires)
	if !ok {
		return d, invalid("missing expiry")
	}
	expires, err := strconv.ParseInt(exp, 10, 64)
	// Only the canonical decimal form is accepted, so that a link has
	// exactly one spelling.
	var num [20]byte
	if err != nil || expires < 0 || string(strconv.AppendInt(num[:0], expires, 10)) != exp {
		return d, invalid("malformed expiry")
	}
	name, ok := single(q, paramFileName)
	if !ok {
		return d, invalid("missing file name")
	}
	ctype, ok := single(q, paramType)
	if !ok {
		return d, invalid("missing content type")
	}

	var want [sigLen]byte
	s.sign(want[:], method, id, expires, disp, name, ctype)
	// Comparing the encoded forms also refuses non-canonical spellings of
	// the right signature (base64 with different unused trailing bits).
	if !hmac.Equal(want[:], []byte(sig)) {
		return d, invalid("signature mismatch")
	}
	if s.now().After(time.Unix(expires, 0)) {
		return d, invalid("expired")
	}
	return onboarding.Download{FileName: name, ContentType: ctype, Inline: disp == dispInline}, nil
}

// sign writes to dst (sigLen bytes) the encoded signature of a link.
func (s *Signer) sign(dst []byte, method, id string, expires int64, disp, name, ctype string) {
	st := s.macs.Get().(*macState)
	msg := st.msg[:0]
	msg = appendField(msg, linkContext)
	msg = appendField(msg, method)
	msg = appendField(msg, id)
	msg = binary.BigEndian.AppendUint64(msg, uint64(expires))
	msg = appendField(msg, disp)
	msg = appendField(msg, name)
	msg = appendField(msg, ctype)

	st.mac.Reset()
	st.mac.Write(msg)
	base64.RawURLEncoding.Encode(dst, st.mac.Sum(st.sum[:0]))
	if cap(msg) <= maxKeptMessage {
		st.msg = msg // grown for a long file name: kept for the next
	}
	s.macs.Put(st)
}

// macState is an HMAC-SHA256 keyed with the Signer's key and the buffers
// of one signature, reused together: passed to the hash.Hash interface,
// buffers on the stack would escape to the heap, an allocation for each
// link.
type macState struct {
	mac hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

// newMessageSize is the capacity of a new macState's message buffer: the
// signed fields of a link with a file name of about 150 bytes.
const newMessageSize = 256

// maxKeptMessage bounds the message buffers kept for reuse.
const maxKeptMessage = 4 << 10

// appendField appends f to msg preceded by its length, so that the fields
// of the signed message cannot be shifted into one another.
func appendField(msg []byte, f string) []byte {
	msg = binary.AppendUvarint(msg, uint64(len(f)))
	return append(msg, f...)
}

// single returns the only value of key in q; false when it is absent or
// given more than once (which would make the link ambiguous).
func single(q url.Values, key string) (string, bool) {
	v := q[key]
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// invalid returns ErrInvalidLink with the reason for logs.
func invalid(reason string) error {
	return fmt.Errorf("blobs: %w: %s", ErrInvalidLink, reason)
}
