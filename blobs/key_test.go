package blobs_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/blobs"
)

func TestLoadOrCreateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "secrets")
	path := filepath.Join(dir, "blob-signing.key")

	key, err := blobs.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("first LoadOrCreateKey: %v", err)
	}
	if len(key) != blobs.MinKeySize {
		t.Errorf("key is %d bytes; want %d", len(key), blobs.MinKeySize)
	}
	if bytes.Equal(key, make([]byte, len(key))) {
		t.Error("key is all zeros")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %04o; want 0600", info.Mode().Perm())
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("key directory: %v, %v; want mode 0700", info, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := base64.StdEncoding.EncodeToString(key) + "\n"; string(data) != want {
		t.Errorf("key file holds %q; want %q", data, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("key directory holds %d entries; want only the key (no temp file left)", len(entries))
	}

	again, err := blobs.LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("second LoadOrCreateKey: %v", err)
	}
	if diff := cmp.Diff(key, again); diff != "" {
		t.Errorf("second call returned another key (-first +second):\n%s", diff)
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets", "key")
	const n = 8
	keys := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := blobs.LoadOrCreateKey(path)
			if err != nil {
				t.Errorf("LoadOrCreateKey: %v", err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("concurrent first starts got different keys")
		}
	}
}

func TestLoadOrCreateKeyExisting(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 48))
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    []byte   // on success
		errHas  []string // on failure, each must be in the error
	}{
		{name: "valid 0600", content: good + "\n", mode: 0o600, want: bytes.Repeat([]byte{7}, 48)},
		{name: "valid 0400 without newline", content: good, mode: 0o400, want: bytes.Repeat([]byte{7}, 48)},
		{name: "group and others may read", content: good + "\n", mode: 0o644, errHas: []string{"chmod 600", "0644"}},
		{name: "group may read", content: good + "\n", mode: 0o640, errHas: []string{"chmod 600"}},
		{name: "others may write", content: good + "\n", mode: 0o602, errHas: []string{"chmod 600"}},
		{name: "short key", content: base64.StdEncoding.EncodeToString(make([]byte, 16)) + "\n", mode: 0o600, errHas: []string{"16 bytes", "32"}},
		{name: "not base64", content: "this is not a key\n", mode: 0o600, errHas: []string{"base64"}},
		{name: "empty", content: "", mode: 0o600, errHas: []string{"0 bytes"}},
		{name: "huge", content: strings.Repeat("A", 10000), mode: 0o600, errHas: []string{"over"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			key, err := blobs.LoadOrCreateKey(path)
			if tt.errHas == nil {
				if err != nil {
					t.Fatalf("LoadOrCreateKey: %v", err)
				}
				if diff := cmp.Diff(tt.want, key); diff != "" {
					t.Errorf("key (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadOrCreateKey succeeded with %d-byte key; want an error", len(key))
			}
			for _, s := range append(tt.errHas, path) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			// The refused file is left alone: no new key replaces it.
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Errorf("key file changed to %q", data)
			}
		})
	}
}

func TestLoadOrCreateKeyDirectory(t *testing.T) {
	path := t.TempDir()
	if _, err := blobs.LoadOrCreateKey(path); err == nil {
		t.Error("LoadOrCreateKey(a directory) succeeded; want an error")
	}
}

func TestDecodeKey(t *testing.T) {
	key32 := bytes.Repeat([]byte{0xfb}, 32) // encodes with + and /
	tests := []struct {
		name string
		in   string
		want []byte // nil: an error
	}{
		{"32 bytes", base64.StdEncoding.EncodeToString(key32), key32},
		{"64 bytes", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 64)), bytes.Repeat([]byte{1}, 64)},
		{"surrounding white space", "  " + base64.StdEncoding.EncodeToString(key32) + "\n", key32},
		{"31 bytes", base64.StdEncoding.EncodeToString(key32[:31]), nil},
		{"empty", "", nil},
		{"URL alphabet", base64.URLEncoding.EncodeToString(key32), nil},
		{"unpadded", base64.RawStdEncoding.EncodeToString(key32), nil},
		{"hex of 16 bytes", strings.Repeat("ab", 16), nil},
		{"not base64", "correct horse battery staple correct horse battery!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := blobs.DecodeKey(tt.in)
			if tt.want != nil {
				if err != nil {
					t.Fatalf("DecodeKey: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("key (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeKey(%q) succeeded; want an error", tt.in)
			}
			if strings.TrimSpace(tt.in) != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Errorf("error %q repeats the key", err)
			}
		})
	}
}
