package server

import (
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
	"onboard/server/web"
)

// The list endpoints (applications, RFI requests, events, an application's
// activity) read the same query parameters with the same rules, in the same
// order: the list's filter when it has one, then limit, then cursor. The
// key's scope is checked before any of them. The query string is read
// strictly (web.ParseQuery): one that cannot be decoded, or a parameter
// given twice, is refused rather than read in part.

// parseListQuery reads a list's query parameters: the filter named
// filterParam (parsed by parseFilter, which refuses an empty one; empty
// when absent), then the page (parsePage).
func parseListQuery[F ~string](c echo.Context, filterParam string, parseFilter func(string) (F, error)) (F, onboarding.PageRequest, error) {
	var filter F
	q, err := web.ParseQuery(c.QueryString())
	if err != nil {
		return filter, onboarding.PageRequest{}, err
	}
	raw, given, err := web.SingleParam(q, filterParam)
	if err != nil {
		return filter, onboarding.PageRequest{}, err
	}
	if given {
		if filter, err = parseFilter(raw); err != nil {
			return filter, onboarding.PageRequest{}, err
		}
	}
	page, err := parsePage(q)
	return filter, page, err
}

// parseActivityQuery reads the query of a list without a filter: its page.
func parseActivityQuery(c echo.Context) (onboarding.PageRequest, error) {
	q, err := web.ParseQuery(c.QueryString())
	if err != nil {
		return onboarding.PageRequest{}, err
	}
	return parsePage(q)
}

// parsePage reads a list's limit (absent: onboarding.DefaultListLimit;
// given empty: onboarding.ErrInvalidLimit, as any other limit that is not
// a number) and cursor (absent or empty: the first page).
func parsePage(q url.Values) (onboarding.PageRequest, error) {
	var page onboarding.PageRequest
	raw, given, err := web.SingleParam(q, "limit")
	if err != nil {
		return onboarding.PageRequest{}, err
	}
	page.Limit = onboarding.DefaultListLimit
	if given {
		if page.Limit, err = parseLimit(raw); err != nil {
			return onboarding.PageRequest{}, err
		}
	}
	if raw, _, err = web.SingleParam(q, "cursor"); err != nil {
		return onboarding.PageRequest{}, err
	}
	if raw != "" {
		if page.Cursor, err = onboarding.ParseCursor(raw); err != nil {
			return onboarding.PageRequest{}, err
		}
	}
	return page, nil
}

// parseLimit reads a list's limit parameter: a whole number from 1 to
// onboarding.MaxListLimit.
func parseLimit(raw string) (int, error) {
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > onboarding.MaxListLimit {
		return 0, onboarding.ErrInvalidLimit
	}
	return n, nil
}

// listPage is the end of every list answer: whether more items follow, and
// the cursor of the next page (null at the end). Each answer embeds it
// after its items.
type listPage struct {
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// newListPage is the end of a list answer whose page has more items
// after it when hasMore, resumed with next (empty at the end).
func newListPage(hasMore bool, next string) listPage {
	p := listPage{HasMore: hasMore}
	if next != "" {
		p.NextCursor = &next
	}
	return p
}
