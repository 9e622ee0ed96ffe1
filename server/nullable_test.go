package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/server/openapi"
)

// TestRequestNullsMatchContract: the members a request body may give as
// null (tagged nullable:"true", web.DecodeJSON) are exactly those the contract
// types with null, and the bodies have the contract's members.
func TestRequestNullsMatchContract(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	for schema, body := range map[string]any{
		"CreateApplicationRequest": createApplicationRequest{},
		"RFICreateRequest":         rfiCreateRequest{},
		"DecisionRequest":          decisionRequest{},
	} {
		s, ok := doc.Components.Schemas[schema]
		if !ok {
			t.Fatalf("the contract has no schema %s", schema)
		}
		var wantAll, wantNull, gotAll, gotNull []string
		contractMembers(s, "", &wantAll, &wantNull)
		bodyMembers(reflect.TypeOf(body), "", &gotAll, &gotNull)
		for _, l := range [][]string{wantAll, wantNull, gotAll, gotNull} {
			slices.Sort(l)
		}
		if diff := cmp.Diff(wantAll, gotAll); diff != "" {
			t.Errorf("%s: members (-contract +body):\n%s", schema, diff)
		}
		if diff := cmp.Diff(wantNull, gotNull); diff != "" {
			t.Errorf("%s: members that may be null (-contract +body):\n%s", schema, diff)
		}
	}
}

// contractMembers adds the member paths of an object schema to all, and
// those whose type admits null to null.
func contractMembers(schema map[string]any, prefix string, all, null *[]string) {
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		prop := p.(map[string]any)
		path := prefix + name
		*all = append(*all, path)
		if admitsNull(prop) {
			*null = append(*null, path)
		}
		if _, ok := prop["properties"]; ok {
			contractMembers(prop, path+".", all, null)
		}
	}
}

// admitsNull reports whether a property schema's type, or one of its
// anyOf or oneOf alternatives, is null.
func admitsNull(prop map[string]any) bool {
	switch t := prop["type"].(type) {
	case string:
		return t == "null"
	case []any:
		return slices.Contains(t, any("null"))
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := prop[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && admitsNull(m) {
				return true
			}
		}
	}
	return false
}

// bodyMembers adds the member paths of a request body type to all, and
// those tagged nullable:"true" to null.
func bodyMembers(t reflect.Type, prefix string, all, null *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		path := prefix + name
		*all = append(*all, path)
		if f.Tag.Get("nullable") == "true" {
			*null = append(*null, path)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			bodyMembers(ft, path+".", all, null)
		}
	}
}
