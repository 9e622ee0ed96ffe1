package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestListErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.create(t, "acme", "")
	sentCursor := ""
	for i := 0; i < 2; i++ {
		e.create(t, "acme", "")
	}
	res := decode(t, e.do("GET", "/api/external/applications?status=sent&limit=1", "acme", ""))
	sentCursor = res["next_cursor"].(string)
	tests := []struct {
		query string
		want  string
	}{
		{"status=bogus", "Invalid status 'bogus'"},
		{"status=SENT", "Invalid status 'SENT'"},
		{"limit=0", "limit must be between 1 and 100"},
		{"limit=101", "limit must be between 1 and 100"},
		{"limit=-1", "limit must be between 1 and 100"},
		{"limit=ten", "limit must be between 1 and 100"},
		{"limit=1.5", "limit must be between 1 and 100"},
		{"cursor=not-a-cursor", "Invalid cursor"},
		{"cursor=AAAA", "Invalid cursor"},
		{"cursor=" + url.QueryEscape(sentCursor), "Invalid cursor"}, // made for status=sent, used without it
		{"status=created&cursor=" + url.QueryEscape(sentCursor), "Invalid cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantError(t, e.do("GET", "/api/external/applications?"+tt.query, "acme", ""), http.StatusBadRequest, errBody(tt.want))
		})
	}
}

// listAll pages through the list with the given page size and query.
func listAll(t *testing.T, e *env, key, query string, limit int) (ids []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		q := fmt.Sprintf("limit=%d%s", limit, query)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		w := e.do("GET", "/api/external/applications?"+q, key, "")
		if w.Code != http.StatusOK {
			t.Fatalf("list %s = %d %s", q, w.Code, w.Body)
		}
		res := decode(t, w)
		pages++
		for _, a := range res["applications"].([]any) {
			ids = append(ids, a.(map[string]any)["id"].(string))
		}
		more := res["has_more"].(bool)
		next, _ := res["next_cursor"].(string)
		if more != (next != "") {
			t.Fatalf("has_more = %v but next_cursor = %q", more, next)
		}
		if !more {
			return ids, pages
		}
		cursor = next
		if pages > 1000 {
			t.Fatal("pagination does not end")
		}
	}
}

func TestList(t *testing.T) {
	e := newEnv(t, envOptions{})
	var want []string // newest first
	for i := 0; i < 12; i++ {
		want = append([]string{e.create(t, "acme", "")}, want...)
		e.clock.Advance(1)
	}
	e.create(t, "globex", `{"primary_contact":{"email":"a@example.com"},"country":"GB","company_number":"10000008","company_name":"Bluebell Group Limited"}`)

	got, pages := listAll(t, e, "acme", "", 5)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paging by 5 (-want +got):\n%s", diff)
	}
	if pages != 3 {
		t.Errorf("pages = %d, want 3", pages)
	}
	res := decode(t, e.do("GET", "/api/external/applications", "acme", ""))
	if n := len(res["applications"].([]any)); n != 12 || res["has_more"] != false || res["next_cursor"] != nil {
		t.Errorf("default page: %d applications, has_more %v, next_cursor %v", n, res["has_more"], res["next_cursor"])
	}

	// A status filter lists only that status, and its cursor pages within it.
	ctx := context.Background()
	for _, id := range want[:4] {
		if _, err := e.store.UpdateApplication(ctx, id, func(a *onboarding.Application) (onboarding.Changes, error) {
			a.Status = onboarding.StatusInProgress
			return onboarding.Changes{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = listAll(t, e, "acme", "&status=in_progress", 3)
	if diff := cmp.Diff(want[:4], got); diff != "" {
		t.Errorf("in_progress (-want +got):\n%s", diff)
	}
	got, _ = listAll(t, e, "acme", "&status=sent", 100)
	if diff := cmp.Diff(want[4:], got); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}

func TestListSummary(t *testing.T) {
	e := newEnv(t, envOptions{deterministic: true})
	e.create(t, "acme", "")
	w := e.do("GET", "/api/external/applications", "acme", "")
	golden(t, "list_applications.json", w.Body.Bytes())
}

// TestListUnderConcurrentInserts pages through the list while other
// requests create applications: every application that existed when the
// first page was read appears exactly once.
func TestListUnderConcurrentInserts(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := `{"primary_contact":{"email":"a@example.com"},"country":"FR","company_number":"1","company_name":"X"}`
	existing := map[string]bool{}
	for i := 0; i < 40; i++ {
		existing[e.create(t, "acme", body)] = true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if r := e.do("POST", "/api/external/applications", "acme", body); r.Code != http.StatusCreated {
					t.Errorf("concurrent create = %d", r.Code)
					return
				}
			}
		}()
	}
	got, _ := listAll(t, e, "acme", "", 3)
	close(stop)
	wg.Wait()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("application %s listed %d times", id, n)
		}
	}
	for id := range existing {
		if seen[id] != 1 {
			t.Errorf("application %s that existed before paging was listed %d times", id, seen[id])
		}
	}
}
