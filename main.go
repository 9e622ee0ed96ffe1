// Command onboard is a self-hosted Partner Onboarding API: one binary with an
// embedded store that onboards business customers (KYB) for a partner
// platform. See README.md for the commands and the API.
package main

import (
	"embed"
	"io"
	"os"
)

// registryFixtures are the recorded registry answers served in sandbox mode.
//
//go:embed testdata/registry
var registryFixtures embed.FS

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 on
// success, 1 when the command failed, 2 when the command line was wrong.
func run(args []string, stdout, stderr io.Writer) int {
	return runCLI(args, stdout, stderr)
}
