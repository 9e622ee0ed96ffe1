package onboarding

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProblemCodes: ProblemCodes lists every ProblemCode the package
// declares, once, and each has words of its own, so that a code added
// without a message fails here.
func TestProblemCodes(t *testing.T) {
	listed := ProblemCodes()
	for i, c := range listed {
		if slices.Contains(listed[:i], c) {
			t.Errorf("ProblemCodes lists %q twice", c)
		}
		if _, known := (Problem{Code: c, Text: "x"}).words(); !known {
			t.Errorf("code %q has no message", c)
		}
	}
	declared := declaredProblemCodes(t)
	if len(declared) == 0 {
		t.Fatal("found no ProblemCode constants in the package's source")
	}
	for name, c := range declared {
		if !slices.Contains(listed, c) {
			t.Errorf("%s (%q) is declared but not in ProblemCodes", name, c)
		}
	}
	if len(declared) != len(listed) {
		t.Errorf("%d ProblemCode constants declared, ProblemCodes lists %d", len(declared), len(listed))
	}
	if _, known := (Problem{Code: "no_such_code"}).words(); known {
		t.Error("an undeclared code has words")
	}
}

// declaredProblemCodes parses the package's source and returns its
// constants of type ProblemCode, by name.
func declaredProblemCodes(t *testing.T) map[string]ProblemCode {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ProblemCode{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ProblemCode" {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: the value of a ProblemCode is not a string literal", n.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = ProblemCode(v)
				}
			}
		}
	}
	return out
}

// TestProblemMessages: the words of problems with parameters, as the API
// sends them.
func TestProblemMessages(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Code: ProblemRequired}, "is required"},
		{Problem{Code: ProblemRequired, Text: "enter the person's full name"}, "is required: enter the person's full name"},
		{Problem{Code: ProblemTooLong, Limit: 500, Length: 501}, "must be at most 500 characters long (it has 501)"},
		{Problem{Code: ProblemTooLong, Limit: 300}, "must be at most 300 characters"},
		{Problem{Code: ProblemTooLong, Part: "city", Limit: 200, Length: 201}, "city must be at most 200 characters long (it has 201)"},
		{Problem{Code: ProblemNotOption, Part: "currency", Allowed: []string{"GBP", "EUR", "USD"}}, "currency must be one of GBP, EUR, USD"},
		{Problem{Code: ProblemUnknownOption, Allowed: []string{"a", "b"}, Value: "c"}, `must contain only values from a, b; "c" is not one of them`},
		{Problem{Code: ProblemNotOptionStrings, Allowed: []string{"a", "b"}}, "must be an array of option values, strings from a, b"},
		{Problem{Code: ProblemPattern, Pattern: "^[0-9]+$"}, "must match the pattern ^[0-9]+$"},
		{Problem{Code: ProblemPattern, Pattern: "^[0-9]+$", Text: "must be digits"}, "must be digits"},
		{Problem{Code: ProblemDateTooEarly, Limit: 1000}, "must be in the year 1000 or later"},
		{Problem{Code: ProblemTooLarge, Part: "amount", Limit: 1e15}, "amount must be at most 1000000000000000"},
		{Problem{Code: ProblemAddressIncomplete, Values: []string{"city", "country"}}, "must include line1, city and country; missing: city, country"},
		{Problem{Code: ProblemPostcodeRequired, Part: "postcode", Value: "GB"}, "postcode is required when country is GB"},
		{Problem{Code: ProblemCurrencyMembers, Values: []string{"x"}}, "must be an object with amount and currency only; unknown members: x"},
		{Problem{Code: ProblemOther, Text: "label is empty"}, "label is empty"},
	}
	for _, tt := range tests {
		if got := tt.p.Message(); got != tt.want {
			t.Errorf("%+v: Message() = %q, want %q", tt.p, got, tt.want)
		}
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("%+v: Error() = %q, want %q", tt.p, got, tt.want)
		}
	}
}
