package blobs

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"onboard/atomicfile"
)

// maxKeyFile bounds how much of a key file is read: a key is a line of
// base64, so anything longer is not a key file.
const maxKeyFile = 4096

// LoadOrCreateKey returns the signing key kept in the file at path: a line
// of standard base64. On first start, when the file does not exist, it
// generates a random MinKeySize-byte key, creates the parent directory (mode
// 0700) if needed and writes the file (mode 0600) atomically; if another
// process creates the file at the same moment, both use that one key. It
// refuses a key file that group or others may access, and a key shorter
// than MinKeySize bytes.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	return createKeyFile(path)
}

// readKeyFile reads and checks an existing key file. A missing file is
// reported with an error wrapping fs.ErrNotExist.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("blobs: signing key file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("blobs: signing key file %s has mode %04o, so group or others may read it; run chmod 600 %s (and consider replacing the key)", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key file %s: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("blobs: signing key file %s is over %d bytes; it should hold one line of base64", path, maxKeyFile)
	}
	key, err := decodeKey(string(data))
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key file %s %v; remove it to have a new key generated", path, err)
	}
	return key, nil
}

// createKeyFile generates a key and writes it to path, unless path exists
// by the time it is written, in which case the existing key wins.
func createKeyFile(path string) (key []byte, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	key = make([]byte, MinKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}

	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	defer f.Abort()
	if _, err := f.Write([]byte(base64.StdEncoding.EncodeToString(key) + "\n")); err != nil {
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	// CommitNew publishes the complete file without replacing one that
	// another process (the CLI and the server, say) created meanwhile.
	switch err := f.CommitNew(); {
	case errors.Is(err, fs.ErrExist):
		return readKeyFile(path)
	case err != nil:
		return nil, fmt.Errorf("blobs: signing key: %w", err)
	}
	return key, nil
}

// DecodeKey decodes a signing key given in configuration: standard base64
// (surrounding white space ignored) of at least MinKeySize bytes. Its errors
// never repeat the key.
func DecodeKey(s string) ([]byte, error) {
	key, err := decodeKey(s)
	if err != nil {
		return nil, fmt.Errorf("blobs: signing key %v (generate one with: openssl rand -base64 32)", err)
	}
	return key, nil
}

// decodeKey decodes standard base64 of at least MinKeySize bytes. Its
// errors complete a sentence whose subject is the key.
func decodeKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("is not valid standard base64")
	}
	if len(key) < MinKeySize {
		return nil, fmt.Errorf("is %d bytes after base64 decoding; at least %d are required", len(key), MinKeySize)
	}
	return key, nil
}
