package blobs

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWalk lists every stored blob with its time, and nothing else: not
// the temporary files of uploads in progress, not a file whose name is not
// a blob id, not a blob id in the wrong shard.
func TestWalk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, content := range []string{"one", "two", "three"} {
		id, _, err := s.Put(context.Background(), strings.NewReader(content), 1<<10)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	sort.Strings(want)
	stray := "0123abcd-0000-4000-8000-000000000000"
	for path, content := range map[string]string{
		filepath.Join(dir, "tmp", "upload-123"):    "partial",
		filepath.Join(dir, "notes.txt"):            "hello",
		filepath.Join(dir, "ff", "ee", stray):      "misplaced",
		filepath.Join(dir, want[0][0:2], "README"): "x",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err = s.Walk(func(id string, modified time.Time) error {
		if time.Since(modified) > time.Minute {
			t.Errorf("blob %s modified %s", id, modified)
		}
		got = append(got, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
}
