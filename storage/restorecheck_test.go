package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
)

// recordList is one list of Badger's backup format holding kvs.
func recordList(t testing.TB, kvs ...*pb.KV) []byte {
	t.Helper()
	b, err := proto.Marshal(&pb.KVList{Kv: kvs})
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.LittleEndian.AppendUint64(nil, uint64(len(b))), b...)
}

// TestRestoreRefusesForgedRecords restores records that are not Backup's
// output: bytes that are not the format, lists cut short or claiming
// more than any list holds, and records Badger's loader accepts but that
// make a broken database. Each is refused with a RecordsError naming the
// problem, without a panic or a hang.
func TestRestoreRefusesForgedRecords(t *testing.T) {
	schema := &pb.KV{Key: []byte(keySchema), Value: []byte(schemaVersion), Version: 1}
	good := recordList(t, schema)
	tests := []struct {
		name    string
		records []byte
		want    string
	}{
		{"text", []byte("these are not the records of a database\n"),
			"are not in Badger's backup format: list 1 claims 8241904413164529780 bytes"},
		{"length at the top of the range", append(bytes.Repeat([]byte{0xff}, 8), "records"...),
			"are not in Badger's backup format: list 1 claims 18446744073709551615 bytes"},
		{"length the data does not back", append(binary.LittleEndian.AppendUint64(nil, 1<<29), "short"...),
			"are cut short: list 1 has 5 of its 536870912 bytes"},
		{"length cut short", append(slices.Clone(good), 1, 2, 3), "are cut short in list 2"},
		{"list that does not decode", append(binary.LittleEndian.AppendUint64(nil, 4), 0xff, 0xff, 0xff, 0xff),
			"are not in Badger's backup format: list 1 does not decode"},
		{"empty key", append(slices.Clone(good), recordList(t, &pb.KV{Value: []byte("v"), Version: 2})...),
			"hold an invalid record in list 2: an empty key"},
		{"long key", append(slices.Clone(good), recordList(t, &pb.KV{Key: bytes.Repeat([]byte("k"), 70000), Version: 2})...),
			"hold an invalid record in list 2: a key of 70000 bytes"},
		{"value pointer", append(slices.Clone(good), recordList(t, &pb.KV{Key: []byte("a/x"), Value: []byte("xx"), Version: 2, Meta: []byte{2}})...),
			"hold an invalid record in list 2: Badger's internal metadata 02"},
		{"top version", append(slices.Clone(good), recordList(t, &pb.KV{Key: []byte("a/x"), Value: []byte("xx"), Version: 1<<64 - 1})...),
			"hold an invalid record in list 2: version 18446744073709551615"},
		{"version 0", recordList(t, &pb.KV{Key: []byte(keySchema), Value: []byte(schemaVersion)}),
			"hold an invalid record in list 1: version 0"},
		{"user metadata", recordList(t, &pb.KV{Key: []byte(keySchema), Value: []byte(schemaVersion), Version: 1, UserMeta: []byte{1, 2}}),
			"hold an invalid record in list 1: 2 bytes of user metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "badger")
			_, err := Restore(dir, bytes.NewReader(tt.records))
			var re RecordsError
			if !errors.As(err, &re) || string(re) != tt.want {
				t.Errorf("Restore: %v; want a RecordsError %q", err, tt.want)
			}
			if err != nil && err.Error() != "restore records: they "+tt.want {
				t.Errorf("Restore: %q; want %q", err, "restore records: they "+tt.want)
			}
		})
	}
	// The list the cases start from restores.
	if _, err := Restore(filepath.Join(t.TempDir(), "badger"), bytes.NewReader(good)); err != nil {
		t.Errorf("Restore of the schema version alone: %v", err)
	}
}

// FuzzCheckedRecords: the check of restored records never panics, never
// allocates more than the data backs, and passes on exactly what it read
// when it finds nothing wrong.
func FuzzCheckedRecords(f *testing.F) {
	f.Add(recordList(f, &pb.KV{Key: []byte(keySchema), Value: []byte(schemaVersion), Version: 1}))
	f.Add(append(recordList(f, &pb.KV{Key: []byte("a/x"), Value: []byte("v"), Version: 2, UserMeta: []byte{1}}), 0, 0))
	f.Add([]byte("these are not the records of a database\n"))
	f.Add(bytes.Repeat([]byte{0xff}, 16))
	f.Fuzz(func(t *testing.T, records []byte) {
		out, err := io.ReadAll(&checkedRecords{r: bytes.NewReader(records)})
		var re RecordsError
		switch {
		case err == nil && !bytes.Equal(out, records):
			t.Errorf("passed on %q, read %q", out, records)
		case err != nil && !errors.As(err, &re):
			t.Errorf("error %v is not a RecordsError", err)
		}
	})
}
