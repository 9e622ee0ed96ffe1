package memrelease

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/storage"
)

// TestIdleRelease: memory is returned at the first check of each idle
// spell, and only then.
func TestIdleRelease(t *testing.T) {
	type reading struct {
		serving int64
		started uint64
	}
	steps := []struct {
		reading
		freed bool
	}{
		{reading{0, 0}, true},  // idle since the start
		{reading{0, 0}, false}, // the same spell
		{reading{2, 2}, false}, // busy
		{reading{1, 5}, false}, // busy
		{reading{1, 5}, false}, // one long request, nothing new
		{reading{0, 5}, true},  // idle
		{reading{0, 5}, false}, // the same spell
		{reading{0, 6}, false}, // a request came and went
		{reading{0, 6}, true},  // a new idle spell
		{reading{0, 6}, false}, // the same spell
	}
	var now reading
	frees := 0
	r := &idleRelease{
		requests: func() (int64, uint64) { return now.serving, now.started },
		free:     func() { frees++ },
	}
	var got, want []bool
	for _, s := range steps {
		now = s.reading
		got = append(got, r.check())
		want = append(want, s.freed)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("freed at each check (-want +got):\n%s", diff)
	}
	if frees != 3 {
		t.Errorf("free ran %d times, want 3", frees)
	}
}

// TestMappedBudget: the database's files are trimmed when the process's
// mapped files, less what the last trim found of other files, are over
// the limit; a kernel that cannot page out, or a process whose mapped
// files cannot be measured, stops the checks.
func TestMappedBudget(t *testing.T) {
	type step struct {
		rssFile     int64 // the process's mapped files
		residentErr error
		db          int64 // the database's share, as trim measures it
		trimmed     int64 // bytes the trim pages out
		trimErr     error
		trim        bool // trim was called
		paged       bool
	}
	cantRead := errors.New("no /proc")
	eio := step{rssFile: 200, db: 200, trimErr: errors.New("page out x: EIO"), trim: true}
	recovered := step{rssFile: 200, db: 200, trimmed: 100, trim: true, paged: true}
	tests := []struct {
		name            string
		steps           []step
		warnings, again int
	}{
		{"within and over the limit", []step{
			{rssFile: 10}, {rssFile: 100},
			{rssFile: 101, db: 101, trimmed: 60, trim: true, paged: true},
			{rssFile: 5}, {rssFile: 200, db: 200, trimmed: 1, trim: true, paged: true},
		}, 0, 0},
		{"other files are counted out once a trim has measured them", []step{
			{rssFile: 150, db: 90, trim: true}, // others: 60
			{rssFile: 160},                     // the database's share about 100
			{rssFile: 161, db: 101, trimmed: 40, trim: true, paged: true},
			{rssFile: 150}, // others still 60: about 90
		}, 0, 0},
		{"a failure to page out is reported, and the next check tries again", []step{eio, recovered}, 1, 1},
		{"failures in a row are reported once, then every warnAgainEvery", append(slices.Repeat([]step{eio}, 2*warnAgainEvery+1), recovered, eio), 4, 1},
		{"a kernel that cannot page out stops the checks", []step{
			{rssFile: 200, db: 200, trimErr: storage.ErrPageOutUnsupported, trim: true}, {rssFile: 200}, {rssFile: 300},
		}, 1, 0},
		{"unreadable mapped files stop the checks", []step{
			{residentErr: cantRead}, {rssFile: 200},
		}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now step
			trimmed := false
			var logged bytes.Buffer
			b := &mappedBudget{
				limit:    100,
				keep:     50,
				resident: func() (int64, error) { return now.rssFile, now.residentErr },
				trim: func(limit, keep int64) (int64, int64, error) {
					trimmed = true
					if limit != 100 || keep != 50 {
						t.Errorf("trim(%d, %d), want trim(100, 50)", limit, keep)
					}
					return now.db, now.db - now.trimmed, now.trimErr
				},
				log: slog.New(slog.NewTextHandler(&logged, nil)),
			}
			for i, s := range tt.steps {
				now, trimmed = s, false
				if paged := b.check(); paged != s.paged || trimmed != s.trim {
					t.Errorf("check %d: paged %v, trim called %v; want %v, %v", i, paged, trimmed, s.paged, s.trim)
				}
			}
			if n := strings.Count(logged.String(), "mapped files are not kept under their limit"); n != tt.warnings {
				t.Errorf("%d warnings, want %d:\n%s", n, tt.warnings, logged.String())
			}
			if n := strings.Count(logged.String(), "mapped files are kept under their limit again"); n != tt.again {
				t.Errorf("%d recoveries logged, want %d:\n%s", n, tt.again, logged.String())
			}
		})
	}
}

// TestFileResident: the process maps its own binary, so RssFile is more
// than nothing.
func TestFileResident(t *testing.T) {
	n, err := fileResident()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Errorf("fileResident() = %d", n)
	}
}

// TestIdleFree: an idle spell forgets the decoded applications before it
// returns the heap, then pages the mapped files out unless there is no
// limit; a failure is logged, except a kernel that cannot page out.
func TestIdleFree(t *testing.T) {
	tests := []struct {
		name    string
		limited bool
		err     error
		want    []string
		warned  bool
	}{
		{"limited", true, nil, []string{"forget", "free", "page out"}, false},
		{"no limit", false, nil, []string{"forget", "free"}, false},
		{"paging out fails", true, errors.New("page out x: EIO"), []string{"forget", "free", "page out"}, true},
		{"the kernel cannot page out", true, storage.ErrPageOutUnsupported, []string{"forget", "free", "page out"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var logged bytes.Buffer
			f := idleFree{
				forget: func() { got = append(got, "forget") },
				freeOS: func() { got = append(got, "free") },
				log:    slog.New(slog.NewTextHandler(&logged, nil)),
			}
			if tt.limited {
				f.pageOut = func() (int64, error) { got = append(got, "page out"); return 1, tt.err }
			}
			f.run()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if warned := strings.Contains(logged.String(), "page out the database's files"); warned != tt.warned {
				t.Errorf("warned %v, want %v:\n%s", warned, tt.warned, logged.String())
			}
		})
	}
}
