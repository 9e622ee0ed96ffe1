//go:build !linux

package notify

import "testing"

// unnamedWriter is not called outside Linux (TestWriteFile).
func unnamedWriter(*testing.T) func(string, []byte) error { return nil }
