package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// fuzzBody is a request body with a member of each kind DecodeJSON meets
// in the API's bodies: strings, numbers, booleans, arrays, raw members,
// untyped members, a nested object behind a pointer and a map.
type fuzzBody struct {
	Name    string                     `json:"name"`
	Count   int                        `json:"count"`
	On      bool                       `json:"on"`
	Tags    []string                   `json:"tags"`
	Raw     json.RawMessage            `json:"raw" nullable:"true"`
	Any     any                        `json:"any"`
	Contact *fuzzContact               `json:"contact"`
	Fields  map[string]json.RawMessage `json:"fields"`
	Skipped string                     `json:"-"`
}

type fuzzContact struct {
	Email string `json:"email"`
	Inner struct {
		N float64 `json:"n"`
	} `json:"inner"`
}

// FuzzCheckJSON feeds raw bytes to CheckJSON and DecodeJSON. Neither may
// panic; CheckJSON refuses whatever encoding/json finds invalid; and
// whenever encoding/json decodes the body into a struct and CheckJSON
// accepts it, DecodeJSON decodes it into the same struct too (unless a
// member that is not nullable is null), to the same value when no
// member's name differs from a field's only in case.
func FuzzCheckJSON(f *testing.F) {
	for _, seed := range []string{
		``, ` `, `null`, `{}`, `[]`, `1`, `"x"`, `{"name":"a"}`, `{"name":"a","name":"b"}`,
		`{"name":"a","NAME":"b"}`, `{"Name":1}`, `{"n\u0061me":"a","name":"b"}`, `{"a":{"b":1,"b":2}}`,
		`{"a":[{"x":1},{"x":1,"x":2}]}`, `{"count":1.5}`, `{"count":1e400}`, `{"tags":["a",null]}`,
		`{"raw":null}`, `{"raw":[1,{"a":{}}]}`, `{"any":{"k":[true,false,null]}}`,
		`{"contact":{"email":"jane@example.com","inner":{"n":1}}}`, `{"contact":null}`, `{"contact":"x"}`,
		`{"contact":{"inner":null}}`, `{"fields":{"industry":"software","industry":"retail"}}`,
		`{} {}`, `{}x`, `{"a":1,}`, "{\"\xff\":1,\"\xfe\":2}", `{"\ud800":1,"\ufffd":2}`,
		"\ufeff{}", `{"-":1}`, `[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`,
		`{"name":"\ud83d\ude00","tags":["\udc00"]}`, `{"name":"\\ud800"}`,
		strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkErr := CheckJSON(body)
		if !json.Valid(body) && checkErr == nil {
			t.Fatalf("CheckJSON(%q) accepted invalid JSON", body)
		}
		if !utf8.Valid(body) && checkErr == nil {
			t.Fatalf("CheckJSON(%q) accepted text that is not UTF-8", body)
		}
		var strict fuzzBody
		decodeErr := DecodeJSON(body, &strict)
		var e *onboarding.Error
		if decodeErr != nil && !errors.As(decodeErr, &e) {
			t.Fatalf("DecodeJSON(%q) = %v, not an *onboarding.Error", body, decodeErr)
		}
		var loose fuzzBody
		if json.Unmarshal(body, &loose) != nil || checkErr != nil {
			return
		}
		if string(bytes.TrimSpace(body)) == "null" {
			// encoding/json leaves a struct alone for a null body;
			// DecodeJSON refuses it, as it refuses any body that is not
			// an object.
			if decodeErr == nil {
				t.Fatalf("DecodeJSON(%q) accepted a null body", body)
			}
			return
		}
		if decodeErr != nil && strings.HasSuffix(decodeErr.Error(), " must not be null") && bytes.Contains(body, []byte("null")) {
			// encoding/json reads a null member as absent; DecodeJSON
			// refuses it unless the member is tagged nullable.
			return
		}
		if decodeErr != nil {
			t.Fatalf("encoding/json and CheckJSON accept %q, DecodeJSON refuses it: %v", body, decodeErr)
		}
		// Both read the body alike unless a member's name differs from a
		// field's only in case (encoding/json matches it, DecodeJSON does
		// not); a raw member that is null aside (encoding/json keeps the
		// null, DecodeJSON nothing).
		if string(loose.Raw) == "null" {
			loose.Raw = nil
		}
		if !foldedName(body) {
			if diff := cmp.Diff(loose, strict); diff != "" {
				t.Fatalf("%q: encoding/json and DecodeJSON differ (-encoding/json +DecodeJSON):\n%s", body, diff)
			}
		}
	})
}

// fuzzNames are the member names of fuzzBody and fuzzContact.
var fuzzNames = []string{"name", "count", "on", "tags", "raw", "any", "contact", "fields", "email", "inner", "n", "Skipped"}

// foldedName reports whether body, valid JSON, has a string anywhere (a
// member name, or to keep it simple a value) that equals one of fuzzNames
// but for case.
func foldedName(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, ok := tok.(string)
		if !ok {
			continue
		}
		for _, n := range fuzzNames {
			if key != n && strings.EqualFold(key, n) {
				return true
			}
		}
	}
}
