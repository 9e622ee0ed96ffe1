package main

import (
	"bytes"
	"errors"
	"log/slog"
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

// TestMappedBudget: the database's files are trimmed at each check that
// finds more than the limit mapped in; a kernel that cannot page out, or a
// process whose mapped files cannot be measured, stops the checks.
func TestMappedBudget(t *testing.T) {
	type step struct {
		resident    int64
		residentErr error
		trimmed     int64 // bytes the trim pages out
		trimErr     error
		paged       bool
	}
	cantRead := errors.New("no /proc")
	tests := []struct {
		name     string
		steps    []step
		trims    int
		warnings int
	}{
		{"under and over the limit", []step{
			{resident: 10}, {resident: 100}, {resident: 101, trimmed: 60, paged: true}, {resident: 5}, {resident: 200, trimmed: 1, paged: true},
		}, 2, 0},
		{"over the limit with the database's share within it", []step{
			{resident: 150}, {resident: 150, trimmed: 10, paged: true},
		}, 2, 0},
		{"a failure to page out is reported, and the next check tries again", []step{
			{resident: 200, trimErr: errors.New("page out x: EIO")}, {resident: 200, trimmed: 100, paged: true},
		}, 2, 1},
		{"a kernel that cannot page out stops the checks", []step{
			{resident: 200, trimErr: storage.ErrPageOutUnsupported}, {resident: 200}, {resident: 300},
		}, 1, 1},
		{"unreadable mapped files stop the checks", []step{
			{residentErr: cantRead}, {resident: 200},
		}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var now step
			trims := 0
			var logged bytes.Buffer
			b := &mappedBudget{
				limit:    100,
				keep:     50,
				resident: func() (int64, error) { return now.resident, now.residentErr },
				trim: func(limit, keep int64) (int64, int64, error) {
					trims++
					if limit != 100 || keep != 50 {
						t.Errorf("trim(%d, %d), want trim(100, 50)", limit, keep)
					}
					return now.resident, now.resident - now.trimmed, now.trimErr
				},
				log: slog.New(slog.NewTextHandler(&logged, nil)),
			}
			var got, want []bool
			for _, s := range tt.steps {
				now = s
				got = append(got, b.check())
				want = append(want, s.paged)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paged out at each check (-want +got):\n%s", diff)
			}
			if trims != tt.trims {
				t.Errorf("Trim ran %d times, want %d", trims, tt.trims)
			}
			if n := strings.Count(logged.String(), "mapped files are not kept under their limit"); n != tt.warnings {
				t.Errorf("%d warnings, want %d:\n%s", n, tt.warnings, logged.String())
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
