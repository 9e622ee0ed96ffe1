//go:build !unix

package server

// openFileLimit is 0: the system has no descriptor limit to read, and
// the server derives no connection or download cap from it.
func openFileLimit() int { return 0 }

// openFiles is 0: the system does not list open descriptors.
func openFiles() int { return 0 }
