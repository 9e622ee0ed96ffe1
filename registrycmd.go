package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"onboard/registry"
)

// RegistryCmd groups the registry commands.
type RegistryCmd struct {
	Record RegistryRecordCmd `cmd:"" help:"Call the live registry about one company and save every answer as a recording (fixture)."`
}

// RegistryRecordCmd records a company's live registry answers in the
// fixture format the sandbox serves (testdata/registry/README.md).
type RegistryRecordCmd struct {
	Country string `required:"" enum:"GB,IE" help:"Registry: GB (Companies House) or IE (CRO)."`
	Number  string `required:"" help:"Company number."`
	Out     string `default:"testdata/registry" help:"Directory the recordings are written to (created if missing)." placeholder:"DIR"`
}

// Run makes every request onboard makes about the company against the live
// registry, with the configured credentials, through a Recorder: recordings
// hold no credentials, cookies or pre-signed signatures. It prints the files
// written, one per line, on stdout, and what each step answered on stderr.
func (c *RegistryRecordCmd) Run(e *env) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	switch {
	case c.Country == "GB" && cfg.Registry.CompaniesHouseAPIKey == "":
		return errors.New("registry record --country GB needs registry.companies_house_api_key in the configuration")
	case c.Country == "IE" && (cfg.Registry.CROEmail == "" || cfg.Registry.CROAPIKey == ""):
		return errors.New("registry record --country IE needs registry.cro_email and registry.cro_api_key in the configuration")
	}
	// Recordings are fixtures for the repository, public registry data:
	// readable by all (0644 files in 0755 directories), unlike what the
	// process writes under main's umask.
	syscall.Umask(0o022)
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("recordings directory: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	live := http.DefaultTransport.(*http.Transport).Clone()
	rec := registry.NewRecorder(live, c.Out, nil)
	opts := registryOptions(cfg)
	opts.Mode = registry.ModeLive // whatever registry.mode says
	opts.Transport = rec
	reg, err := registry.New(opts)
	if err != nil {
		return err
	}
	err = reg.Visit(ctx, c.Country, strings.TrimSpace(c.Number), func(line string) {
		fmt.Fprintln(e.stderr, line)
	})
	for _, f := range rec.Files() {
		fmt.Fprintln(e.stdout, f)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%d files written under %s\n", len(rec.Files()), c.Out)
	return nil
}
