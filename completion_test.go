package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompletionScripts holds each shell's completion script to its golden
// file under testdata/completion, so that a change to the generator or to
// the command line shows as a diff; -update rewrites them.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"completion", shell}, &stdout, &stderr); code != 0 {
				t.Fatalf("completion %s exited %d: %s", shell, code, stderr.String())
			}
			golden := filepath.Join("testdata", "completion", shell+".golden")
			if *update {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
				t.Errorf("completion %s (-golden +got):\n%s", shell, diff)
			}
		})
	}
}
