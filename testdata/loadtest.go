//go:build ignore

// Loadtest drives a running onboard server over loopback and prints, per
// endpoint, requests, throughput and latency percentiles. It is bounded in
// time and stops by itself.
//
//	go run testdata/loadtest.go -key svc_… [-url http://127.0.0.1:8080] [-duration 10s] [-concurrency 8]
//
// Each worker creates an application (sandbox company 10000001), then loops
// over get, list, PATCH and field catalog on applications it created.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "server base URL")
	key := flag.String("key", "", "API key with every applications scope")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	concurrency := flag.Int("concurrency", 8, "concurrent clients")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "loadtest: -key is required")
		os.Exit(2)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *concurrency}}
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	failures := map[string]int{}
	do := func(name, method, path, body string, want int) []byte {
		var rd io.Reader
		if body != "" {
			rd = bytes.NewReader([]byte(body))
		}
		req, _ := http.NewRequest(method, *base+"/api/external"+path, rd)
		req.Header.Set("Authorization", "Bearer "+*key)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		var out []byte
		if err == nil {
			out, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		elapsed := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || resp.StatusCode != want {
			failures[name]++
			return nil
		}
		lat[name] = append(lat[name], elapsed)
		return out
	}
	create := `{"primary_contact":{"email":"load@example.com","name":"Load Test"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`
	deadline := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []string
			for i := 0; time.Now().Before(deadline); i++ {
				if i%20 == 0 || len(ids) == 0 {
					var res struct {
						ID string `json:"application_id"`
					}
					if b := do("create", "POST", "/applications", create, 201); b != nil && json.Unmarshal(b, &res) == nil {
						ids = append(ids, res.ID)
					}
					continue
				}
				id := ids[i%len(ids)]
				switch i % 4 {
				case 0:
					do("get", "GET", "/applications/"+id, "", 200)
				case 1:
					do("list", "GET", "/applications?limit=50", "", 200)
				case 2:
					do("patch", "PATCH", "/applications/"+id, fmt.Sprintf(`{"fields":{"business_description":"load %d"}}`, i), 200)
				case 3:
					do("fields", "GET", "/applications/"+id+"/fields", "", 200)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%-8s %8s %8s %10s %10s %10s\n", "endpoint", "requests", "failed", "req/s", "p50", "p99")
	total := 0
	for _, name := range []string{"create", "get", "list", "patch", "fields"} {
		d := lat[name]
		slices.Sort(d)
		total += len(d)
		p := func(q float64) time.Duration {
			if len(d) == 0 {
				return 0
			}
			return d[int(q*float64(len(d)-1))]
		}
		fmt.Printf("%-8s %8d %8d %10.1f %10s %10s\n", name, len(d), failures[name], float64(len(d))/duration.Seconds(),
			p(0.50).Round(10*time.Microsecond), p(0.99).Round(10*time.Microsecond))
	}
	fmt.Printf("total    %8d requests, %.1f req/s over %s with %d clients\n", total, float64(total)/duration.Seconds(), *duration, *concurrency)
}
