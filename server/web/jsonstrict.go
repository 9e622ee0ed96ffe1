package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"onboard/onboarding"
)

// Strict JSON request bodies. encoding/json keeps the last of two members
// with the same name and matches member names to struct fields without
// regard to case; another parser in front of or behind this service (a
// gateway, a log pipeline, the partner's own) may keep the first and match
// exactly. Such a parser differential lets one body mean two things, so
// every JSON body the API reads goes through CheckJSON (and DecodeJSON) and
// means exactly one thing.

// ErrDuplicateKey is the 400 for a JSON object that names a member twice;
// path locates it, as in "primary_contact.email" or "fields.industry".
func ErrDuplicateKey(path string) *onboarding.Error {
	return onboarding.Errorf(onboarding.KindInvalid, "Invalid JSON body: duplicate key %s", strconv.Quote(onboarding.ClipInput(path)))
}

// ErrNullMember is the 400 for a member given null that may not be
// (DecodeJSON); path locates it, as in "pre_auth" or "primary_contact.name".
func ErrNullMember(path string) *onboarding.Error {
	return onboarding.Errorf(onboarding.KindInvalid, "Invalid JSON body: %s must not be null", onboarding.ClipInput(path))
}

// Refusals of JSON that encoding/json would take but another parser may
// read otherwise, or not at all.
var (
	// ErrJSONNotUTF8: encoding/json replaces bytes that are not UTF-8, and
	// escapes of unpaired UTF-16 surrogates ("\ud800"), with U+FFFD; RFC
	// 8259 requires UTF-8, and other parsers refuse such text or keep it.
	ErrJSONNotUTF8 = &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Invalid JSON body: text must be UTF-8 (no invalid bytes or unpaired surrogates)"}
	// ErrJSONTooDeep: values nested deeper than MaxJSONDepth, which no
	// request needs and which break parsers that recurse (a decision's data
	// is served back in events and webhooks).
	ErrJSONTooDeep = onboarding.Errorf(onboarding.KindInvalid, "Invalid JSON body: nested more than %d levels deep", MaxJSONDepth)
)

// MaxJSONDepth is how deep objects and arrays may nest in a request body.
const MaxJSONDepth = 64

// CheckJSON reports onboarding.ErrInvalidJSON unless body is exactly one valid JSON
// value; ErrJSONNotUTF8 for text that is not UTF-8; ErrJSONTooDeep for
// values nested deeper than MaxJSONDepth; and ErrDuplicateKey when an
// object anywhere in it names a member twice (names compared exactly,
// after unescaping).
func CheckJSON(body []byte) error {
	if !json.Valid(body) {
		return onboarding.ErrInvalidJSON
	}
	if !utf8.Valid(body) || unpairedSurrogate(body) {
		return ErrJSONNotUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number too large for a float64 is still JSON
	if err := checkValue(dec, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return onboarding.ErrInvalidJSON
	}
	return nil
}

// unpairedSurrogate reports whether a string in body, valid JSON, has a
// \u escape of a UTF-16 surrogate that is not half of a pair.
func unpairedSurrogate(body []byte) bool {
	for i := 0; i < len(body); i++ {
		// In valid JSON a backslash is in a string and starts an escape.
		if body[i] != '\\' {
			continue
		}
		if body[i+1] != 'u' {
			i++ // a one-character escape, such as \\
			continue
		}
		r := hex4(body[i+2 : i+6])
		i += 5
		switch {
		case r >= 0xD800 && r <= 0xDBFF: // high: a low one must follow
			if i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
				if lo := hex4(body[i+3 : i+7]); lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
	}
	return false
}

// hex4 is the value of four hexadecimal digits (valid JSON's \u escape).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// checkValue walks the next JSON value of dec, at depth levels of nesting,
// refusing duplicate keys and nesting deeper than MaxJSONDepth.
func checkValue(dec *json.Decoder, path string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return onboarding.ErrInvalidJSON
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth++; depth > MaxJSONDepth {
		return ErrJSONTooDeep
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return onboarding.ErrInvalidJSON
			}
			key, _ := kt.(string)
			p := joinPath(path, key)
			if seen[key] {
				return ErrDuplicateKey(p)
			}
			seen[key] = true
			if err := checkValue(dec, p, depth); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return onboarding.ErrInvalidJSON
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// DecodeJSON decodes a JSON request body into v, a pointer to a struct
// whose fields carry json tags. It runs CheckJSON first. Member names match
// the tags exactly: a member named otherwise ("COUNTRY" for "country") is
// ignored, as unknown members are. An empty body leaves v as it is (an
// empty object: no members); a body that is not an object, null included,
// or a member of the wrong JSON type is onboarding.ErrWrongType naming it.
// A member given null is ErrNullMember unless its field has the tag
// nullable:"true" (`json:"timestamp" nullable:"true"`), as the contract
// marks the members that may be null; a nullable member given null is as
// if absent. Null is never quietly read as false, "" or absent.
func DecodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if err := CheckJSON(body); err != nil {
		return err
	}
	if body[0] != '{' {
		return onboarding.ErrWrongType("", "an object")
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("server: DecodeJSON needs a non-nil pointer, not %T", v)
	}
	return decodeExact(body, rv.Elem(), "")
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// decodeExact decodes raw, one valid JSON value, into rv, matching struct
// members exactly; path names rv in errors.
func decodeExact(raw []byte, rv reflect.Value, path string) error {
	t := rv.Type()
	if string(raw) == "null" {
		if t.Kind() == reflect.Pointer || t == rawMessageType {
			rv.SetZero()
		}
		return nil
	}
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if raw[0] != '{' {
			return onboarding.ErrWrongType(path, "an object")
		}
		if rv.IsNil() {
			rv.Set(reflect.New(t.Elem()))
		}
		return decodeExact(raw, rv.Elem(), path)
	case t.Kind() == reflect.Struct:
		if raw[0] != '{' {
			return onboarding.ErrWrongType(path, "an object")
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return onboarding.ErrInvalidJSON
		}
		for i := range t.NumField() {
			name, ok := jsonName(t.Field(i))
			if !ok {
				continue
			}
			if m, ok := members[name]; ok {
				if string(m) == "null" && !nullable(t.Field(i)) {
					return ErrNullMember(joinPath(path, name))
				}
				if err := decodeExact(m, rv.Field(i), joinPath(path, name)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := json.Unmarshal(raw, rv.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return onboarding.ErrWrongType(path, jsonTypeName(t.Kind()))
		}
		return onboarding.ErrInvalidJSON
	}
	return nil
}

// jsonName is the member name of a struct field: its json tag's name, or
// its Go name; false for unexported fields and those tagged "-".
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// nullable reports whether a struct field's member may be given null: it
// has the tag nullable:"true".
func nullable(f reflect.StructField) bool {
	return f.Tag.Get("nullable") == "true"
}

// jsonTypeName names the JSON type a Go kind decodes from, for onboarding.ErrWrongType.
func jsonTypeName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "a number"
	}
}
