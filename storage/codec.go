package storage

import (
	"encoding/json"
	"fmt"
)

// codecJSON is the version byte of records encoded as JSON of the onboarding
// types. A future encoding gets a new byte; readers keep decoding old ones.
const codecJSON byte = 1

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	out := make([]byte, 0, len(b)+1)
	out = append(out, codecJSON)
	return append(out, b...), nil
}

func decode(b []byte, v any) error {
	if len(b) == 0 {
		return fmt.Errorf("decode record: empty value")
	}
	switch b[0] {
	case codecJSON:
		if err := json.Unmarshal(b[1:], v); err != nil {
			return fmt.Errorf("decode record: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("decode record: unknown codec version %d", b[0])
	}
}
