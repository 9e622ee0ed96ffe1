package blobs_test

import (
	"mime"
	"strings"
	"testing"

	"onboard/blobs"
	"onboard/onboarding"
)

func TestContentDisposition(t *testing.T) {
	tests := []struct {
		name     string
		d        onboarding.Download
		want     string
		wantName string // the file name a browser ends up with
	}{
		{
			name:     "ASCII",
			d:        onboarding.Download{FileName: "report.pdf"},
			want:     `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
			wantName: "report.pdf",
		},
		{
			name:     "inline",
			d:        onboarding.Download{FileName: "scan.png", Inline: true},
			want:     `inline; filename="scan.png"; filename*=UTF-8''scan.png`,
			wantName: "scan.png",
		},
		{
			name:     "UTF-8",
			d:        onboarding.Download{FileName: "Fáilte – report.pdf"},
			want:     `attachment; filename="F_ilte _ report.pdf"; filename*=UTF-8''F%C3%A1ilte%20%E2%80%93%20report.pdf`,
			wantName: "Fáilte – report.pdf",
		},
		{
			name:     "quotes",
			d:        onboarding.Download{FileName: `say "hi".pdf`},
			want:     `attachment; filename="say _hi_.pdf"; filename*=UTF-8''say%20%22hi%22.pdf`,
			wantName: `say "hi".pdf`,
		},
		{
			name:     "unix path",
			d:        onboarding.Download{FileName: "../../etc/passwd"},
			want:     `attachment; filename="passwd"; filename*=UTF-8''passwd`,
			wantName: "passwd",
		},
		{
			name:     "windows path",
			d:        onboarding.Download{FileName: `C:\Users\Áine\doc.pdf`},
			want:     `attachment; filename="doc.pdf"; filename*=UTF-8''doc.pdf`,
			wantName: "doc.pdf",
		},
		{
			name:     "mixed separators",
			d:        onboarding.Download{FileName: `a/b\c/d.txt`},
			want:     `attachment; filename="d.txt"; filename*=UTF-8''d.txt`,
			wantName: "d.txt",
		},
		{
			name:     "empty",
			d:        onboarding.Download{},
			want:     `attachment; filename="download"; filename*=UTF-8''download`,
			wantName: "download",
		},
		{
			name:     "directory only",
			d:        onboarding.Download{FileName: "docs/", Inline: true},
			want:     `inline; filename="download"; filename*=UTF-8''download`,
			wantName: "download",
		},
		{
			name:     "dot-dot",
			d:        onboarding.Download{FileName: ".."},
			want:     `attachment; filename="download"; filename*=UTF-8''download`,
			wantName: "download",
		},
		{
			name:     "header injection",
			d:        onboarding.Download{FileName: "a\r\nSet-Cookie: x=1"},
			want:     `attachment; filename="a__Set-Cookie: x=1"; filename*=UTF-8''a__Set-Cookie%3A%20x%3D1`,
			wantName: "a__Set-Cookie: x=1",
		},
		{
			name:     "percent and semicolon",
			d:        onboarding.Download{FileName: "100%; x.pdf"},
			want:     `attachment; filename="100%; x.pdf"; filename*=UTF-8''100%25%3B%20x.pdf`,
			wantName: "100%; x.pdf",
		},
		{
			name:     "invalid UTF-8",
			d:        onboarding.Download{FileName: "\xff.pdf"},
			want:     `attachment; filename="_.pdf"; filename*=UTF-8''%EF%BF%BD.pdf`,
			wantName: "\uFFFD.pdf",
		},
		{
			name:     "a PDF named as a page gets the PDF's extension",
			d:        onboarding.Download{FileName: "statement.html", ContentType: "application/pdf"},
			want:     `attachment; filename="statement.html.pdf"; filename*=UTF-8''statement.html.pdf`,
			wantName: "statement.html.pdf",
		},
		{
			name:     "an extension of the type is kept, in any case",
			d:        onboarding.Download{FileName: "Passport.JPEG", ContentType: "image/jpeg"},
			want:     `attachment; filename="Passport.JPEG"; filename*=UTF-8''Passport.JPEG`,
			wantName: "Passport.JPEG",
		},
		{
			name:     "no name, a typed default",
			d:        onboarding.Download{ContentType: "image/png"},
			want:     `attachment; filename="download.png"; filename*=UTF-8''download.png`,
			wantName: "download.png",
		},
		{
			name:     "attr-chars kept",
			d:        onboarding.Download{FileName: "a!#$&+-.^_`|~z"},
			want:     "attachment; filename=\"a!#$&+-.^_`|~z\"; filename*=UTF-8''a!#$&+-.^_`|~z",
			wantName: "a!#$&+-.^_`|~z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := blobs.ContentDisposition(tt.d)
			if got != tt.want {
				t.Errorf("ContentDisposition(%+v)\n got %s\nwant %s", tt.d, got, tt.want)
			}
			for _, c := range got {
				if c < 0x20 || c >= 0x7f {
					t.Errorf("header value %q holds %q; want printable ASCII only", got, c)
					break
				}
			}
			// What a client parsing the header sees (filename* wins).
			disp, params, err := mime.ParseMediaType(got)
			if err != nil {
				t.Fatalf("mime.ParseMediaType(%q): %v", got, err)
			}
			if wantDisp := map[bool]string{false: "attachment", true: "inline"}[tt.d.Inline]; disp != wantDisp {
				t.Errorf("disposition = %q; want %q", disp, wantDisp)
			}
			if params["filename"] != tt.wantName {
				t.Errorf("parsed filename = %q; want %q", params["filename"], tt.wantName)
			}
			if strings.ContainsAny(params["filename"], `/\`) {
				t.Errorf("parsed filename %q holds a path separator", params["filename"])
			}
		})
	}
}
