package config

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// A value of the wrong TOML type for its key (a string for an integer) stops
// the decoder at the first one. Load therefore decodes the file without
// a destination first, checks every value against the Config type here,
// takes out the ones it cannot hold, and decodes the rest: Validate then
// reports the wrong types with every other problem of the file.

// badType is a value of the file whose key cannot hold its TOML type.
type badType struct {
	path []any  // the key: table keys (string) and array indices (int)
	want string // what the key holds, such as "an integer"
	got  string // the value's TOML type, such as "a string"
	line int    // line of the file on which the value ends; 0: not found
}

// String is the problem as Validate reports it, naming the key and its line.
func (b badType) String() string {
	msg := fmt.Sprintf("%s must be %s, not %s", keyName(b.path), b.want, b.got)
	if b.line > 0 {
		msg += fmt.Sprintf(" (line %d)", b.line)
	}
	return msg
}

// keyName writes path as problems name keys: limits.max_json_bytes,
// organizations[1].configs[0].form, webhooks.retry_schedule[2].
func keyName(path []any) string {
	var b strings.Builder
	for i, e := range path {
		switch e := e.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", e)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, e)
		}
	}
	return b.String()
}

// takeBadTypes deletes from values (the file text, decoded without a
// destination) every value that dst's type cannot hold, and returns them
// in the order of the file.
func takeBadTypes(text string, values map[string]any, dst any) []badType {
	var bad []badType
	checkTable(values, reflect.TypeOf(dst).Elem(), nil, &bad)
	if len(bad) == 0 {
		return nil
	}
	findLines(text, bad)
	slices.SortStableFunc(bad, func(a, b badType) int {
		if a.line != b.line {
			if a.line == 0 || b.line == 0 { // not found: last
				return b.line - a.line
			}
			return a.line - b.line
		}
		return strings.Compare(keyName(a.path), keyName(b.path))
	})
	return bad
}

// checkTable checks the values of a table against struct type t, whose
// fields the decoder fills as it does (a toml tag, or else a name that
// matches ignoring case), and deletes those t cannot hold. Keys that match
// no field are left for the decoder to report as undecoded.
func checkTable(values map[string]any, t reflect.Type, path []any, bad *[]badType) {
	for key, v := range values {
		f, ok := tomlField(t, key)
		if !ok {
			continue
		}
		if !checkValue(v, f.Type, append(slices.Clip(path), key), bad) {
			delete(values, key)
		}
	}
}

// tomlField is the field of struct type t that the decoder fills from key.
func tomlField(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded *reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded = &f
		}
	}
	if folded == nil {
		return reflect.StructField{}, false
	}
	return *folded, true
}

// textUnmarshaler is the interface of types written as text, such as Duration.
var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// maxExactFloat is the largest integer a float64 holds exactly: the decoder
// refuses a larger one for a float key.
const maxExactFloat = 1 << 53

// checkValue reports whether a value of Go type t can hold v, the value at
// path; when it cannot, it appends the problem to bad. A table's or an array
// of tables' wrong values are deleted inside it, and it is kept.
func checkValue(v any, t reflect.Type, path []any, bad *[]badType) bool {
	want := ""
	switch {
	case reflect.PointerTo(t).Implements(textUnmarshaler):
		// Any value but a table or an array is given to UnmarshalText as
		// text (Duration then notes text that is not a duration).
		if _, isTable := v.(map[string]any); !isTable && !isArray(v) {
			return true
		}
		want = `a duration such as "10s"`
	case t.Kind() == reflect.String:
		if _, ok := v.(string); ok {
			return true
		}
		want = "a string"
	case t.Kind() == reflect.Bool:
		if _, ok := v.(bool); ok {
			return true
		}
		want = "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		if n, ok := v.(int64); ok && !reflect.New(t).Elem().OverflowInt(n) {
			return true
		}
		want = "an integer"
	case t.Kind() == reflect.Float64:
		want = "a number"
		switch n := v.(type) {
		case float64:
			return true
		case int64:
			if n >= -maxExactFloat && n <= maxExactFloat {
				return true
			}
			want = "a number from -2^53 to 2^53"
		}
	case t.Kind() == reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			checkTable(m, t, path, bad)
			return true
		}
		want = "a table"
	case t.Kind() == reflect.Slice:
		if isArray(v) {
			return checkArray(reflect.ValueOf(v), t.Elem(), path, bad)
		}
		want = "an array"
		if t.Elem().Kind() == reflect.Struct {
			want = "an array of tables"
		}
	default:
		return true // no such key in Config: the decoder reports it
	}
	*bad = append(*bad, badType{path: path, want: want, got: tomlType(v)})
	return false
}

// checkArray reports whether every element of the array arr can be held as
// elem, noting each one that cannot.
func checkArray(arr reflect.Value, elem reflect.Type, path []any, bad *[]badType) bool {
	ok := true
	for i := range arr.Len() {
		if !checkValue(arr.Index(i).Interface(), elem, append(slices.Clip(path), i), bad) {
			ok = false
		}
	}
	return ok
}

// isArray reports whether v is a TOML array as the decoder gives one: a
// list of values or of tables.
func isArray(v any) bool {
	switch v.(type) {
	case []any, []map[string]any:
		return true
	}
	return false
}

// tomlType names the TOML type of v, a value as the decoder gives it.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date or time"
	case map[string]any:
		return "a table"
	default:
		return "an array"
	}
}

// findLines sets the line of each bad value: the first line of text such
// that the lines up to it decode and hold the value. That is the key's line,
// or for a value written over several lines (an array), the line it ends on.
func findLines(text string, bad []badType) {
	lines := strings.SplitAfter(text, "\n")
	left := len(bad)
	for n := 1; n <= len(lines) && left > 0; n++ {
		var prefix map[string]any
		if _, err := toml.Decode(strings.Join(lines[:n], ""), &prefix); err != nil {
			continue // the lines end inside a value
		}
		for i := range bad {
			if bad[i].line == 0 && hasPath(prefix, bad[i].path) {
				bad[i].line, left = n, left-1
			}
		}
	}
}

// hasPath reports whether the decoded table v holds a value at path.
func hasPath(v any, path []any) bool {
	for _, e := range path {
		switch e := e.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[e]; !ok {
				return false
			}
		case int:
			arr := reflect.ValueOf(v)
			if !isArray(v) || e >= arr.Len() {
				return false
			}
			v = arr.Index(e).Interface()
		}
	}
	return true
}

// encodeTOML writes values, a decoded file, back as TOML text.
func encodeTOML(values map[string]any) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(values); err != nil {
		return "", err
	}
	return b.String(), nil
}
