package blobs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMakeShardSyncsDirectoriesOthersCreated: a shard directory that
// already exists when a writer comes (another writer made it, perhaps
// without having fsynced its parent yet) is made durable by this writer
// too, once: the parents are fsynced and the directories remembered.
func TestMakeShardSyncsDirectoriesOthersCreated(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const id = "abcd0000-0000-4000-8000-000000000000"
	if err := os.MkdirAll(filepath.Join(dir, "ab", "cd"), 0o700); err != nil { // the other writer
		t.Fatal(err)
	}
	shard, err := s.makeShard(id)
	if err != nil {
		t.Fatal(err)
	}
	if shard != filepath.Join(dir, "ab", "cd") {
		t.Errorf("shard = %s", shard)
	}
	for _, d := range []string{filepath.Join(dir, "ab"), filepath.Join(dir, "ab", "cd")} {
		if _, ok := s.durable.Load(d); !ok {
			t.Errorf("%s: not known durable after makeShard", d)
		}
	}
	// A shard nobody made yet is created.
	if _, err := s.makeShard("ef010000-0000-4000-8000-000000000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ef", "01")); err != nil {
		t.Errorf("new shard: %v", err)
	}
}
