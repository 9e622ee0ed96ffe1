package server

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/go-cmp/cmp"

	"onboard/admin/admintest"
	"onboard/onboarding"
	"onboard/onboarding/onboardingtest"
)

// reflectJSON encodes v by reflection, in the API's mode.
func reflectJSON(v *onboarding.ApplicationView) ([]byte, error) {
	return jsonv2.Marshal(v, jsonv1.DefaultOptionsV1())
}

// unsetMembers lists the paths of v's members that hold their zero value,
// looking into structs, pointers, slice elements and map values.
func unsetMembers(path string, v reflect.Value) []string {
	if v.IsZero() {
		return []string{path}
	}
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		out = unsetMembers(path, v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue // not a member: what a view with link holes keeps (PendingLink)
			}
			out = append(out, unsetMembers(path+"."+v.Type().Field(i).Name, v.Field(i))...)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Type().Elem().Kind() != reflect.Uint8 { // not a raw value
			for i := range v.Len() {
				out = append(out, unsetMembers(path+"[]", v.Index(i))...)
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		for it := v.MapRange(); it.Next(); {
			out = append(out, unsetMembers(path+"{}", it.Value())...)
		}
	}
	return out
}

func TestViewJSONMatchesReflection(t *testing.T) {
	full := onboardingtest.FullView()
	if unset := unsetMembers("view", reflect.ValueOf(full)); len(unset) > 0 {
		t.Fatalf("fullView leaves members unset, so their encoding is not compared: %v", unset)
	}
	noDocuments := onboardingtest.FullView()
	noDocuments.RegistryDocuments = &[]onboarding.RegistryDocumentView{}
	for name, v := range map[string]onboarding.ApplicationView{
		"every member set":         full,
		"nothing set":              {},
		"empty slices and maps":    {Participants: []onboarding.ParticipantView{}, Decisions: []onboarding.DecisionView{}, Data: onboarding.DataView{Fields: map[string]json.RawMessage{}, People: []onboarding.PersonView{}, Documents: map[string]onboarding.DocumentView{}}},
		"no registry document yet": noDocuments,
		"meta with industry only":  {Data: onboarding.DataView{Meta: onboarding.MetaView{WebExtractedIndustry: "x"}}},
		"meta with favicon only":   {Data: onboarding.DataView{Meta: onboarding.MetaView{WebsiteFavicon: "x"}}},
		"meta with sources only":   {Data: onboarding.DataView{Meta: onboarding.MetaView{RegistrySources: []onboarding.RegistrySource{"ie_registry"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := reflectJSON(&v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AppendView([]byte("prefix"), &v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(bytes.TrimPrefix(got, []byte("prefix")))); diff != "" || !bytes.HasPrefix(got, []byte("prefix")) {
				t.Errorf("AppendJSON differs from the reflecting encoder (-reflection +AppendJSON):\n%s", diff)
			}
		})
	}
}

func TestViewJSONErrors(t *testing.T) {
	for name, v := range map[string]onboarding.ApplicationView{
		"NaN percentage":      {Data: onboarding.DataView{Ownership: []onboarding.OwnershipView{{Percentage: math.NaN()}}}},
		"infinite percentage": {Data: onboarding.DataView{Ownership: []onboarding.OwnershipView{{Percentage: math.Inf(1)}}}},
		"invalid raw field":   {Data: onboarding.DataView{Fields: map[string]json.RawMessage{"x": json.RawMessage(`{"a":`)}}},
		"invalid raw data":    {Decisions: []onboarding.DecisionView{{Data: json.RawMessage(`nul`)}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := reflectJSON(&v); err == nil {
				t.Fatal("the reflecting encoder accepts it: the case tests nothing")
			}
			if b, err := AppendView(nil, &v); err == nil {
				t.Errorf("AppendJSON = %s, want an error", b)
			}
		})
	}
}

// FuzzViewJSON puts arbitrary strings, a raw value and a number in a view
// and checks that AppendJSON writes what the reflecting encoder writes, or
// fails where it fails.
func FuzzViewJSON(f *testing.F) {
	for _, seed := range []struct {
		s, key string
		raw    []byte
		pct    float64
	}{
		{"Northwind", "industry", []byte(`"software"`), 75},
		{"a<b>&c\"d\\e", "k&", []byte(`{"a":[1,2.50,-0,1e400]}`), 1e-7},
		{"\x00\x1f\x7f\b\f\n\r\t", "", []byte(` "x" `), 1e21},
		{"Zoë \u2028\u2029 \ufffd", "ü", []byte(`"\u0041\ud800"`), math.Copysign(0, -1)},
		{"\xff\xfe\xed\xa0\x80", "\xff", []byte("\"\xff\""), 123456789.125},
		{"https://onboard.test/files/x?a=1&b=2", "z", []byte(`{`), 0.1},
		{"", "a\u2028", []byte(`null`), 5e-324},
	} {
		f.Add(seed.s, seed.key, seed.raw, seed.pct)
	}
	f.Fuzz(func(t *testing.T, s, key string, raw []byte, pct float64) {
		v := onboardingtest.FullView()
		v.ID, v.Link, v.CreatedAt = s, s, s
		v.Data.Fields[key] = raw
		v.Data.Documents[key] = onboarding.DocumentView{FileName: s, UserOverrideReason: s}
		v.Data.People[0].FullName, v.Data.People[0].Email = s, s
		v.Data.People[0].HomeAddress.Line2 = s
		v.Data.Ownership[0].Percentage = pct
		v.Data.Meta.WebsiteFavicon = s
		v.Participants[0].Name = &s
		v.Decisions[0].Data = raw
		want, wantErr := reflectJSON(&v)
		got, err := AppendView(nil, &v)
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("AppendJSON error %v, the reflecting encoder's %v", err, wantErr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("AppendJSON differs from the reflecting encoder (-reflection +AppendJSON):\n%s", cmp.Diff(string(want), string(got)))
		}
	})
}

// TestEventDataMatchesReflection takes an application through the same
// life in a server whose Service encodes views with AppendView and in one
// left with the reflecting encoder, and compares what the two committed:
// every event's data and the NDJSON export, byte for byte.
func TestEventDataMatchesReflection(t *testing.T) {
	type committed struct {
		types  []string
		data   []string
		export string
	}
	run := func(reflectViews bool) committed {
		e := newEnv(t, envOptions{deterministic: true, reflectViews: reflectViews})
		e.life(t)
		var c committed
		for _, ev := range e.events(t, "acme", "?limit=100").Events {
			c.types = append(c.types, ev.Type)
			c.data = append(c.data, string(ev.Data))
		}
		x, err := e.svc.NewExport(onboarding.ExportQuery{OrgID: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		var sink admintest.ExportSink
		if _, err := x.Run(context.Background(), &sink); err != nil {
			t.Fatal(err)
		}
		c.export = sink.Rows.String()
		return c
	}
	wired, reflected := run(false), run(true)
	if len(wired.types) < 4 || wired.export == "" {
		t.Fatalf("the life committed %d events and export %q: too little to compare", len(wired.types), wired.export)
	}
	if diff := cmp.Diff(reflected, wired, cmp.AllowUnexported(committed{})); diff != "" {
		t.Errorf("AppendView's events and export differ from the reflecting encoder's (-reflection +AppendView):\n%s", diff)
	}
}

// BenchmarkViewJSON encodes the view with every member set, its stored
// values as the service stores them (compact, nothing escaped), by hand
// and by reflection.
func BenchmarkViewJSON(b *testing.B) {
	v := onboardingtest.FullView()
	v.Data.Fields = map[string]json.RawMessage{
		"company_name":       json.RawMessage(`"NORTHWIND TRADING LIMITED"`),
		"company_number":     json.RawMessage(`"10000001"`),
		"incorporation_date": json.RawMessage(`"2018-04-16"`),
		"registered_address": json.RawMessage(`{"line1":"Unit 2, 14 Harbour Road","city":"Bristol","postcode":"BS1 6XX","country":"GB"}`),
		"annual_turnover":    json.RawMessage(`{"amount":1250000,"currency":"GBP"}`),
	}
	v.Decisions[0].Data = json.RawMessage(`{"reason":"Checked"}`)
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendView(make([]byte, 0, 4096), &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := reflectJSON(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
