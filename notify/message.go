package notify

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxHeaderLine is the line length RFC 5322 recommends; headers are folded
// at spaces to stay under it where they can.
const maxHeaderLine = 78

// parseFrom validates the configured sender, which may carry a display name
// ("Onboarding <no-reply@example.com>").
func parseFrom(from string) (*mail.Address, error) {
	if strings.TrimSpace(from) == "" {
		return nil, errors.New("notify: mail from address is empty")
	}
	if strings.ContainsAny(from, "\r\n\x00") {
		return nil, errors.New("notify: mail from address contains a line break")
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("notify: mail from address %q is not valid: %w", from, err)
	}
	return addr, nil
}

// checkHeader refuses values that would let a caller inject header lines.
func checkHeader(field, value string) error {
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("notify: message %s contains a line break or NUL", field)
	}
	return nil
}

// recipient validates the header-bound parts of m and returns the recipient
// as it goes into the To header and the SMTP envelope.
func recipient(m Email) (*mail.Address, error) {
	for _, f := range []struct{ name, value string }{
		{"recipient address", m.To},
		{"recipient name", m.ToName},
		{"subject", m.Subject},
	} {
		if err := checkHeader(f.name, f.value); err != nil {
			return nil, err
		}
	}
	if invisible(m.To) {
		return nil, fmt.Errorf("notify: recipient address %+q contains a format, separator or private-use character", m.To)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("notify: recipient address %q is not valid: %w", m.To, err)
	}
	if to.Name != "" {
		return nil, fmt.Errorf("notify: recipient address %q must be an address only; put the name in ToName", m.To)
	}
	return &mail.Address{Name: m.ToName, Address: to.Address}, nil
}

// invisible reports whether an address has a character that would go
// into the To header as raw bytes yet not be seen as written: a format
// character (Unicode Cf, such as the bidirectional U+202E), a space or
// separator (Z) or a private-use character (Co). The domain refuses such
// addresses before they are stored; this keeps any that reach a message
// out of its headers. An address of visible non-ASCII letters is written
// as UTF-8 (RFC 6532), as an address cannot be encoded otherwise.
func invisible(addr string) bool {
	for _, r := range addr {
		if r >= utf8.RuneSelf && unicode.In(r, unicode.Cf, unicode.Z, unicode.Co) {
			return true
		}
	}
	return false
}

// newMessageID returns a random Message-ID in the sender's domain.
func newMessageID(from *mail.Address) string {
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	return "<" + randomHex(16) + "@" + domain + ">"
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// compose validates m and builds its RFC 5322 bytes with a fresh Message-ID.
// It is the one message builder both transports use.
func compose(from *mail.Address, m Email, now time.Time) (*mail.Address, []byte, error) {
	to, err := recipient(m)
	if err != nil {
		return nil, nil, err
	}
	return to, formatMessage(from, to, m.Subject, m.Text, now, newMessageID(from)), nil
}

// formatMessage renders a plain-text message with CRLF line endings, non-ASCII
// header text as RFC 2047 encoded words and the body as quoted-printable.
// Header values must already be free of CR and LF (see recipient).
func formatMessage(from, to *mail.Address, subject, text string, date time.Time, messageID string) []byte {
	var b bytes.Buffer
	writeHeader(&b, "From", from.String())
	writeHeader(&b, "To", to.String())
	writeHeader(&b, "Subject", mime.QEncoding.Encode("utf-8", subject))
	writeHeader(&b, "Date", date.Format(time.RFC1123Z))
	writeHeader(&b, "Message-ID", messageID)
	writeHeader(&b, "MIME-Version", "1.0")
	writeHeader(&b, "Content-Type", "text/plain; charset=UTF-8")
	writeHeader(&b, "Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")

	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	qp := quotedprintable.NewWriter(&b) // text mode: \n and \r\n become CRLF
	_, _ = qp.Write([]byte(text))       // writes to a bytes.Buffer cannot fail
	_ = qp.Close()
	return b.Bytes()
}

// writeHeader writes one header field, folding it before a space when a line
// would pass maxHeaderLine (a word too long for any line stays whole). The
// encoded words of non-ASCII text are separated by spaces, so long subjects
// and names fold too; decoders ignore the fold between adjacent encoded words.
func writeHeader(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(":")
	lineLen := len(name) + 1
	for _, word := range strings.Split(value, " ") {
		if word != "" && lineLen > 1 && lineLen+1+len(word) > maxHeaderLine {
			b.WriteString("\r\n")
			lineLen = 0
		}
		b.WriteString(" ")
		b.WriteString(word)
		lineLen += 1 + len(word)
	}
	b.WriteString("\r\n")
}
