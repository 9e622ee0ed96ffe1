package onboarding_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// fillBlobIDs sets every settable string field named BlobID reachable from
// v (through structs, pointers, slices and string-keyed maps, each given one
// element) to a value of its own, and returns the values set. A record type
// that gains a new place to refer to a blob is filled here without a change.
func fillBlobIDs(v reflect.Value, n *int) []string {
	var set []string
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Struct {
			return nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		return fillBlobIDs(v.Elem(), n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			if v.Type().Field(i).Name == "BlobID" && f.Kind() == reflect.String {
				*n++
				id := fmt.Sprintf("blob-%d", *n)
				f.SetString(id)
				set = append(set, id)
				continue
			}
			set = append(set, fillBlobIDs(f, n)...)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Struct {
			return nil
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			set = append(set, fillBlobIDs(s.Index(i), n)...)
		}
		v.Set(s)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.Struct {
			return nil
		}
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"first", "second"} {
			e := reflect.New(v.Type().Elem()).Elem()
			set = append(set, fillBlobIDs(e, n)...)
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	}
	return set
}

// TestBlobIDsCoverEveryReference fills every BlobID field of an
// application and an RFI request, wherever the types put one, and checks
// that BlobIDs returns each: a backup copies exactly those files, so a
// reference it missed would be a file lost on restore.
func TestBlobIDsCoverEveryReference(t *testing.T) {
	tests := []struct {
		name   string
		record any
	}{
		{"application", &onboarding.Application{}},
		{"rfi request", &onboarding.RFIRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			want := fillBlobIDs(reflect.ValueOf(tt.record).Elem(), &n)
			if len(want) == 0 {
				t.Fatal("no BlobID field found: the filler is broken")
			}
			var got []string
			switch r := tt.record.(type) {
			case *onboarding.Application:
				got = r.BlobIDs()
			case *onboarding.RFIRequest:
				got = r.BlobIDs()
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("BlobIDs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBlobIDsSkipEmpty checks that a skipped document, which has no file,
// adds no id.
func TestBlobIDsSkipEmpty(t *testing.T) {
	a := &onboarding.Application{Data: onboarding.Data{Documents: map[string]onboarding.Document{
		"skipped": {Status: onboarding.DocumentSkipped},
		"kept":    {Status: onboarding.DocumentAccepted, BlobID: "b1"},
	}}, RegistryDocuments: []onboarding.RegistryDocument{{ID: "r"}}}
	if diff := cmp.Diff([]string{"b1"}, a.BlobIDs()); diff != "" {
		t.Errorf("application (-want +got):\n%s", diff)
	}
	r := &onboarding.RFIRequest{Documents: map[string]onboarding.Document{"skipped": {Status: onboarding.DocumentSkipped}}}
	if got := r.BlobIDs(); len(got) != 0 {
		t.Errorf("rfi request: %v, want none", got)
	}
}
