package blobs

import (
	"strings"
	"unicode/utf8"

	"onboard/onboarding"
)

// defaultFileName is offered when a download has no usable file name.
const defaultFileName = "download"

// ContentDisposition returns the Content-Disposition header value (RFC 6266)
// for d:
//
//	attachment; filename="ascii fallback"; filename*=UTF-8''percent-encoded
//
// or the same with inline. The name ends in an extension of d's type
// (onboarding.TypedFileName). Only the base name is kept (anything up to the
// last / or \ is dropped); control characters become "_"; a name that is
// empty or only dots and spaces becomes "download". The quoted fallback
// replaces every non-ASCII character, quote and backslash with "_";
// filename* carries the exact name, which browsers prefer.
func ContentDisposition(d onboarding.Download) string {
	name := onboarding.TypedFileName(cleanFileName(d.FileName), d.ContentType)
	disp := dispAttachment
	if d.Inline {
		disp = dispInline
	}
	var b strings.Builder
	b.Grow(len(disp) + len(`; filename=""; filename*=UTF-8''`) + 4*len(name))
	b.WriteString(disp)
	b.WriteString(`; filename="`)
	for _, r := range name {
		if r >= utf8.RuneSelf || r == '"' || r == '\\' {
			b.WriteByte('_')
		} else {
			b.WriteByte(byte(r))
		}
	}
	b.WriteString(`"; filename*=UTF-8''`)
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		if c := name[i]; isAttrChar(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}

// cleanFileName returns the base name of name as valid UTF-8 with control
// characters replaced by "_", or "download" when nothing usable is left.
func cleanFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return '_'
		}
		return r
	}, name)
	if strings.Trim(name, ". ") == "" {
		return defaultFileName
	}
	return name
}

// isAttrChar reports whether c may appear unescaped in an RFC 8187
// ext-value (attr-char).
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
