package registry

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// scribble overwrites everything reachable from v (a pointer) that a caller
// could change: strings, numbers, booleans, through pointers and slices.
// Walking by reflection, it also reaches fields added after this test.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.String:
		v.SetString("scribbled")
	case reflect.Int, reflect.Int64:
		v.SetInt(-1)
	case reflect.Float64:
		v.SetFloat(-1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	}
}

// TestMemoizedFixtures: in fixtures mode each lookup of a number is a
// request the first time only; the answer is the same as an unmemoized
// registry's, whatever the callers did to the answers they were given.
func TestMemoizedFixtures(t *testing.T) {
	ctx := context.Background()
	counts := &callCounts{n: map[string]int{}}
	memoized, err := New(Options{Mode: ModeFixtures, Fixtures: sandbox(), CountCall: counts.count})
	if err != nil {
		t.Fatal(err)
	}
	ft, err := NewFixtureTransport(sandbox())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(Options{Mode: ModeFixtures, Transport: ft})
	if err != nil {
		t.Fatal(err)
	}
	lookups := []struct {
		name string
		do   func(r *Registry) (any, error)
	}{
		{"GB company", func(r *Registry) (any, error) { return r.VerifyCompany(ctx, "GB", "10000001", "Northwind Trading Ltd") }},
		{"GB company, as written otherwise", func(r *Registry) (any, error) { return r.VerifyCompany(ctx, "GB", " 1000 0001 ", "") }},
		{"IE company", func(r *Registry) (any, error) { return r.VerifyCompany(ctx, "IE", "100001", "") }},
		{"parties", func(r *Registry) (any, error) { return r.Parties(ctx, "GB", "10000001") }},
		{"parties with owners", func(r *Registry) (any, error) { return r.Parties(ctx, "GB", "10000002") }},
		{"filings", func(r *Registry) (any, error) { return r.Filings(ctx, "GB", "10000001") }},
	}
	for _, l := range lookups {
		t.Run(l.name, func(t *testing.T) {
			want, err := l.do(plain)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				counts.take()
				got, err := l.do(memoized)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("lookup %d (-unmemoized +memoized):\n%s", i+1, diff)
				}
				if n := counts.take(); i > 0 && len(n) > 0 {
					t.Errorf("lookup %d sent requests: %v", i+1, n)
				}
				p := reflect.New(reflect.TypeOf(got))
				p.Elem().Set(reflect.ValueOf(got))
				scribble(p)
			}
		})
	}
}

// TestMemoKeepsNoErrors: a lookup that failed is asked again.
func TestMemoKeepsNoErrors(t *testing.T) {
	counts := &callCounts{n: map[string]int{}}
	r, err := New(Options{Mode: ModeFixtures, Fixtures: sandbox(), CountCall: counts.count})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := r.VerifyCompany(context.Background(), "GB", "09999999", ""); err == nil {
			t.Fatal("an unknown company was verified")
		}
		if n := counts.take(); len(n) == 0 {
			t.Errorf("lookup %d of an unknown company sent no request", i+1)
		}
	}
}

// TestMemoIsBounded: recordings with a wildcard answer any number, and the
// memo keeps maxMemoized of them; the numbers after those are asked again
// each time.
func TestMemoIsBounded(t *testing.T) {
	fsys := fstest.MapFS{"companies-house/any.json": {Data: []byte(`{
		"request": {"method": "GET", "host": "api.company-information.service.gov.uk", "path": "/company/{n}"},
		"response": {"status": 200, "body": {"company_name": "ANY LIMITED", "company_status": "active"}}}`)}}
	counts := &callCounts{n: map[string]int{}}
	r, err := New(Options{Mode: ModeFixtures, Fixtures: fsys, CountCall: counts.count})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(i int) map[string]int {
		t.Helper()
		if _, err := r.VerifyCompany(context.Background(), "GB", fmt.Sprintf("%08d", 20000000+i), ""); err != nil {
			t.Fatal(err)
		}
		return counts.take()
	}
	for i := range maxMemoized + 1 {
		verify(i)
	}
	if n := verify(0); len(n) > 0 {
		t.Errorf("the first number was asked again: %v", n)
	}
	if n := verify(maxMemoized); len(n) == 0 {
		t.Errorf("the number past the bound was memoized")
	}
}
