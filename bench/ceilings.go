package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// ceilingValueSize is the size of the values the ceilings read and write,
// about that of a stored application.
const ceilingValueSize = 2048

// ceilingValue is a JSON object of ceilingValueSize bytes.
func ceilingValue() []byte {
	head := `{"id":"00000000-0000-4000-8000-000000000000","status":"in_progress","padding":"`
	tail := `"}`
	return []byte(head + strings.Repeat("x", ceilingValueSize-len(head)-len(tail)) + tail)
}

// Names of the ceiling rows, which the API's operations are compared with.
const (
	CeilingRead   = "ceiling read"
	CeilingInsert = "ceiling insert"
)

// CeilingStore is the raw database of the ceilings, served on loopback:
// GET URL()+key answers 200 with a stored value, POST URL()+key stores the
// body durably and answers 204.
type CeilingStore interface {
	// URL is the base URL of the values (http://127.0.0.1:port/kv/).
	URL() string
	// Put stores a value directly, not through HTTP, for the read ceiling.
	Put(key string, value []byte) error
	// Close stops serving and closes the database.
	Close() error
}

// benchCeilings measures the two ceilings over HTTP: a point read of one
// of the stored values, and a durable insert of a new one. The ceilings are
// measured at the start of a run and again next to each operation of the
// API (measure), since what the machine can do drifts within a run: each
// operation is compared with the ceiling measured next to it, and each
// ceiling's row merges all its measurements.
type benchCeilings struct {
	client      *http.Client
	dir         string
	store       CeilingStore
	base        string // http://127.0.0.1:port/kv/
	value       []byte
	keys        int
	concurrency int
	progress    func(string, ...any)
	// runs are the measurements of each ceiling, by row name; inserts
	// counts the insert measurements, which write keys of their own.
	runs    map[string][]Result
	inserts int
}

// startCeilings starts the ceilings' database in dir with start and
// stores keys values for the read ceiling.
func startCeilings(client *http.Client, start func(dir string) (CeilingStore, error), dir string, keys, concurrency int, progress func(string, ...any)) (*benchCeilings, error) {
	store, err := start(dir)
	if err != nil {
		return nil, err
	}
	c := &benchCeilings{
		client: client, dir: dir, store: store, base: store.URL(),
		value: ceilingValue(), keys: keys, concurrency: concurrency, progress: progress, runs: map[string][]Result{},
	}
	progress("storing %d values for the read ceiling", keys)
	if err := Parallel(keys, concurrency, func(i int) error {
		return store.Put(fmt.Sprintf("r%08d", i), c.value)
	}); err != nil {
		return nil, errors.Join(err, c.close())
	}
	return c, nil
}

// measure runs the ceiling named name (CeilingRead or CeilingInsert) for
// d and keeps the result for the ceiling's row.
func (c *benchCeilings) measure(name string, d time.Duration) Result {
	var r Result
	switch name {
	case CeilingRead:
		r = RunPhase(name, c.concurrency, d, func(w, i int) error {
			_, _, err := Send(c.client, Request{Method: "GET", URL: fmt.Sprintf("%sr%08d", c.base, rand.IntN(c.keys)), Want: http.StatusOK})
			return err
		})
	case CeilingInsert:
		m := c.inserts
		c.inserts++
		r = RunPhase(name, c.concurrency, d, func(w, i int) error {
			_, _, err := Send(c.client, Request{
				Method: "POST", URL: fmt.Sprintf("%sw%02d-%03d-%08d", c.base, m, w, i), Body: c.value,
				ContentType: "application/json", Want: http.StatusNoContent,
			})
			return err
		})
	default:
		panic("no ceiling " + name)
	}
	c.runs[name] = append(c.runs[name], r)
	return r
}

// rows are the ceilings' rows: each ceiling's measurements merged.
func (c *benchCeilings) rows() []Result {
	return []Result{mergeResults(CeilingRead, c.runs[CeilingRead]), mergeResults(CeilingInsert, c.runs[CeilingInsert])}
}

// close stops serving and closes the database.
func (c *benchCeilings) close() error { return c.store.Close() }
