package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"onboard/onboarding"
	"onboard/storage"
)

// Memory that a busy spell leaves behind goes back to the operating system
// once the server is idle (issue 15: RSS at idle). The Go runtime returns
// freed heap gradually, keeping what the last busy spell needed in case it
// comes back; serve instead returns it (runtime/debug.FreeOSMemory: a
// collection, then every free page) once per idle spell: the first
// idleCheck that finds no request started since the previous one and none
// being served. That costs a collection of the live heap, a few
// milliseconds, when nothing else is going on. Before that it forgets the
// decoded applications the store keeps for the next read (up to 8 MiB; a
// read decodes again in tens of microseconds), and after it pages out the
// database's files mapped into the process (storage.Store.PageOut).
// Badger's caches and memtable are live data and stay.
//
// Busy or not, the database's file pages mapped into the process are kept
// under limits.max_mapped_bytes (mappedBudget). Badger reads and writes
// its files through memory mappings, and every page it touches stays
// mapped, counted in RSS, until the kernel needs the memory: after a few
// minutes of writes that was most of serve's RSS (at the end of the memory
// test's load, 138 of 230 MiB). The pages are the page cache's, and paging
// them out loses nothing: a later read faults its page back in, from the
// disk.

// idleCheck is how often serve looks for an idle spell.
const idleCheck = 15 * time.Second

// mappedKeep is how much of the database's files serve leaves mapped in
// when more than limit (limits.max_mapped_bytes, default 48 MiB) are: the
// newest files, whose records are the likeliest to be read next
// (storage.Store.Trim). The gap between the two makes the pages go back in
// batches, every few seconds under sustained writes.
func mappedKeep(limit int64) int64 { return limit * 2 / 3 }

// mappedCheck is how often serve compares its mapped files with
// limits.max_mapped_bytes: reading /proc/self/status, a few microseconds,
// and only when that puts the database's share over the limit,
// /proc/self/smaps (2 to 8 ms with 1,000,000 applications stored).
const mappedCheck = time.Second

// idleRelease decides when to return memory: at the first check of an idle
// spell, once.
type idleRelease struct {
	// requests is onboarding.Service.Requests.
	requests func() (serving int64, started uint64)
	// free returns memory to the operating system.
	free     func()
	last     uint64 // requests started at the previous check
	released bool   // free ran in the current idle spell
}

// check is one look at the server; it reports whether it freed memory.
func (r *idleRelease) check() bool {
	serving, started := r.requests()
	idle := serving == 0 && started == r.last
	r.last = started
	switch {
	case !idle:
		r.released = false
		return false
	case r.released:
		return false
	}
	r.free()
	r.released = true
	return true
}

// idleFree is what an idle spell hands back.
type idleFree struct {
	forget  func()                // storage.Store.ForgetCached and server.Server.ForgetRendered
	freeOS  func()                // runtime/debug.FreeOSMemory
	pageOut func() (int64, error) // storage.Store.PageOut; nil leaves the mapped files alone
	log     *slog.Logger
}

// run forgets the decoded applications, returns the freed heap to the
// operating system, then pages out the database's files.
func (f idleFree) run() {
	f.forget()
	f.freeOS()
	if f.pageOut == nil {
		return
	}
	if _, err := f.pageOut(); err != nil && !errors.Is(err, storage.ErrPageOutUnsupported) {
		f.log.Warn("page out the database's files", "err", err)
	}
}

// mappedBudget trims the database's files mapped into the process (Trim)
// when the process has more than limit bytes of files mapped in, down to
// keep.
type mappedBudget struct {
	limit, keep int64
	// resident is how many bytes of files are mapped into the process
	// (the database's, and others such as its own binary): cheap to read,
	// unlike the database's share, which trim measures.
	resident func() (int64, error)
	// trim is storage.Store.Trim.
	trim func(limit, keep int64) (before, after int64, err error)
	log  *slog.Logger
	// others is what the last trim found resident of the files that are
	// not the database's: resident minus others estimates the database's
	// share, and trim is not called while that is within limit.
	others int64
	off    bool // the kernel cannot page out, or the process's RSS cannot be read
	// failures counts the trims that failed in a row: the first is
	// warned of, then every warnAgainEvery-th, and the first success
	// after them is logged, instead of a warning every mappedCheck.
	failures int
}

// warnAgainEvery is how many failed trims in a row pass (ten minutes of
// mappedCheck) before a persisting failure is warned of again.
const warnAgainEvery = 600

// check is one comparison; it reports whether it paged anything out.
func (b *mappedBudget) check() bool {
	if b.off {
		return false
	}
	n, err := b.resident()
	if err != nil {
		b.log.Warn("mapped files are not kept under their limit", "err", err)
		b.off = true
		return false
	}
	if n-b.others <= b.limit {
		return false
	}
	before, after, err := b.trim(b.limit, b.keep)
	if err != nil {
		b.failures++
		if b.failures == 1 || b.failures%warnAgainEvery == 0 {
			b.log.Warn("mapped files are not kept under their limit", "err", err, "failed_checks", b.failures)
		}
		b.off = errors.Is(err, storage.ErrPageOutUnsupported)
		return false
	}
	if b.failures > 0 {
		b.log.Info("mapped files are kept under their limit again", "failed_checks", b.failures)
		b.failures = 0
	}
	b.others = max(n-before, 0)
	return after < before
}

// fileResident is the RssFile of /proc/self/status: the bytes of files
// mapped into the process that are resident.
func fileResident() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/status: RssFile %q", strings.TrimSpace(rest))
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/self/status has no RssFile")
}

// releaseMemory keeps the database's mapped files under maxMapped bytes
// (0: no limit), and returns memory to the operating system once per idle
// spell of svc's requests, until ctx ends. Without a limit, the idle spells
// leave the mapped files alone too.
func releaseMemory(ctx context.Context, svc *onboarding.Service, forgetRendered func(), store *storage.Store, log *slog.Logger, maxMapped int64) {
	free := idleFree{forget: func() { store.ForgetCached(); forgetRendered() }, freeOS: debug.FreeOSMemory, log: log}
	if maxMapped != 0 {
		free.pageOut = store.PageOut
	}
	r := &idleRelease{requests: svc.Requests, free: free.run}
	_, r.last = svc.Requests()
	b := &mappedBudget{
		limit: maxMapped, keep: mappedKeep(maxMapped), off: maxMapped == 0,
		resident: fileResident, trim: store.Trim, log: log,
	}
	idle := time.NewTicker(idleCheck)
	defer idle.Stop()
	mapped := time.NewTicker(mappedCheck)
	defer mapped.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-idle.C:
			r.check()
		case <-mapped.C:
			b.check()
		}
	}
}
