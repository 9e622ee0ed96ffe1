package storage

import (
	"fmt"
	"log/slog"

	"github.com/dgraph-io/badger/v4"
)

// badgerOptions are the options of every database of a data directory,
// chosen for a small server that must survive a crash with every
// acknowledged write and stay within a modest memory budget:
//   - SyncWrites: every commit is fsynced before it is acknowledged (the
//     API's "acknowledged means durable").
//   - NumVersionsToKeep 1: no reads of older versions; compaction drops
//     them.
//   - MemTableSize 8 MiB (Badger's default is 64 MiB): the write buffers
//     are the largest fixed cost, each one's arena a little over its size
//     (10.5 MiB), in the heap for as long as it is the active memtable, and
//     two of them at once while one is flushed. With the records in the
//     value log a memtable holds keys, pointers and the small records
//     (index entries, activity), so 8 MiB still holds thousands of writes.
//     Against 16 MiB (TestScaleMemory, 60,000 seeded): 57 MiB of RSS idle
//     after the load against 72 to 76 (the target is 64), and the bench's
//     writes at the same rates within its noise (two runs each: PATCH
//     5,517 and 6,025 a second against 5,744 and 5,512, creates 2,898 and
//     2,947 against 2,995 and 2,846). Before the value log, when the
//     memtables held the records, 8 MiB cost decisions 15 to 25% of their
//     throughput in interleaved runs.
//   - NumLevelZeroTables 10 and NumLevelZeroTablesStall 30 (Badger's
//     defaults are 5 and 15): with 8 MiB memtables, the same bytes in level
//     0 before a compaction starts, and before writes stall, as the
//     defaults with 16 MiB. With the defaults, busy creates (the bench's
//     creates while webhooks and registry documents are being worked on)
//     fell to 0.78 to 0.92 of quiet ones in four runs, against 0.93 to
//     1.16 in five with 16 MiB memtables; with these, 1.11 and 1.03 (with
//     5 and 30, 0.84: what slows them is compacting level 0 twice as
//     often, not stalls). The cost is on reads: every point read checks
//     each table in level 0, which holds up to 9 between compactions
//     instead of 4 (and none after a restart: CompactL0OnClose below).
//   - CompactL0OnClose: Close compacts level 0 into the tree below it, so
//     that a database opens with none of those tables for its reads to
//     check, however much was written just before it closed. Without it
//     the tables left in level 0 depend on the writes since the last
//     compaction, not on how much is stored: in TestScaleList (both
//     servers measured together, request by request), a list of 50 with
//     1,030,000 stored, 9 tables in level 0 after 30,000 creates, took
//     1.30 times as long as with 10,000 and 3 small tables; with level 0
//     compacted on close, 1.15 times. Closing then took 499 ms instead of
//     about 20 (up to 30 tables, at the stall, take longer; a kill during
//     it loses nothing, as a compaction is applied whole or not at all).
//   - ValueLogFileSize 64 MiB: smaller files are garbage-collected sooner
//     (the default is 1 GiB).
//   - BlockCacheSize 32 MiB and IndexCacheSize 16 MiB: reads are point
//     lookups and short scans of recent records, which these caches hold;
//     the rest comes from the page cache.
//   - DetectConflicts: UpdateApplication's read-modify-write transactions
//     rely on it.
//   - ValueThreshold 1 KiB (Badger v4's default, 1 MiB, keeps every value
//     in the tree): an application's record and an event's (a whole
//     application, compressed: 1 to 2 KiB) go to the value log, and the
//     tree holds their keys and pointers. Applications are keyed by random
//     ids and rewritten on every change, so with the records in the tree
//     each flush's compaction rewrote most of a level's records, and
//     sustained writes were bound by compaction (a quarter of the CPU while
//     deciding) and by the memory its table builders held. On 2 cores,
//     with this: seeding 60,000 at 2,244 creates a second against 1,061 to
//     1,394, the Go heap at 146 MiB while seeding against 411 to 485, and
//     the bench's create and decision p99s at 31 and 32 ms against 88 to
//     98 and 130 to 385 (PATCH: the same rate in interleaved runs, with a
//     lower p99). Its costs: a commit fsyncs the value log as well as the
//     tree's log; reading a record is a second read, in the value log,
//     after the tree's; a record's old versions stay in the value log until
//     garbage collection rewrites a file that is half garbage (gcLoop), so
//     the database is larger (after a bench run 896 MiB against 324 to
//     399); and the value log is written through its memory mapping, so
//     more of it counts in RSS (serve trims it: Trim, pageout.go).
//   - TableSizeMultiplier 1 (Badger's default is 2) and NumCompactors 2
//     (default 4): every table is of the base size, 2 MiB, at every
//     level. A compaction builds its output tables in memory, eight or
//     more at once, each at about three times its size; with tables
//     doubling per level, seeding 200,000 applications at full speed held
//     282 of 331 MiB of heap in compactions' table builders at the peak,
//     and serve's VmHWM reached 401 MiB (the target is 256). With these:
//     VmHWM 243 MiB, seeding at 1,090 a second against 960
//     (TestScaleMemory, 2026-11-27). The cost is more, smaller tables in
//     the lower levels; a point read still checks one table a level.
//   - MetricsEnabled false: Badger counts every get, put and bloom-filter
//     check, per level, in expvar maps that onboard never reads (its
//     /metrics are its own). A read of an application checks a level's
//     filter for each level above the one holding it, so the counting grew
//     with the tree: listing 50 cached applications in the store took 264
//     to 289 µs with 1,000,000 stored and 200 to 207 µs with 10,000; with
//     the counting off, 224 and 191 to 195.
//
// Tried and not taken (2-core machine, issue 15):
//   - Tables without compression took less memory to build but made the
//     database 70% larger, on disk and in the page cache the process maps.
//   - Two compactors instead of four, alone (tables doubling per level,
//     60,000 seeded): decisions ran at the same rate in interleaved runs
//     (2,138 and 2,137 a second on average over three each), the memory
//     peaks moved less than their noise, and seeding was no faster.
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
