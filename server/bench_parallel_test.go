package server

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"onboard/storage/storetest"
)

// parallelWriters is the number of concurrent writers of the parallel
// benchmarks, as onboard bench's default connections.
const parallelWriters = 32

// BenchmarkPatchApplicationParallel PATCHes parallelWriters different
// applications at once: commits group, and updates of different
// applications must not queue behind each other's locks. Compare with
// BenchmarkRawInsertParallel, its ceiling.
func BenchmarkPatchApplicationParallel(b *testing.B) {
	e := newEnv(b, envOptions{})
	ids := make([]string, parallelWriters)
	for i := range ids {
		ids[i] = e.create(b, "acme", "")
	}
	auth := "Bearer " + e.keys["acme"]
	var workers atomic.Int64
	b.SetParallelism(parallelWriters / 2) // 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := ids[int(workers.Add(1)-1)%len(ids)]
		for i := 0; pb.Next(); i++ {
			r := httptest.NewRequest("PATCH", "/api/external/applications/"+id, strings.NewReader(fmt.Sprintf(`{"fields":{"business_description":"Bench %d"}}`, i)))
			r.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, r)
			if w.Code != 200 {
				b.Fatalf("PATCH = %d %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkRawInsertParallel is the ceiling of the parallel write
// benchmarks: parallelWriters writers each inserting 2 KB values into a
// bare table on the test store's backend (storetest.OpenRawKV), one
// durable commit each.
func BenchmarkRawInsertParallel(b *testing.B) {
	kv := storetest.OpenRawKV(b)
	value := []byte(strings.Repeat("x", 2048))
	var workers atomic.Int64
	b.SetParallelism(parallelWriters / 2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := workers.Add(1)
		for i := 0; pb.Next(); i++ {
			if err := kv.Put(fmt.Sprintf("w%03d-%09d", w, i), value); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateApplicationParallel creates applications from
// parallelWriters clients at once, with and without an Idempotency-Key:
// saving the response for the key must not cost the client a second
// synced commit.
func BenchmarkCreateApplicationParallel(b *testing.B) {
	for _, idempotent := range []bool{false, true} {
		b.Run(fmt.Sprintf("idempotency-key=%t", idempotent), func(b *testing.B) {
			e := newEnv(b, envOptions{})
			auth := "Bearer " + e.keys["acme"]
			var requests atomic.Int64
			b.SetParallelism(parallelWriters / 2)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest("POST", "/api/external/applications", strings.NewReader(
						`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`))
					r.Header.Set("Authorization", auth)
					r.Header.Set("Content-Type", "application/json")
					if idempotent {
						r.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", requests.Add(1)))
					}
					w := httptest.NewRecorder()
					e.h.ServeHTTP(w, r)
					if w.Code != 201 {
						b.Fatalf("create = %d %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}
