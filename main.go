// Command onboard is a self-hosted Partner Onboarding API: one binary with an
// embedded store that onboards business customers (KYB) for a partner
// platform. See README.md for the commands and the API.
package main

import (
	"embed"
	"io"
	"os"
	"syscall"
)

// registryFixtures are the recorded registry answers served in sandbox mode.
//
//go:embed testdata/registry
var registryFixtures embed.FS

func main() {
	// Every file and directory the process creates is private to its
	// user, those Badger creates with 0644 included: it has no option
	// for their mode. Modes given explicitly (chmod) are not affected.
	syscall.Umask(0o077)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 on
// success, 1 when the command failed, 2 when the command line was wrong.
func run(args []string, stdout, stderr io.Writer) int {
	return runCLI(args, stdout, stderr)
}
