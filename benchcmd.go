package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"onboard/bench"
	"onboard/config"
	"onboard/storage/postgres/scratchdb"
)

// BenchCmd measures the server's throughput and latency over loopback,
// against the ceilings of a raw Badger read and a durable insert served
// by echo on the same machine.
type BenchCmd struct {
	Apps        int           `name:"apps" short:"n" default:"2000" help:"Applications to seed before measuring."`
	Concurrency int           `default:"32" help:"Concurrent connections (one worker each)."`
	Duration    time.Duration `default:"5s" help:"How long each operation runs."`
	Keep        bool          `help:"Keep the temporary directory of the run (its path goes to stderr)."`
	JSON        bool          `name:"json" help:"Print the results as one JSON object."`
	CPUProfile  string        `name:"cpuprofile" type:"path" placeholder:"FILE" help:"Write a CPU profile of the process (server, client and receiver) while it measures the API's operations to FILE, for go tool pprof."`
	PostgresURL string        `name:"postgres-url" placeholder:"URL" help:"Measure the server on PostgreSQL: create a temporary database on the server at URL (its role needs CREATEDB), keep the records there and drop it at the end; the ceilings are then a raw read and insert in that database."`
}

// Run starts the server in this process on a fresh temporary data
// directory (the sandbox defaults, whatever --config and --data-dir say),
// seeds it, runs every operation for the duration at the concurrency,
// and prints the results; it fails when a request failed.
func (c *BenchCmd) Run(e *env) error {
	if c.Apps < 1 || c.Concurrency < 1 || c.Duration <= 0 {
		return errors.New("bench: --apps, --concurrency and --duration must be positive")
	}
	began := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "bench: %5.1fs "+format+"\n", append([]any{time.Since(began).Seconds()}, args...)...)
	}
	tmp, err := os.MkdirTemp("", "onboard-bench-")
	if err != nil {
		return err
	}
	if c.Keep {
		defer progress("kept %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	startCeilings := startCeilingStore
	var dbURL string
	if c.PostgresURL != "" {
		var drop func(context.Context) error
		if dbURL, drop, err = scratchdb.Create(context.Background(), c.PostgresURL, "onboard_bench_"); err != nil {
			return fmt.Errorf("bench: --postgres-url: %w", err)
		}
		defer func() {
			if err := drop(context.Background()); err != nil {
				progress("%v", err)
			}
		}()
		progress("records in PostgreSQL, database %s", dbURL[strings.LastIndex(dbURL, "/")+1:])
		startCeilings = func(string) (bench.CeilingStore, error) {
			return startPostgresCeilingStore(dbURL, config.Default().Storage.MaxConnections)
		}
	}
	report, err := bench.Run(bench.Options{
		Apps: c.Apps, Concurrency: c.Concurrency, Duration: c.Duration, CPUProfile: c.CPUProfile,
		Dir: tmp, Progress: progress, StartCeilings: startCeilings,
		StartServer: func(dataDir string) (bench.Server, error) {
			srv, err := startBenchServer(dataDir, dbURL)
			if err != nil {
				return nil, err
			}
			return srv, nil
		},
	})
	if err != nil {
		return err
	}
	if c.JSON {
		err = report.WriteJSON(e.stdout)
	} else {
		err = report.WriteTable(e.stdout)
	}
	if err != nil {
		return err
	}
	if failed := report.Failures(); failed > 0 {
		return fmt.Errorf("bench: %d requests failed", failed)
	}
	return nil
}

// Help is the detailed help of onboard bench.
func (c *BenchCmd) Help() string {
	return `It runs the server in this process, as serve does, on a fresh temporary data directory with the sandbox defaults (--config and --data-dir do not apply) and no rate limit, listening on 127.0.0.1 only. It seeds applications through the API, then runs each operation for --duration at --concurrency: create, get, list (50), PATCH (spread over the seeded applications, then all of one: patch hot), decision and the applicant form's stage save. It measures two ceilings on the same machine, through echo on loopback with the same client: a raw Badger read of a 2 KB value and a durable (synced) 2 KB insert, first and again next to each operation. With --postgres-url the records are kept in a temporary PostgreSQL database instead, and the ceilings are a raw primary-key read and an autocommitted insert in it, through a pool of the size the server has (storage.max_connections, 10). The table compares reads with the first and writes with the second, each with the measurement next to it, and ends with the process's RSS and the data directory's size per application. Exit status 1 when a request failed.`
}
