package admin

import (
	"net/http"
	"net/url"

	"onboard/server/web"
)

// query reads the query string of r as the API does (web.ParseQuery),
// each of names at most once (web.SingleParam), and returns the names
// given with their value; otherwise it answers the error and returns false.
func (s *handler) query(w http.ResponseWriter, r *http.Request, names ...string) (url.Values, bool) {
	q, err := web.ParseQuery(r.URL.RawQuery)
	if err == nil {
		for _, name := range names {
			if _, _, err = web.SingleParam(q, name); err != nil {
				break
			}
		}
	}
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	return q, true
}
