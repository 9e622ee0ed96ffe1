package onboarding_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// fill sets everything reachable from v to a value that is not the zero
// value: each slice and map gets two elements, each pointer a target. It
// walks by reflection, so it also reaches fields added after this test.
// Times are leaves (their fields are unexported).
func fill(v reflect.Value, n *int) {
	*n++
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, *n, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), n)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, n)
			fill(e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(fmt.Sprint("s", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint8:
		v.SetUint(uint64('0' + *n%10))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic(fmt.Sprintf("fill: no value for a %s", v.Type()))
	}
}

// shared reports the path of a slice, map or pointer that a and b (values
// of one type) both point into, or "" when they share none.
func shared(a, b reflect.Value, path string) string {
	if a.Type() == reflect.TypeFor[time.Time]() {
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	case reflect.Slice:
		if a.Cap() > 0 && b.Cap() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := range min(a.Len(), b.Len()) {
			if p := shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if p := shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				if p := shared(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// TestCloneSharesNothing: a clone of an application with every field set
// equals it and shares no slice, map or pointer with it, so that a store
// keeping decoded applications can hand out clones that callers change.
func TestCloneSharesNothing(t *testing.T) {
	var app onboarding.Application
	var n int
	fill(reflect.ValueOf(&app).Elem(), &n)
	c := app.Clone()
	if d := cmp.Diff(&app, c); d != "" {
		t.Fatalf("clone differs (-app +clone):\n%s", d)
	}
	if p := shared(reflect.ValueOf(app), reflect.ValueOf(*c), "Application"); p != "" {
		t.Errorf("the clone shares %s with the application", p)
	}

	// Appending to one JSON value of a clone leaves the others alone.
	for k := range c.Data.Fields {
		c.Data.Fields[k] = append(c.Data.Fields[k], '!')
	}
	for k, v := range c.Data.Fields {
		if want := string(app.Data.Fields[k]) + "!"; string(v) != want {
			t.Errorf("after appending to each, field %s = %q, want %q", k, v, want)
		}
	}

	var empty onboarding.Application
	if d := cmp.Diff(&empty, empty.Clone()); d != "" {
		t.Errorf("clone of an empty application differs (-want +got):\n%s", d)
	}
}

// TestSharedFindsSharing: the check above is not vacuous; it finds a
// shallow copy's sharing.
func TestSharedFindsSharing(t *testing.T) {
	var app onboarding.Application
	var n int
	fill(reflect.ValueOf(&app).Elem(), &n)
	shallow := app
	shallow.Data.People = append([]onboarding.Person(nil), app.Data.People...)
	if p := shared(reflect.ValueOf(app), reflect.ValueOf(shallow), "Application"); p == "" {
		t.Error("a shallow copy shares nothing, by shared")
	}
}

// BenchmarkClone: what a cached read costs instead of decoding.
func BenchmarkClone(b *testing.B) {
	var app onboarding.Application
	var n int
	fill(reflect.ValueOf(&app).Elem(), &n)
	b.ReportAllocs()
	for b.Loop() {
		_ = app.Clone()
	}
}
