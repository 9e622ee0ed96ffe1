package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// serveLockName is the file in the data directory that a server on a
// shared record store locks.
const serveLockName = "serve.lock"

// lockDataDir takes the data directory dir for this server when the
// records are not in it: the embedded store's own lock keeps a second
// server out of its directory, and on PostgreSQL this lock does, so that
// only its holder may replace a stale admin socket and the sandbox outbox
// has one writer. The lock ends with the process, or when release is
// called.
func lockDataDir(dir string) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, serveLockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, fmt.Errorf("data directory %s is in use by another onboard process", dir)
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("data directory: lock %s: %w", serveLockName, err)
	}
	return func() { f.Close() }, nil
}
