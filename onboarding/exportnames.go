package onboarding

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxExportNameBytes bounds a name ExportFile gives a file or a directory,
// well within the 255 bytes most file systems allow.
const maxExportNameBytes = 200

// Dir is the name of the directory of f's application: its id, made safe.
func (f ExportFile) Dir() string { return safeFileName(f.ApplicationID) }

// Name is the name f is copied to, {file_id}-{file_name} made safe: no path
// separator, control or format character (a right-to-left override, say),
// nor invalid UTF-8 (each becomes "_"), no leading dot, at most
// maxExportNameBytes bytes (cut before the extension, which is kept).
func (f ExportFile) Name() string {
	if f.FileName == "" {
		return safeFileName(f.FileID)
	}
	return safeFileName(f.FileID + "-" + f.FileName)
}

// safeFileName makes s a safe, non-empty name for one file or directory.
func safeFileName(s string) string {
	s = strings.ToValidUTF8(s, "_")
	s = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(s, ".")
	if len(s) > maxExportNameBytes {
		ext := path.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		s = truncateUTF8(s[:len(s)-len(ext)], maxExportNameBytes-len(ext)) + ext
	}
	if s == "" {
		return "_"
	}
	return s
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
