package registry

import (
	"strings"
	"testing"
)

// FuzzMatchName checks the company-name matcher create and RFI create use
// against the registry with any two names. It must not panic and its
// outcome is one of the named categories; it is reflexive (a name is an
// EXACT match of itself), symmetric (which side is the registry's does not
// matter) and blind to surrounding spaces.
func FuzzMatchName(f *testing.F) {
	for _, seed := range [][2]string{
		{"NORTHWIND TRADING LTD", "Northwind Trading Limited"},
		{"ACME HOLDINGS LIMITED", "Acme"},
		{"A BIG BOAT LTD", "ABIGBOAT PLC"},
		{"THE FÁILTE COMPANY TEORANTA", "Failte Company Ltd"},
		{"M&S PLC", "M and S public limited company"},
		{"PARTNERIAETH ATEBOLRWYDD CYFYNGEDIG", "LLP"},
		{"LTD", "LIMITED"},
		{"", " "},
		{"THE", "the the"},
		{"Ǆ ǅ ǆ", "ǅ"},
		{"ﬁnance ltd", "FINANCE LIMITED"},
		{"\xff\xfe", "\ufffd"},
		{"K\u212a", "kk"},
		{"C.L.G.", "Company Limited by Guarantee"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := MatchName(a, b), MatchName(b, a)
		if ab < Mismatch || ab > MatchExact || strings.HasPrefix(ab.String(), "Match(") {
			t.Fatalf("MatchName(%q, %q) = %d, not a category", a, b, ab)
		}
		if ab != ba {
			t.Fatalf("MatchName(%q, %q) = %v but MatchName(%q, %q) = %v", a, b, ab, b, a, ba)
		}
		if got := MatchName(a, a); got != MatchExact {
			t.Fatalf("MatchName(%q, itself) = %v, want EXACT", a, got)
		}
		if got := MatchName(" "+a+"\t", b); got != ab {
			t.Fatalf("MatchName(%q, %q) = %v, but with %q padded it is %v", a, b, ab, a, got)
		}
	})
}
