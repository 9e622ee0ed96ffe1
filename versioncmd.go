package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the module version, the VCS revision when known, and the Go version.
func (VersionCmd) Run(e *env) error {
	revision := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				revision = " " + s.Value[:12]
			}
		}
	}
	fmt.Fprintf(e.stdout, "onboard %s%s %s %s/%s\n", version(), revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version is the module version of the binary, "(devel)" when it was not
// built from a tagged module.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
