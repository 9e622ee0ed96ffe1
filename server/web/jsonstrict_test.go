package web

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheckJSON(t *testing.T) {
	tests := []struct {
		body string
		want string // the error's message; "" for none
	}{
		{`{}`, ""},
		{`[{"a":1},{"a":1}]`, ""},
		{`{"a":{"b":1},"b":{"b":1}}`, ""},
		{`{"a":1,"A":2}`, ""}, // names are compared exactly
		{`{"a":1,"a":1}`, `Invalid JSON body: duplicate key "a"`},
		{`{"a":1,"\u0061":2}`, `Invalid JSON body: duplicate key "a"`},
		{`{"a":{"b":[1,{"c":1,"c":2}]}}`, `Invalid JSON body: duplicate key "a.b[1].c"`},
		{`{"a":1} {"a":2}`, "Invalid JSON body"},
		// Text must be UTF-8: no invalid bytes, no unpaired surrogates.
		{"{\"a\":\"\xff\xfe1\"}", ErrJSONNotUTF8.Message},
		{"{\"\xc3\":1}", ErrJSONNotUTF8.Message},
		{`{"a":"\ud800"}`, ErrJSONNotUTF8.Message},
		{`{"a":"\udc00x"}`, ErrJSONNotUTF8.Message},
		{`{"a":"\ud800\u0041"}`, ErrJSONNotUTF8.Message},
		{`{"a":"\uD83D"}`, ErrJSONNotUTF8.Message},
		{`{"a":"\ud83d\ude00 \uD83D\uDE00 \u00e9 é 😀"}`, ""},
		{`{"a":"\\ud800"}`, ""}, // a backslash, then the letters ud800
		{`{"a":"\"\\\ud800"}`, ErrJSONNotUTF8.Message},
		// A number too large for a float64 is still JSON.
		{`{"a":` + strings.Repeat("9", 5000) + `,"b":1e400}`, ""},
		// Nesting: at most MaxJSONDepth levels of objects and arrays.
		{strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), ""},
		{`{"data":` + strings.Repeat("[", MaxJSONDepth-1) + strings.Repeat("]", MaxJSONDepth-1) + `}`, ""},
		{strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1), "Invalid JSON body: nested more than 64 levels deep"},
		{`{"data":{"deep":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}}`, "Invalid JSON body: nested more than 64 levels deep"},
		{`{"a":1`, "Invalid JSON body"},
		{``, "Invalid JSON body"},
	}
	for _, tt := range tests {
		got := ""
		if err := CheckJSON([]byte(tt.body)); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckJSON(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	type contact struct {
		Email string `json:"email"`
	}
	type body struct {
		Country string          `json:"country"`
		Contact *contact        `json:"primary_contact"`
		Tags    []string        `json:"tags"`
		Flag    bool            `json:"flag"`
		Note    string          `json:"note,omitempty" nullable:"true"`
		Raw     json.RawMessage `json:"raw" nullable:"true"`
		//lint:ignore U1000 DecodeJSON must leave unexported fields alone
		skipped string
	}
	tests := []struct {
		body string
		want body
		err  string
	}{
		{``, body{}, ""},
		{" \n", body{}, ""},
		{`null`, body{}, "Invalid request body: must be a JSON object"},
		{` null `, body{}, "Invalid request body: must be a JSON object"},
		{`{"country":"GB","primary_contact":{"email":"a@b.example"},"tags":["x"],"flag":true}`,
			body{Country: "GB", Contact: &contact{Email: "a@b.example"}, Tags: []string{"x"}, Flag: true}, ""},
		{`{"COUNTRY":"GB","Primary_Contact":{"email":"x"},"skipped":"y"}`, body{}, ""},
		{`{"primary_contact":{"EMAIL":"a@b.example"}}`, body{Contact: &contact{}}, ""},
		{`{"primary_contact":null}`, body{}, "Invalid JSON body: primary_contact must not be null"},
		{`{"country":null}`, body{}, "Invalid JSON body: country must not be null"},
		{`{"flag":null}`, body{}, "Invalid JSON body: flag must not be null"},
		{`{"tags":null}`, body{}, "Invalid JSON body: tags must not be null"},
		{`{"primary_contact":{"email":null}}`, body{Contact: &contact{}}, "Invalid JSON body: primary_contact.email must not be null"},
		{`{"note":null,"raw":null,"country":"GB"}`, body{Country: "GB"}, ""},
		{`{"raw":{"a":null}}`, body{Raw: json.RawMessage(`{"a":null}`)}, ""},
		{`{"country":1}`, body{}, "Invalid request body: country must be a string"},
		{`{"primary_contact":"a"}`, body{}, "Invalid request body: primary_contact must be an object"},
		{`{"primary_contact":{"email":true}}`, body{Contact: &contact{}}, "Invalid request body: primary_contact.email must be a string"},
		{`{"tags":"x"}`, body{}, "Invalid request body: tags must be an array"},
		{`[]`, body{}, "Invalid request body: must be a JSON object"},
		{`{"country":"GB","country":"FR"}`, body{}, `Invalid JSON body: duplicate key "country"`},
		{`{"country":`, body{}, "Invalid JSON body"},
	}
	for _, tt := range tests {
		var got body
		err := DecodeJSON([]byte(tt.body), &got)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tt.err {
			t.Errorf("DecodeJSON(%s) error = %q, want %q", tt.body, msg, tt.err)
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(body{})); tt.err == "" && diff != "" {
			t.Errorf("DecodeJSON(%s) (-want +got):\n%s", tt.body, diff)
		}
	}
}
