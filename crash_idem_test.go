package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// crashKeys are the Idempotency-Keys of the idempotent creates of a crash
// run, each with the application its answer named: "" while the answer has
// not arrived (the server was killed first), until a retry with the same
// key after the restart gets one.
type crashKeys struct {
	mu       sync.Mutex
	answers  map[string]string // Idempotency-Key → application id
	retried  int               // creates retried after a kill
	replayed int               // retries answered with Idempotent-Replayed: true
}

func newCrashKeys() *crashKeys { return &crashKeys{answers: map[string]string{}} }

func (k *crashKeys) note(key, appID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.answers[key] = appID
}

// idemContact is the primary contact's e-mail address of the idempotent
// create with key: it tells the applications of the keys apart.
func idemContact(key string) string { return "idem-" + key + "@example.com" }

// postIdempotent sends the create of key with its Idempotency-Key and
// returns the answer's status, the application it names, and whether it
// was a replay.
func postIdempotent(client *http.Client, base, apiKey, key string) (int, string, bool, error) {
	body := `{"primary_contact":{"email":"` + idemContact(key) + `"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/external/applications", strings.NewReader(body))
	if err != nil {
		return 0, "", false, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", false, err
	}
	defer resp.Body.Close()
	var v struct {
		ApplicationID string `json:"application_id"`
		Error         string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return resp.StatusCode, "", false, err
	}
	if resp.StatusCode != http.StatusCreated {
		return resp.StatusCode, "", false, fmt.Errorf("%d %s", resp.StatusCode, v.Error)
	}
	return resp.StatusCode, v.ApplicationID, resp.Header.Get("Idempotent-Replayed") == "true", nil
}

// crashIdemWorker sends idempotent creates, each with a key of its own,
// noting each key before it is sent and its answer once it arrives, until
// stop is closed or the server is gone.
func crashIdemWorker(base, apiKey, name string, keys *crashKeys, stop <-chan struct{}) {
	client := &http.Client{Timeout: 10 * time.Second}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("%s-%d", name, n)
		keys.note(key, "")
		_, id, _, err := postIdempotent(client, base, apiKey, key)
		if err != nil {
			return // the server is gone
		}
		keys.note(key, id)
	}
}

// retryUnanswered retries, against the restarted server p, every create
// whose answer did not arrive, with its key and body, as a client would.
func (k *crashKeys) retryUnanswered(t *testing.T, p *serveProc, apiKey string) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, id := range k.answers {
		if id != "" {
			continue
		}
		_, id, replayed, err := postIdempotent(client, p.base, apiKey, key)
		if err != nil {
			t.Fatalf("retry of the create with Idempotency-Key %s: %v", key, err)
		}
		k.answers[key] = id
		k.retried++
		if replayed {
			k.replayed++
		}
	}
}

// check reads every application and every application.created event of
// the server p and counts the keys that did not produce exactly one
// application, the one their answers named, announced by exactly one
// application.created event.
func (k *crashKeys) check(t *testing.T, p *serveProc, apiKey string) (duplicated int) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	byContact := map[string][]string{} // e-mail address → application ids
	path := "/api/external/applications?limit=100"
	for {
		var page struct {
			Applications []struct {
				ID             string `json:"id"`
				PrimaryContact struct {
					Email string `json:"email"`
				} `json:"primary_contact"`
			} `json:"applications"`
			HasMore    bool    `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, path, apiKey, "")), &page); err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Applications {
			byContact[a.PrimaryContact.Email] = append(byContact[a.PrimaryContact.Email], a.ID)
		}
		if !page.HasMore {
			break
		}
		path = "/api/external/applications?limit=100&cursor=" + url.QueryEscape(*page.NextCursor)
	}
	created := map[string]int{} // application id → application.created events
	path = "/api/external/events?type=application.created&limit=100"
	for {
		var page struct {
			Events []struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			} `json:"events"`
			HasMore    bool    `json:"has_more"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(p.wantStatus(t, http.StatusOK, http.MethodGet, path, apiKey, "")), &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			created[e.Data.ID]++
		}
		if !page.HasMore {
			break
		}
		path = "/api/external/events?type=application.created&limit=100&cursor=" + url.QueryEscape(*page.NextCursor)
	}
	for key, answered := range k.answers {
		ids := byContact[idemContact(key)]
		switch {
		case answered == "":
			t.Errorf("Idempotency-Key %s: never answered", key)
			duplicated++
		case len(ids) != 1 || ids[0] != answered:
			t.Errorf("Idempotency-Key %s: applications %v, want only %s, the one answered", key, ids, answered)
			duplicated++
		case created[answered] != 1:
			t.Errorf("Idempotency-Key %s: %d application.created events for %s, want 1", key, created[answered], answered)
			duplicated++
		}
	}
	return duplicated
}
