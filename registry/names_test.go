package registry

import "testing"

func TestMatchName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		registered, given string
		want              Match
	}{
		// Name-matching test vectors.
		{"EXAMPLE TRADING LIMITED", "Example Trading Ltd.", MatchNormalized},
		{"H & S SERVICES LIMITED", "H and S Services Ltd", MatchNormalized},
		{"THE WIDGET COMPANY LIMITED", "Widget Company Ltd", MatchNormalized},
		{"EXAMPLE PLC", "Example Public Limited Company", MatchNormalized},
		{"EXAMPLE P.L.C.", "Example plc", MatchNormalized},
		{"EXEMPLAR SOFTWARE DESIGNATED ACTIVITY COMPANY", "Exemplar Software DAC", MatchNormalized},
		{"EXEMPLAR TEORANTA", "Exemplar Limited", MatchNormalized},
		{"BAILE ÁTHA CLIATH TEO", "Baile Atha Cliath Ltd", MatchNormalized},
		{"EXAMPLE LIMITED", "Example PLC", MismatchForm},
		{"EXAMPLE HOLDINGS LIMITED", "Example Limited", Mismatch},
		{"EXEMPLAR SOFTWARE DAC", "Exemplar Software", MatchFormOmitted},
		{"ACME (UK) LIMITED", "Acme UK Ltd", MatchNormalized},
		// Examples of the matching rules.
		{"A BIG BOAT LIMITED", "Abigboat Limited", MatchSpacing},
		{"EXEMPLAR SOFTWARE DAC", "Exemplar Software D.A.C.", MatchNormalized},
		{"ACME HOLDINGS LTD", "Acme Ltd", Mismatch},
		{"EXAMPLE LIMITED", "Example DAC", MismatchForm},
		// Sandbox companies (docs/sandbox.md).
		{"NORTHWIND TRADING LIMITED", "Northwind Trading Ltd", MatchNormalized},
		{"NORTHWIND TRADING LIMITED", "Northwind Trading Limited", MatchExact},
		{"NORTHWIND TRADING LIMITED", "Northwind Trading", MatchFormOmitted},
		{"NORTHWIND TRADING LIMITED", "Northwind Ltd", Mismatch},
		{"BLUEBELL HOLDINGS PLC", "Bluebell Holdings plc", MatchExact},
		{"BLUEBELL HOLDINGS PLC", "Bluebell Holdings P.L.C.", MatchNormalized},
		{"BLUEBELL HOLDINGS PLC", "Bluebell Holdings Ltd", MismatchForm},
		{"BLUEBELL GROUP LIMITED", "Bluebell Holdings Limited", Mismatch},
		{"BLUEBELL GROUP LIMITED", "Bluebell Group Ltd", MatchNormalized},
		{"OLDCO LIMITED", "Oldco Ltd", MatchNormalized},
		{"HIGHLAND FISHERIES LTD", "Highland Fisheries Limited", MatchNormalized},
		{"EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "Emerald Software DAC", MatchNormalized},
		{"EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "Emerald Software", MatchFormOmitted},
		{"EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "Emerald Software Ltd", MismatchForm},
		{"EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "Emerald Software Cuideachta Ghníomhaíochta Ainmnithe", MatchNormalized},
		{"SHAMROCK CONSULTING LIMITED", "Shamrock Consulting Teoranta", MatchNormalized},
		{"BAILE ÁTHA CLIATH TEORANTA", "Baile Atha Cliath Teo", MatchNormalized},
		{"BAILE ÁTHA CLIATH TEORANTA", "baile átha cliath teoranta", MatchExact},
		{"BAILE ÁTHA CLIATH TEORANTA", "Baile Atha Cliath", MatchFormOmitted},
		// Normalisation details.
		{"ACME LIMITED", "  acme limited ", MatchExact},
		{"O’NEILL’S BAR LIMITED", "O'Neill's Bar Ltd", MatchNormalized},
		{"O'NEILL'S BAR LIMITED", "O“Neill”s Bar Limited", MatchNormalized},
		{"WIDGET COMPANY LIMITED", "The Widget Company Ltd", MatchNormalized},
		{"H+S LIMITED", "H and S Ltd", MatchNormalized},
		{"H&S LIMITED", "H & S Ltd", MatchNormalized},
		{"ACME LIMITED", "ＡＣＭＥ Ltd", MatchNormalized},
		{"SMITH-JONES (WALES) LIMITED", "Smith Jones Wales Ltd", MatchNormalized},
		{"ENGHRAIFFT CYFYNGEDIG", "Enghraifft Cyf", MatchNormalized},
		{"ENGHRAIFFT CYFYNGEDIG", "Enghraifft Ltd", MatchNormalized},
		{"ENGHRAIFFT CWMNI CYFYNGEDIG CYHOEDDUS", "Enghraifft PLC", MatchNormalized},
		{"EXAMPLE PARTNERIAETH ATEBOLRWYDD CYFYNGEDIG", "Example LLP", MatchNormalized},
		{"EXAMPLE LIMITED LIABILITY PARTNERSHIP", "Example L.L.P.", MatchNormalized},
		{"EXAMPLE COMPANY LIMITED BY GUARANTEE", "Example CLG", MatchNormalized},
		{"EXAMPLE COMMUNITY INTEREST COMPANY", "Example C.I.C.", MatchNormalized},
		{"EXAMPLE UNLIMITED COMPANY", "Example ULC", MatchNormalized},
		{"EXAMPLE CUIDEACHTA PHOIBLÍ THEORANTA", "Example CPT", MatchNormalized},
		{"EXAMPLE LLP", "Example Limited", MismatchForm},
		{"ABIGBOAT LIMITED", "A Big Boat PLC", MismatchForm},
		{"A BIG BOAT", "Abigboat Ltd", MatchSpacing},
		{"THE LIMITED", "The Ltd", Mismatch},
		{"ACME LIMITED", "", Mismatch},
		{"ACME LIMITED", "Ltd.", Mismatch},
		{"ACME LIMITED", "Acme Limited Ltd", Mismatch},
	}
	for _, tt := range tests {
		if got := MatchName(tt.registered, tt.given); got != tt.want {
			t.Errorf("MatchName(%q, %q) = %v, want %v", tt.registered, tt.given, got, tt.want)
		}
	}
}

func TestMatchAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m    Match
		name string
		want bool
	}{
		{MatchExact, "EXACT", true},
		{MatchNormalized, "MATCH_NORMALIZED", true},
		{MatchFormOmitted, "MATCH_FORM_OMITTED", true},
		{MatchSpacing, "MATCH_SPACING", true},
		{MismatchForm, "MISMATCH_FORM", false},
		{Mismatch, "MISMATCH", false},
		{Match(42), "Match(42)", false},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.name {
			t.Errorf("Match(%d).String() = %q, want %q", int(tt.m), got, tt.name)
		}
		if got := tt.m.Accepted(); got != tt.want {
			t.Errorf("%v.Accepted() = %v, want %v", tt.m, got, tt.want)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want normalizedName
	}{
		{"The Widget Co. Ltd", normalizedName{core: "WIDGET CO", form: "LTD"}},
		{"BAILE ÁTHA CLIATH TEORANTA", normalizedName{core: "BAILE ATHA CLIATH", form: "LTD"}},
		{"H & S (Services) – Ltd", normalizedName{core: "H AND S SERVICES", form: "LTD"}},
		{"Example Public Limited Company", normalizedName{core: "EXAMPLE", form: "PLC"}},
		{"Example Partneriaeth Atebolrwydd Cyfyngedig", normalizedName{core: "EXAMPLE", form: "LLP"}},
		{"The", normalizedName{core: "THE"}},
		{"Limited", normalizedName{core: "LIMITED"}},
		{"", normalizedName{}},
	}
	for _, tt := range tests {
		if got := normalizeName(tt.in); got != tt.want {
			t.Errorf("normalizeName(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func BenchmarkMatchName(b *testing.B) {
	pairs := []struct{ name, registered, given string }{
		{"normalized", "NORTHWIND TRADING LIMITED", "Northwind Trading Ltd"},
		{"mismatch_form", "BLUEBELL HOLDINGS PLC", "Bluebell Holdings Ltd"},
		{"accents", "BAILE ÁTHA CLIATH TEORANTA", "Baile Atha Cliath Teo"},
		{"form_omitted", "EMERALD SOFTWARE DESIGNATED ACTIVITY COMPANY", "Emerald Software"},
	}
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				MatchName(p.registered, p.given)
			}
		})
	}
}
