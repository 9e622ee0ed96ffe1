package onboarding

import "strings"

// TypedFileName returns name when it ends in an extension of contentType,
// and name with the type's usual extension appended otherwise. A file is
// offered for download and exported under its uploaded name, and the
// applicant chooses that name: a valid PDF that is also a page of script
// (a polyglot) uploaded as statement.html would open in a browser, with
// its script, on the machine of whoever downloads or exports it. As
// statement.html.pdf it opens as the PDF it was accepted as. Types the
// documents do not accept (PDF, PNG, JPEG, HEIC, HEIF) are left alone.
func TypedFileName(name, contentType string) string {
	exts := typeExtensions(contentType)
	if len(exts) == 0 {
		return name
	}
	lower := strings.ToLower(name)
	for _, ext := range exts {
		if strings.HasSuffix(lower, ext) {
			return name
		}
	}
	return name + exts[0]
}

// typeExtensions returns the extensions a file of contentType may carry,
// the usual one first; none for a type the documents do not accept.
func typeExtensions(contentType string) []string {
	switch contentType {
	case mimePDF:
		return []string{".pdf"}
	case mimePNG:
		return []string{".png"}
	case mimeJPEG:
		return []string{".jpg", ".jpeg", ".jpe", ".jfif"}
	case mimeHEIC:
		return []string{".heic", ".heif"}
	case mimeHEIF:
		return []string{".heif", ".heic"}
	}
	return nil
}
