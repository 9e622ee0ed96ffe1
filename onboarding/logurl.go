package onboarding

import "net/url"

// logURL is how an endpoint URL appears in the log: scheme://host/path,
// without the query (it may carry a token the receiver authenticates
// with), user information or fragment.
func logURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a valid URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}
