package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteFileNoSync: each way of writing a file without fsyncs (an
// outbox file of package notify, say) leaves exactly the file, with its
// data and mode 0600, and refuses a directory that does not exist.
func TestWriteFileNoSync(t *testing.T) {
	writers := map[string]func(string, []byte) error{
		"WriteFileNoSync": func(path string, data []byte) error { return WriteFileNoSync(path, data, 0o600) },
		"writeRenamed":    func(path string, data []byte) error { return writeRenamed(path, data, 0o600) },
	}
	if runtime.GOOS == "linux" {
		writers["writeUnnamed"] = unnamedWriter(t)
	}
	data := []byte("Subject: Complete your application\r\n\r\nhello\r\n")
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "20261127T000000.000000000Z-0123456789abcdef.eml")
			if err := write(path, data); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(data), string(got)); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode() != 0o600 {
				t.Errorf("mode = %v, %v; want -rw-------", fi.Mode(), err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("directory holds %q, want the file alone", names)
			}
			if err := write(filepath.Join(dir, "missing", "x.eml"), data); err == nil {
				t.Error("a file in a missing directory was written")
			}
		})
	}
}
