package registry

import (
	"context"
	"encoding/json"
	"io/fs"
	"testing"
)

// BenchmarkParties fetches and merges GB 10000001's officers and PSCs
// through the recordings: two requests, decoding and mapping.
func BenchmarkParties(b *testing.B) {
	r := benchRegistry(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := r.Parties(ctx, "GB", "10000001")
		if err != nil || len(p.People) != 2 {
			b.Fatalf("Parties = %+v, %v", p, err)
		}
	}
}

// benchRegistry returns a fixtures-mode Registry over the sandbox.
func benchRegistry(b *testing.B) *Registry {
	b.Helper()
	r, err := New(Options{Mode: ModeFixtures, Fixtures: sandbox()})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// recordedBody decodes the response body of the recording at name.
func recordedBody(b *testing.B, name string, v any) {
	b.Helper()
	data, err := fs.ReadFile(sandbox(), name)
	if err != nil {
		b.Fatal(err)
	}
	var rec recordingFile
	if err := json.Unmarshal(data, &rec); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(rec.Response.Body, v); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMergeParties maps GB 10000001's decoded officers and PSCs.
func BenchmarkMergeParties(b *testing.B) {
	var officers chOfficerList
	var pscs chPSCList
	recordedBody(b, "companies-house/officers-10000001.json", &officers)
	recordedBody(b, "companies-house/psc-10000001.json", &pscs)
	b.ReportAllocs()
	for b.Loop() {
		p := mergeParties(officers.Items, pscs.Items)
		if len(p.People) != 2 {
			b.Fatalf("mergeParties = %+v", p)
		}
	}
}

// BenchmarkSearch searches GB companies by name through the recordings.
func BenchmarkSearch(b *testing.B) {
	r := benchRegistry(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m, err := r.SearchCompanies(ctx, "GB", "  North ", 20)
		if err != nil || len(m) != 2 {
			b.Fatalf("SearchCompanies = %+v, %v", m, err)
		}
	}
}

// BenchmarkTitleCase title-cases typical Companies House surnames.
func BenchmarkTitleCase(b *testing.B) {
	names := []string{"HARGREAVES", "O'NEILL", "MCDONALD", "SMITH-JONES", "DE LA CRUZ", "MacLeod"}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			_ = titleCase(n)
		}
	}
}
