package storage

import (
	"fmt"
	"log/slog"

	"github.com/dgraph-io/badger/v4"
)

// badgerOptions are the options of every database of a data directory,
// chosen for a small server that must keep every acknowledged write
// through a crash (SyncWrites) within a modest memory budget, and whose
// read-modify-write transactions rely on conflict detection. Records over
// 1 KiB go to the value log (ValueThreshold), so that rewriting
// applications keyed by random ids does not make every compaction rewrite
// them; the cost is a second read per record and a larger database, which
// gcLoop keeps in check. Small memtables, with level 0 holding as many
// bytes before a compaction as the defaults do, and tables of one size at
// every level with two compactors, bound the memory that write buffers
// and compactions hold. Level 0 is compacted on Close so that reads after
// a restart check none of its tables. Badger's own metrics are off: onboard
// never reads them and their counting grows with the tree. The
// measurements behind these choices are in the history of this file.
func badgerOptions(dir string, log *slog.Logger) badger.Options {
	opts := badger.DefaultOptions(dir)
	opts.TableSizeMultiplier = 1 // no With method in badger v4
	return opts.
		WithSyncWrites(true).
		WithLogger(badgerLogger{log}).
		WithNumVersionsToKeep(1).
		WithMemTableSize(8 << 20).
		WithNumLevelZeroTables(10).
		WithNumLevelZeroTablesStall(30).
		WithCompactL0OnClose(true).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(32 << 20).
		WithIndexCacheSize(16 << 20).
		WithDetectConflicts(true).
		WithValueThreshold(1 << 10).
		WithMetricsEnabled(false).
		WithNumCompactors(2)
}

// badgerLogger forwards Badger's warnings and errors to slog.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error("badger: " + trim(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn("badger: " + trim(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Infof(string, ...any)  {}
func (l badgerLogger) Debugf(string, ...any) {}

func trim(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}
