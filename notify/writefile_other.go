//go:build !linux

package notify

// writeFileAtomic writes a new file at path (mode 0600) with data, which
// readers see whole or not at all (writeFileRenamed).
func writeFileAtomic(path string, data []byte) error {
	return writeFileRenamed(path, data)
}
