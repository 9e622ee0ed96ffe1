//go:build unix

package server

import (
	"os"
	"syscall"
)

// openFileLimit is the process's limit on open file descriptors
// (RLIMIT_NOFILE, the soft limit, which Go raises to the hard limit at
// start), or 0 when it cannot be read.
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}

// openFiles is the number of file descriptors the process has open, where
// the system lists them (/proc/self/fd, /dev/fd), or 0.
func openFiles() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if entries, err := os.ReadDir(dir); err == nil {
			return max(len(entries)-1, 0) // less the one reading the directory
		}
	}
	return 0
}
