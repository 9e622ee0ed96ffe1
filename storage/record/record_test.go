package record

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestCodecs: records of compressFrom bytes of JSON or more are stored
// compressed (CodecS2JSON) when that is smaller, others as they are
// (CodecJSON); both decode, records written before compression (CodecJSON,
// whatever their size) included, and a damaged or unknown value is an
// error, never a panic.
func TestCodecs(t *testing.T) {
	type rec struct{ Name, Padding string }
	small := rec{Name: "a"}
	large := rec{Name: "b", Padding: strings.Repeat("applicant ", 100)}
	noise := make([]byte, 600)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(noise)
	incompressible := rec{Name: "c", Padding: base64.StdEncoding.EncodeToString(noise)}
	for _, tt := range []struct {
		name  string
		v     rec
		codec byte
	}{
		{"small", small, CodecJSON},
		{"large", large, CodecS2JSON},
		{"large but incompressible", incompressible, CodecJSON},
	} {
		b, err := Encode(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != tt.codec {
			t.Errorf("%s: codec byte %d, want %d", tt.name, b[0], tt.codec)
		}
		var got rec
		if err := Decode(b, &got); err != nil || got != tt.v {
			t.Errorf("%s: decode = %+v, %v", tt.name, got, err)
		}
	}
	b, _ := Encode(large)
	if plain := len(mustJSON(t, large)); len(b) > plain/3 {
		t.Errorf("large record: %d bytes stored for %d of JSON", len(b), plain)
	}

	old := append([]byte{CodecJSON}, mustJSON(t, large)...) // as stored before compression
	var got rec
	if err := Decode(old, &got); err != nil || got != large {
		t.Errorf("uncompressed large record: %+v, %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"empty":           nil,
		"unknown codec":   {9, '{', '}'},
		"damaged S2":      {CodecS2JSON, 0xff, 0xff, 0xff},
		"truncated S2":    b[:len(b)/2],
		"S2 of not JSON":  append([]byte{CodecS2JSON}, s2.Encode(nil, []byte("not json"))...),
		"JSON, truncated": old[:len(old)/2],
	} {
		if err := Decode(bad, &got); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
