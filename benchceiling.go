package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"onboard/server"
	"onboard/storage"
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
	ceilingRead   = "ceiling read"
	ceilingInsert = "ceiling insert"
)

// benchCeilings serves a raw database on loopback through echo, for the
// two ceilings: a point read of one of its stored values, and a durable
// insert of a new one. The ceilings are measured at the start of a run and
// again next to each operation of the API (measure), since what the
// machine can do drifts within a run: each operation is compared with the
// ceiling measured next to it, and each ceiling's row merges all its
// measurements.
type benchCeilings struct {
	client      *http.Client
	dir         string
	kv          *storage.RawKV
	hs          *http.Server
	served      chan error
	base        string // http://127.0.0.1:port/kv/
	value       []byte
	keys        int
	concurrency int
	progress    func(string, ...any)
	// runs are the measurements of each ceiling, by row name; inserts
	// counts the insert measurements, which write keys of their own.
	runs    map[string][]opResult
	inserts int
}

// startCeilings opens a raw database in dir, stores keys values for the
// read ceiling, and serves it on 127.0.0.1.
func startCeilings(client *http.Client, dir string, keys, concurrency int, progress func(string, ...any)) (*benchCeilings, error) {
	kv, err := storage.OpenRawKV(dir, nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		kv.Close()
		return nil, err
	}
	c := &benchCeilings{
		client: client, dir: dir, kv: kv, served: make(chan error, 1), base: "http://" + ln.Addr().String() + "/kv/",
		value: ceilingValue(), keys: keys, concurrency: concurrency, progress: progress, runs: map[string][]opResult{},
		hs: &http.Server{Handler: server.CeilingHandler(kv), ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { c.served <- c.hs.Serve(ln) }()
	progress("storing %d values for the read ceiling", keys)
	if err := parallel(keys, concurrency, func(i int) error {
		return kv.Put(fmt.Sprintf("r%08d", i), c.value)
	}); err != nil {
		return nil, errors.Join(err, c.close())
	}
	return c, nil
}

// measure runs the ceiling named name (ceilingRead or ceilingInsert) for
// d and keeps the result for the ceiling's row.
func (c *benchCeilings) measure(name string, d time.Duration) opResult {
	var r opResult
	switch name {
	case ceilingRead:
		r = runPhase(name, c.concurrency, d, func(w, i int) error {
			_, _, err := send(c.client, benchRequest{method: "GET", url: fmt.Sprintf("%sr%08d", c.base, rand.IntN(c.keys)), want: http.StatusOK})
			return err
		})
	case ceilingInsert:
		m := c.inserts
		c.inserts++
		r = runPhase(name, c.concurrency, d, func(w, i int) error {
			_, _, err := send(c.client, benchRequest{
				method: "POST", url: fmt.Sprintf("%sw%02d-%03d-%08d", c.base, m, w, i), body: c.value,
				contentType: "application/json", want: http.StatusNoContent,
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
func (c *benchCeilings) rows() []opResult {
	return []opResult{mergeResults(ceilingRead, c.runs[ceilingRead]), mergeResults(ceilingInsert, c.runs[ceilingInsert])}
}

// close stops serving and closes the database.
func (c *benchCeilings) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.hs.Shutdown(ctx)
	if serr := <-c.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, c.kv.Close())
}
