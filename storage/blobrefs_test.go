package storage

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"onboard/onboarding"
	"onboard/storage/record"
)

// TestBlobRefsMatchBlobIDs checks that the references read from a stored
// record, decoding only the members that name blobs, are the ones the
// whole record's BlobIDs names.
func TestBlobRefsMatchBlobIDs(t *testing.T) {
	docs := func(prefix string) map[string]onboarding.Document {
		return map[string]onboarding.Document{
			"a": {FileID: prefix + "-a", BlobID: "blob-" + prefix + "-a", FileName: "a.pdf"},
			"b": {FileID: prefix + "-b", BlobID: "blob-" + prefix + "-b", FileName: "b.pdf"},
			"c": {FileID: prefix + "-c", FileName: "not uploaded"},
		}
	}
	app := &onboarding.Application{
		ID: "0dbd4554-6c3e-4c8f-9d0e-1a2b3c4d5e6f",
		Data: onboarding.Data{
			Documents: docs("company"),
			People:    []onboarding.Person{{ID: "p1", Documents: docs("p1")}, {ID: "p2"}, {ID: "p3", Documents: docs("p3")}},
			Entities:  []onboarding.Entity{{ID: "e1", Documents: docs("e1")}},
		},
		RegistryDocuments: []onboarding.RegistryDocument{{ID: "r1", BlobID: "blob-r1"}, {ID: "r2"}},
	}
	rfi := &onboarding.RFIRequest{ID: "rfi", Documents: docs("rfi")}
	for _, c := range []struct {
		name   string
		key    []byte
		record any
		want   []string
	}{
		{"application", appKey(uuid.MustParse(app.ID)), app, app.BlobIDs()},
		{"RFI request", []byte(prefixRFI + "rfi"), rfi, rfi.BlobIDs()},
		{"other record", []byte(prefixEvent + "x"), app, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			value, err := record.Encode(c.record)
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]bool{}
			if err := noteBlobRefs(set, c.key, value); err != nil {
				t.Fatal(err)
			}
			got := make([]string, 0, len(set))
			for id := range set {
				got = append(got, id)
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("blob references (-BlobIDs +noteBlobRefs):\n%s", diff)
			}
		})
	}
}

// TestBlobRefsCoverEveryBlobID fails when Application or RFIRequest gains a
// BlobID member that appBlobRefs or rfiBlobRefs does not read: a blob that
// only it names would be swept as an orphan.
func TestBlobRefsCoverEveryBlobID(t *testing.T) {
	for _, c := range []struct {
		record, refs reflect.Type
	}{
		{reflect.TypeFor[onboarding.Application](), reflect.TypeFor[appBlobRefs]()},
		{reflect.TypeFor[onboarding.RFIRequest](), reflect.TypeFor[rfiBlobRefs]()},
	} {
		if diff := cmp.Diff(blobIDPaths(c.record), blobIDPaths(c.refs)); diff != "" {
			t.Errorf("members named BlobID (-%v +%v):\n%s", c.record, c.refs, diff)
		}
	}
}

// blobIDPaths lists the paths (member names, through slices, maps and
// pointers) of every string member named BlobID under t.
func blobIDPaths(t reflect.Type) []string {
	var out []string
	var walk func(t reflect.Type, path []string)
	walk = func(t reflect.Type, path []string) {
		if len(path) > 8 {
			return // a recursive type: no record nests this deep
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem(), path)
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				p := append(slices.Clone(path), f.Name)
				if f.Name == "BlobID" && f.Type.Kind() == reflect.String {
					out = append(out, strings.Join(p, "."))
					continue
				}
				walk(f.Type, p)
			}
		}
	}
	walk(t, nil)
	slices.Sort(out)
	return out
}
