package storage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRecordKeyUsers lists the functions of this package that name an
// application record's key or an activity log head's key. Two shortcuts
// rest on who writes them: ReadApplication serves a current cache entry
// without reading (appCache), which holds only while every write of an
// application record is an UpdateApplication that brackets it with
// beginWrite and endWrite (its leader's applyCombined, in lead), or the
// record's create; and UpdateApplication
// takes an application's log head from its cache entry or its read
// (logHead), which holds only while every write of a head is in the
// transaction that writes its record, under its lock, or drops the entry.
// A new function here must keep both before it joins the list.
func TestRecordKeyUsers(t *testing.T) {
	watched := []string{"appKey", "prefixApp", "activityHeadKey", "prefixActivityHead"}
	got := map[string][]string{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && slices.Contains(watched, id.Name) && fn.Name.Name != id.Name {
					if user := fn.Name.Name; !slices.Contains(got[id.Name], user) {
						got[id.Name] = append(got[id.Name], user)
					}
				}
				return true
			})
		}
	}
	for _, users := range got {
		slices.Sort(users)
	}
	want := map[string][]string{
		// Writers: CreateApplication, and applyCombined, UpdateApplication's
		// leader, under the lock, between beginWrite and endWrite (which
		// also hands the key to the group loop, to read its new version:
		// readVersions), and loadApplication (a restore's Load, into an
		// empty store before it serves anything). The other reads.
		"appKey": {"CreateApplication", "applyCombined", "loadApplication", "readSharedApplication"},
		// All read; indexPendingDocuments is the schema 2 migration, at
		// open, and dumpFamilies a backup's Dump.
		"prefixApp": {"BlobReferences", "appKey", "dumpFamilies", "indexPendingDocuments", "noteBlobRefs"},
		// Writers: appendActivityAfter (in CreateApplication's and
		// UpdateApplication's transactions, and the RFI requests' own
		// logs), finishLog (the schema 5 migration, at open, before the
		// cache holds anything), loadActivityHead (a restore's Load, into
		// an empty store before it serves anything) and TamperWithActivity
		// (tests: under the lock, dropping the entry).
		"activityHeadKey": {"TamperWithActivity", "activityHead", "appendActivityAfter", "finishLog", "loadActivityHead"},
		// A backup's Dump reads them.
		"prefixActivityHead": {"activityHeadKey", "dumpActivityHead", "dumpFamilies"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("functions naming application record and log head keys (-want +got):\n%s", d)
	}
}
