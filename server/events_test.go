package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// eventsPage decodes a page of list events.
type eventsPage struct {
	Events []struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	} `json:"events"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func (e *env) events(t *testing.T, key, query string) eventsPage {
	t.Helper()
	w := e.do("GET", "/api/external/events"+query, key, "")
	if w.Code != http.StatusOK {
		t.Fatalf("list events%s = %d %s", query, w.Code, w.Body)
	}
	var p eventsPage
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEventsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	ireland := `{"primary_contact":{"email":"ciara@emerald.example","name":"Ciara"},"country":"IE","company_number":"100001","company_name":"Emerald Software DAC"}`
	first := e.create(t, "acme", ireland)
	second := e.create(t, "acme", ireland)
	e.create(t, "globex", "")
	// PATCH emits nothing.
	if w := e.do("PATCH", "/api/external/applications/"+first, "acme", `{"fields":{"industry":"software"}}`); w.Code != http.StatusOK {
		t.Fatalf("PATCH = %d %s", w.Code, w.Body)
	}

	all := e.events(t, "acme", "")
	type item struct{ Type, App string }
	var got []item
	for _, ev := range all.Events {
		var data struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatal(err)
		}
		got = append(got, item{ev.Type, data.ID})
	}
	want := []item{{"application.sent", second}, {"application.created", second}, {"application.sent", first}, {"application.created", first}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acme's events, newest first (-want +got):\n%s", diff)
	}
	if all.HasMore || all.NextCursor != nil {
		t.Errorf("has_more %v next_cursor %v", all.HasMore, all.NextCursor)
	}

	// One event, exactly as listed.
	w := e.do("GET", "/api/external/events/"+all.Events[0].ID, "acme", "")
	if w.Code != http.StatusOK {
		t.Fatalf("get event = %d %s", w.Code, w.Body)
	}
	listed := e.do("GET", "/api/external/events?limit=1", "acme", "")
	var raw struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(listed.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw.Events[0]) != w.Body.String() {
		t.Errorf("get event and list differ:\n%s\n%s", raw.Events[0], w.Body)
	}

	// Paging with a type filter: the cursor carries the filter.
	page := e.events(t, "acme", "?type=application.created&limit=1")
	if len(page.Events) != 1 || page.Events[0].Type != "application.created" || !page.HasMore || page.NextCursor == nil {
		t.Fatalf("first page %+v", page)
	}
	next := e.events(t, "acme", "?type=application.created&limit=1&cursor="+*page.NextCursor)
	if len(next.Events) != 1 || next.Events[0].ID == page.Events[0].ID || next.HasMore || next.NextCursor != nil {
		t.Errorf("second page %+v", next)
	}

	var apps listResponse
	if err := json.Unmarshal(e.do("GET", "/api/external/applications?limit=1", "acme", "").Body.Bytes(), &apps); err != nil || apps.NextCursor == nil {
		t.Fatalf("list applications: %v", err)
	}
	appsCursor := *apps.NextCursor
	if w := e.do("GET", "/api/external/applications?cursor="+*page.NextCursor, "acme", ""); w.Code != http.StatusBadRequest {
		t.Errorf("an events cursor on list applications = %d, want 400", w.Code)
	}
	errs := []struct {
		name, key, path string
		status          int
		msg             string
	}{
		{"unknown type", "acme", "/api/external/events?type=application.updated", 400, "Invalid event type 'application.updated'"},
		{"limit 0", "acme", "/api/external/events?limit=0", 400, "limit must be between 1 and 100"},
		{"limit 101", "acme", "/api/external/events?limit=101", 400, "limit must be between 1 and 100"},
		{"bad cursor", "acme", "/api/external/events?cursor=abc", 400, "Invalid cursor"},
		{"cursor of another filter", "acme", "/api/external/events?type=application.sent&cursor=" + *page.NextCursor, 400, "Invalid cursor"},
		{"cursor of list applications", "acme", "/api/external/events?cursor=" + appsCursor, 400, "Invalid cursor"},
		{"missing scope", "acme-read", "/api/external/events", 401, "API key missing required scopes: events:read"},
		{"no key", "", "/api/external/events", 401, "Missing API key"},
		{"unknown event", "acme", "/api/external/events/evt_01JD0000000000000000000000", 404, "Event not found"},
		{"not an event id", "acme", "/api/external/events/nope", 404, "Event not found"},
		{"another organization's event", "globex", "/api/external/events/" + all.Events[0].ID, 404, "Event not found"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do("GET", tt.path, tt.key, ""), tt.status, errBody(tt.msg))
		})
	}
}
