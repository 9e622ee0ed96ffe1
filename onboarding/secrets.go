package onboarding

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/google/uuid"
)

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomString returns n characters drawn uniformly from alphabet (at most
// 256 characters) using rejection sampling, so no character is favoured.
func randomString(r io.Reader, n int, alphabet string) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2+8)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("read random: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit {
				out = append(out, alphabet[int(b)%len(alphabet)])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out), nil
}

// randomToken returns n random bytes as unpadded base64url.
func randomToken(r io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newUUID returns a random (version 4) UUID in its canonical text form.
func newUUID(r io.Reader) (string, error) {
	id, err := uuid.NewRandomFromReader(r)
	if err != nil {
		return "", fmt.Errorf("new uuid: %w", err)
	}
	return id.String(), nil
}

// hashSecret returns the SHA-256 of a secret, the only form in which API key
// secrets and pre-auth codes are stored.
func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
