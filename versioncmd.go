package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints versionLine.
func (VersionCmd) Run(e *env) error {
	fmt.Fprintln(e.stdout, versionLine())
	return nil
}

// versionLine is what onboard version and onboard --version print: the
// module version, the VCS revision when known, the Go version and the
// platform.
func versionLine() string {
	revision := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				revision = " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("onboard %s%s %s %s/%s", version(), revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// version is the module version of the binary, "(devel)" when it was not
// built from a tagged module.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
