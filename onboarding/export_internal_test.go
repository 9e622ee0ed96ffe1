package onboarding

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormulaSafe(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"=1+2", "'=1+2"},
		{"+44 20", "'+44 20"},
		{"-5", "'-5"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tindent", "'\tindent"},
		{"\rreturn", "'\rreturn"},
		{"'quoted", "'quoted"},
		{"a=b", "a=b"},
		{" =space first", " =space first"},
		{"\nnewline", "\nnewline"},
		{"Émile", "Émile"},
	} {
		if got := formulaSafe(tt.in); got != tt.want {
			t.Errorf("formulaSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExportFileNames(t *testing.T) {
	const id = "3f1c2a4e-8b7d-4c6f-9a1e-2d5b7c9e0f13"
	long := strings.Repeat("a", 300) + ".pdf"
	longExt := "x." + strings.Repeat("b", 300)
	for _, tt := range []struct{ name, want string }{
		{"certificate.pdf", id + "-certificate.pdf"},
		{"", id},
		{"../../etc/passwd", id + "-.._.._etc_passwd"},
		{`C:\Windows\evil.exe`, id + `-C:_Windows_evil.exe`},
		{"tab\there\x00nul\x7fdel\u0085nel.pdf", id + "-tab_here_nul_del_nel.pdf"},
		{"invoice\u202efdp.exe", id + "-invoice_fdp.exe"},
		{"bad\xff\xfeutf8", id + "-bad_utf8"}, // one "_" for a run of invalid bytes
		{long, id + "-" + strings.Repeat("a", maxExportNameBytes-len(id)-1-4) + ".pdf"},
		{longExt, (id + "-x." + strings.Repeat("b", 300))[:maxExportNameBytes]},
		{strings.Repeat("€", 100) + ".pdf", id + "-" + strings.Repeat("€", 53) + ".pdf"}, // 37 + 159 + 4 bytes
	} {
		got := ExportFile{FileID: id, FileName: tt.name}.Name()
		if got != tt.want {
			t.Errorf("Name of %q = %q, want %q", tt.name, got, tt.want)
		}
		if len(got) > maxExportNameBytes || !utf8.ValidString(got) || strings.ContainsAny(got, "/\\\x00") {
			t.Errorf("Name of %q = %q: not a safe name", tt.name, got)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"", "_"},
		{".", "_"},
		{"..", "_"},
		{".hidden", "hidden"},
		{"../..", "_.."},
		{id, id},
	} {
		if got := safeFileName(tt.in); got != tt.want {
			t.Errorf("safeFileName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (ExportFile{ApplicationID: "../x"}).Dir(); got != "_x" {
		t.Errorf("Dir of ../x = %q, want _x", got)
	}
}
