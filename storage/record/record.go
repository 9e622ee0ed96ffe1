// Package record encodes the records both Store backends keep: the JSON of
// the onboarding types behind a one-byte codec version, compressed with S2
// when that makes it smaller. Both backends store the same bytes, so what
// the API shows does not depend on the backend.
package record

import (
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/klauspost/compress/s2"
)

// Version bytes of records. A future encoding gets a new byte; readers
// keep decoding old ones.
const (
	// CodecJSON: JSON of the onboarding types, as is.
	CodecJSON byte = 1
	// CodecS2JSON: the same JSON, compressed with S2 (block format).
	CodecS2JSON byte = 2
)

// compressFrom is the size of JSON from which encode tries compression:
// smaller records (index values, heads, keys) gain too little.
const compressFrom = 256

// Encode writes v as encoding/json does, whose output the API's other JSON
// shares (field names from the Go names and tags, nil slices as null),
// compressed with S2 when that makes it smaller. It encodes with the JSON
// v2 implementation in encoding/json's mode (DefaultOptionsV1), which
// writes the same bytes faster and with fewer allocations. Writes are
// bound by the bytes every synced commit puts on disk, and records are
// JSON with repeated member names, which S2 shrinks well and quickly, so
// compressing buys write throughput for little CPU.
func Encode(v any) ([]byte, error) {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1())
	if err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	if len(b) >= compressFrom {
		out := make([]byte, 1+s2.MaxEncodedLen(len(b)))
		out[0] = CodecS2JSON
		// Given room for the worst case, Encode writes into out in place.
		if n := len(s2.Encode(out[1:], b)); n < len(b) {
			return out[:1+n], nil
		}
	}
	out := make([]byte, 0, len(b)+1)
	out = append(out, CodecJSON)
	return append(out, b...), nil
}

// Decode reads a record Encode wrote. It decodes with the JSON v2
// implementation (github.com/go-json-experiment/json, the code of Go's
// encoding/json/v2): reading an application is most of the work of
// getting one, and v2 decodes it in about two thirds of the time of
// encoding/json. It keeps encoding/json's semantics (DefaultOptionsV1:
// durations as nanoseconds, byte arrays as arrays, ...) except that member
// names match exactly, as encode writes them.
func Decode(b []byte, v any) error {
	if len(b) == 0 {
		return fmt.Errorf("decode record: empty value")
	}
	raw := b[1:]
	switch b[0] {
	case CodecJSON:
	case CodecS2JSON:
		var err error
		if raw, err = s2.Decode(nil, raw); err != nil {
			return fmt.Errorf("decode record: decompress: %w", err)
		}
	default:
		return fmt.Errorf("decode record: unknown codec version %d", b[0])
	}
	if err := jsonv2.Unmarshal(raw, v, jsonv1.DefaultOptionsV1(), jsonv2.MatchCaseInsensitiveNames(false)); err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	return nil
}
