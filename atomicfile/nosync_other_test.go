//go:build !linux

package atomicfile

import "testing"

// unnamedWriter is not called outside Linux (TestWriteFileNoSync).
func unnamedWriter(*testing.T) func(string, []byte) error { return nil }
