package admin_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"onboard/admin"
	"onboard/admin/admintest"
	"onboard/onboarding"
)

// TestAdminExportCutShort: a body that ends without its last part, or that
// is not an export, is an error, never a complete export.
func TestAdminExportCutShort(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(w http.ResponseWriter)
		want string
	}{
		{"no last part", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: 1\r\n\r\n{\"id\":\"x\"}\n\r\n--b--\r\n")
		}, admin.ErrExportCut.Error()},
		{"broken in a part", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: 1\r\n\r\n{\"id\":")
		}, admin.ErrExportCut.Error()},
		{"not an export", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[]")
		}, `admin socket: unexpected export answer "application/json"`},
		{"an error without a body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadGateway)
		}, "admin socket: 502 Bad Gateway"},
		{"a bad file name", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-File-Id: x\r\nExport-File-Name: %zz\r\n\r\nx\r\n--b--\r\n")
		}, `admin socket: bad Export-File-Name "%zz"`},
		{"a bad count", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=b")
			io.WriteString(w, "--b\r\nExport-Applications: many\r\n\r\nx\r\n--b--\r\n")
		}, "admin socket: bad export part map[Export-Applications:[many]]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := admintest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tt.body(w) }))
			_, err := client.Export(context.Background(), onboarding.ExportQuery{OrgID: "acme"}, &admintest.ExportSink{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("Export = %v, want %q", err, tt.want)
			}
		})
	}
}
