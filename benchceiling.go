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

// measureCeilings measures the two ceilings on a raw database in dir,
// served by echo on loopback: a point read of one of keys stored values,
// and a durable insert of a new one.
func measureCeilings(client *http.Client, dir string, keys, concurrency int, d time.Duration, progress func(string, ...any)) ([]opResult, error) {
	kv, err := storage.OpenRawKV(dir, nil)
	if err != nil {
		return nil, err
	}
	defer kv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: server.CeilingHandler(kv), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			progress("ceiling server: %v", err)
		}
	}()
	base := "http://" + ln.Addr().String() + "/kv/"
	value := ceilingValue()

	progress("storing %d values for the read ceiling", keys)
	if err := parallel(keys, concurrency, func(i int) error {
		return kv.Put(fmt.Sprintf("r%08d", i), value)
	}); err != nil {
		return nil, err
	}
	progress("measuring the ceilings")
	read := runPhase(ceilingRead, concurrency, d, func(w, i int) error {
		_, _, err := send(client, benchRequest{method: "GET", url: fmt.Sprintf("%sr%08d", base, rand.IntN(keys)), want: http.StatusOK})
		return err
	})
	insert := runPhase(ceilingInsert, concurrency, d, func(w, i int) error {
		_, _, err := send(client, benchRequest{
			method: "POST", url: fmt.Sprintf("%sw%03d-%08d", base, w, i), body: value,
			contentType: "application/json", want: http.StatusNoContent,
		})
		return err
	})
	return []opResult{read, insert}, nil
}
