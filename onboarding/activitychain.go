package onboarding

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// The hash chain of an activity log (docs/api.md). Each subject (an
// application or an RFI request) has one log, and each entry's hash
// covers the hash of the entry before it and the entry itself:
//
//	hash = hex(SHA-256(prev || canonical))
//
// prev is the previous entry's hash as 64 lower-case hex digits; the first
// entry's prev is the log's start, hex(SHA-256(subject id)), the subject's
// id in its canonical text form (lower-case UUID), which binds a log to
// its subject. canonical is the entry's canonical JSON: the entry exactly
// as the activity API returns it, without its "hash" member, serialised
// by RFC 8785 (JSON Canonicalization Scheme). For these entries, which
// hold only objects, arrays, strings and null, that is:
//
//   - object members sorted by key (the keys are ASCII, so byte order is
//     UTF-16 order): action, actor, at, detail, fields, id; actor's email,
//     id, name, type, each present only when non-empty;
//   - no whitespace anywhere;
//   - strings in double quotes, escaping only '"' as \", '\' as \\, and
//     the control characters U+0000–U+001F as \b, \t, \n, \f, \r or
//     \u00xx (lower-case hex); every other character as itself in UTF-8;
//   - "detail" null when the entry has none, "fields" an array (possibly
//     empty).
//
// For example, an entry with no fields and no detail:
//
//	{"action":"application.created","actor":{"id":"k1","name":"ci","type":"api_key"},"at":"2026-11-21T09:30:00.000Z","detail":null,"fields":[],"id":"act_01KAJ6F4G0000000000000000A"}
//
// A partner can check the entries it reads: take each entry, drop "hash",
// canonicalise it with any RFC 8785 library, and hash it after the
// previous entry's hash. What the API does not show (the sub-millisecond
// digits of "at") is not covered.

// ActivityChainStart is the prev of the first entry of subjectID's log.
func ActivityChainStart(subjectID string) string {
	sum := sha256.Sum256([]byte(subjectID))
	return hex.EncodeToString(sum[:])
}

// ActivityHash is the hash of e chained after prev (not e.Prev, so that
// a verifier can chain an entry after what it found before it).
func ActivityHash(prev string, e *LoggedActivity) string {
	v := e.View()
	b := appendCanonicalActivity(append(make([]byte, 0, len(prev)+320), prev...), &v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CanonicalActivityJSON is v's canonical JSON: the text its hash covers.
func CanonicalActivityJSON(v *ActivityEntryView) []byte {
	return appendCanonicalActivity(nil, v)
}

// appendCanonicalActivity appends v's canonical JSON (without v.Hash) to b.
func appendCanonicalActivity(b []byte, v *ActivityEntryView) []byte {
	b = append(b, `{"action":`...)
	b = appendJSONString(b, v.Action)
	b = append(b, `,"actor":{`...)
	sep := false
	for _, m := range [...]struct{ key, value string }{
		{"email", v.Actor.Email}, {"id", v.Actor.ID}, {"name", v.Actor.Name}, {"type", v.Actor.Type},
	} {
		if m.value == "" {
			continue
		}
		if sep {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		b = appendJSONString(b, m.value)
		sep = true
	}
	b = append(b, `},"at":`...)
	b = appendJSONString(b, v.At)
	b = append(b, `,"detail":`...)
	if v.Detail == nil {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, *v.Detail)
	}
	b = append(b, `,"fields":[`...)
	for i, f := range v.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f)
	}
	b = append(b, `],"id":`...)
	b = appendJSONString(b, v.ID)
	return append(b, '}')
}

// appendJSONString appends s as an RFC 8785 string. A byte of s that is
// not UTF-8 is written as U+FFFD, as encoding/json stores it, so an entry
// hashes the same before and after its round trip through the store.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if r < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
}
