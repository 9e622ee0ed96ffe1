package server

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"onboard/onboarding"
)

// BenchmarkListActivity reads a page of 50 entries of an application's
// activity log through the router: the first page, and a page from a
// cursor deep in a long log (its cost must not grow with the log).
func BenchmarkListActivity(b *testing.B) {
	for _, n := range []int{60, 5000} {
		e := newEnv(b, envOptions{})
		id := e.create(b, "acme", "")
		log := make([]onboarding.Activity, n-2) // create logged 2
		for i := range log {
			log[i] = onboarding.Activity{At: testNow.Add(time.Duration(i) * time.Millisecond), Action: onboarding.ActionFieldsUpdated,
				Actor: onboarding.Actor{Type: onboarding.ActorAPIKey, ID: "k1", Name: "acme all"}, Fields: []string{"industry", "website"}}
		}
		for len(log) > 0 { // in transactions of at most 1000 entries
			chunk := log[:min(len(log), 1000)]
			log = log[len(chunk):]
			if _, err := e.store.UpdateApplication(context.Background(), id, func(*onboarding.Application) (onboarding.Changes, error) {
				return onboarding.Changes{Log: chunk}, nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("first_page_of_%d", n), func(b *testing.B) {
			benchRequest(b, e, "GET", activityPath(id, ""), "")
		})
		cursor := ""
		for p := e.activityPage(b, "acme", id, "?limit=100"); ; p = e.activityPage(b, "acme", id, "?limit=100&cursor="+url.QueryEscape(cursor)) {
			if p.NextCursor == nil || len(p.Entries) < 100 {
				break
			}
			cursor = *p.NextCursor
		}
		if cursor == "" {
			continue
		}
		b.Run(fmt.Sprintf("last_pages_of_%d", n), func(b *testing.B) {
			benchRequest(b, e, "GET", activityPath(id, "?cursor="+url.QueryEscape(cursor)), "")
		})
	}
}
