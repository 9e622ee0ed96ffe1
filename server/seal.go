package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// bodyCipher is AES-256-GCM under a key derived with HKDF-SHA256 from the
// full API key, bound to the API key's client id and the idempotency key
// (slot).
func bodyCipher(token, slot string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(token), nil, "onboard idempotent response\x00"+slot, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealBody encrypts a saved response body so that only a request with the
// same API key and idempotency key can read it: a random nonce, then the
// ciphertext.
func sealBody(token, slot string, body []byte) ([]byte, error) {
	aead, err := bodyCipher(token, slot)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(body)+aead.Overhead())
	rand.Read(nonce) // never fails (crypto/rand, Go 1.24 and later)
	return aead.Seal(nonce, nonce, body, nil), nil
}

// openBody decrypts what sealBody sealed.
func openBody(token, slot string, sealed []byte) ([]byte, error) {
	aead, err := bodyCipher(token, slot)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed body too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
}
