package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// BlobsCmd groups the maintenance of the stored files.
type BlobsCmd struct {
	Sweep BlobsSweepCmd `cmd:"" help:"Remove the stored files no application or RFI request refers to (serve does this hourly on its own)."`
}

// BlobsSweepCmd removes orphan blobs from a data directory that no server
// is using: files a crash left between writing a file and committing its
// record, or between committing a record and deleting the file it dropped.
type BlobsSweepCmd struct {
	Grace time.Duration `help:"Keep unreferenced files younger than this." default:"1h" placeholder:"DURATION"`
}

// Run sweeps and prints what it found and removed.
func (c *BlobsSweepCmd) Run(e *env) error {
	if c.Grace < 0 {
		return fmt.Errorf("--grace must not be negative, not %s", c.Grace)
	}
	cfg, err := e.existingConfig()
	if err != nil {
		return err
	}
	a, err := openApp(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer a.close(e.stderr)
	res, err := a.sweeper.Sweep(context.Background(), c.Grace)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d files, %d removed (no record refers to them), %d newer than %s left alone\n", res.Blobs, res.Removed, res.Recent, c.Grace)
	return nil
}
