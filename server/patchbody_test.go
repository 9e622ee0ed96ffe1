package server

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/server/web"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		body string
		want []onboarding.FieldUpdate
	}{
		{`{"fields":{"a":1}}`, []onboarding.FieldUpdate{{ID: "a", Value: json.RawMessage(`1`)}}},
		{`{"fields":{"b":"x","a":null}}`, []onboarding.FieldUpdate{{ID: "b", Value: json.RawMessage(`"x"`)}, {ID: "a", Value: json.RawMessage(`null`)}}},
		{` { "fields" : { "a" : { "x" : [1, 2] } } } `, []onboarding.FieldUpdate{{ID: "a", Value: json.RawMessage(`{ "x" : [1, 2] }`)}}},
	}
	for _, tt := range tests {
		got, err := parsePatch([]byte(tt.body))
		if err != nil {
			t.Errorf("parsePatch(%s): %v", tt.body, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parsePatch(%s) (-want +got):\n%s", tt.body, diff)
		}
	}
	errs := []struct {
		body    string
		want    *onboarding.Error
		details map[string]string
	}{
		{``, onboarding.ErrInvalidJSON, nil},
		{`{"fields":{"a":1}`, onboarding.ErrInvalidJSON, nil},
		{`{"fields":{"a":1,"b":2,"a":3}}`, web.ErrDuplicateKey("fields.a"), nil},
		{`{"fields":{"a":1},"fields":{"b":2}}`, web.ErrDuplicateKey("fields"), nil},
		{`{"fields":{"a":{"line1":"x","line1":"y"}}}`, web.ErrDuplicateKey("fields.a.line1"), nil},
		{`null`, onboarding.ErrPatchBody, map[string]string{"body": "must be a JSON object"}},
		{`"fields"`, onboarding.ErrPatchBody, map[string]string{"body": "must be a JSON object"}},
		{`{}`, onboarding.ErrPatchBody, map[string]string{"fields": "is required: an object of field ids to values"}},
		{`{"fields":null}`, onboarding.ErrPatchBody, map[string]string{"fields": "must be an object of field ids to values"}},
		{`{"fields":{}}`, onboarding.ErrPatchBody, map[string]string{"fields": "must contain at least one field id"}},
		{`{"people":[]}`, onboarding.ErrPatchBody, map[string]string{
			"people": `only "fields" can be updated; people, ownership and documents are managed by the applicant`,
			"fields": "is required: an object of field ids to values",
		}},
	}
	for _, tt := range errs {
		_, err := parsePatch([]byte(tt.body))
		e := onboarding.AsError(err)
		if e == nil || e.Message != tt.want.Message {
			t.Errorf("parsePatch(%s) = %v, want %v", tt.body, err, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.details, e.Details); diff != "" {
			t.Errorf("parsePatch(%s) details (-want +got):\n%s", tt.body, diff)
		}
	}
}
