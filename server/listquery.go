package server

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"onboard/onboarding"
)

// The list endpoints (applications, RFI requests, events, an application's
// activity) read the same query parameters with the same rules, in the same
// order: the list's filter when it has one, then limit, then cursor. The
// key's scope is checked before any of them.

// parseListQuery reads a list's query parameters: the filter named
// filterParam (parsed by parseFilter; empty when absent), then the page
// (parsePage).
func parseListQuery[F ~string](c echo.Context, filterParam string, parseFilter func(string) (F, error)) (F, onboarding.PageRequest, error) {
	var filter F
	if raw := c.QueryParam(filterParam); raw != "" {
		f, err := parseFilter(raw)
		if err != nil {
			return filter, onboarding.PageRequest{}, err
		}
		filter = f
	}
	page, err := parsePage(c)
	return filter, page, err
}

// parsePage reads a list's limit (empty: onboarding.DefaultListLimit) and
// cursor (empty: the first page).
func parsePage(c echo.Context) (onboarding.PageRequest, error) {
	var page onboarding.PageRequest
	var err error
	if page.Limit, err = parseLimit(c.QueryParam("limit")); err != nil {
		return onboarding.PageRequest{}, err
	}
	if raw := c.QueryParam("cursor"); raw != "" {
		if page.Cursor, err = onboarding.ParseCursor(raw); err != nil {
			return onboarding.PageRequest{}, err
		}
	}
	return page, nil
}

// parseLimit reads a list's limit parameter: empty is the default page
// size.
func parseLimit(raw string) (int, error) {
	if raw == "" {
		return onboarding.DefaultListLimit, nil
	}
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
