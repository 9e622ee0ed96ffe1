package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"onboard/bench"
	"onboard/server"
	"onboard/storage"
	"onboard/storage/postgres"
)

// ceilingStore is the raw database of onboard bench's ceilings, served on
// loopback through echo as the API is: a point read of a stored value and
// a durable insert of a new one.
type ceilingStore struct {
	kv     rawKV
	hs     *http.Server
	served chan error
	base   string // http://127.0.0.1:port/kv/
}

// rawKV is the raw database of the ceilings, on either backend.
type rawKV interface {
	server.CeilingKV
	Close() error
}

// startCeilingStore opens a raw Badger database in dir and serves it on
// 127.0.0.1.
func startCeilingStore(dir string) (bench.CeilingStore, error) {
	kv, err := storage.OpenRawKV(dir, nil)
	if err != nil {
		return nil, err
	}
	return serveCeilingStore(kv)
}

// startPostgresCeilingStore opens a raw table in the PostgreSQL database
// at url, with a pool of maxConns, and serves it on 127.0.0.1.
func startPostgresCeilingStore(url string, maxConns int) (bench.CeilingStore, error) {
	kv, err := postgres.OpenRawKV(context.Background(), url, maxConns)
	if err != nil {
		return nil, err
	}
	return serveCeilingStore(kv)
}

// serveCeilingStore serves kv on 127.0.0.1 through echo, as the API is.
func serveCeilingStore(kv rawKV) (bench.CeilingStore, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		kv.Close()
		return nil, err
	}
	c := &ceilingStore{
		kv: kv, served: make(chan error, 1), base: "http://" + ln.Addr().String() + "/kv/",
		hs: &http.Server{Handler: server.CeilingHandler(kv), ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { c.served <- c.hs.Serve(ln) }()
	return c, nil
}

// URL is the base URL of the values.
func (c *ceilingStore) URL() string { return c.base }

// Put stores a value directly.
func (c *ceilingStore) Put(key string, value []byte) error { return c.kv.Put(key, value) }

// Close stops serving and closes the database.
func (c *ceilingStore) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.hs.Shutdown(ctx)
	if serr := <-c.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, c.kv.Close())
}
