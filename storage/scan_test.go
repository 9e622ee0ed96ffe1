package storage

import (
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestScanPrefix(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	defer s.Close()
	if err := s.db.Update(func(txn *badger.Txn) error {
		for _, k := range []string{"sa", "t/1", "t/2", "t/3", "u"} {
			if err := txn.Set([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    scanOpts
		want []string
	}{
		{"all", scanOpts{}, []string{"t/1", "t/2", "t/3"}},
		{"keys only", scanOpts{keysOnly: true, prefetch: 1}, []string{"t/1", "t/2", "t/3"}},
		{"from", scanOpts{from: []byte("t/2")}, []string{"t/2", "t/3"}},
		{"after", scanOpts{after: []byte("t/2")}, []string{"t/3"}},
		{"reverse", scanOpts{reverse: true}, []string{"t/3", "t/2", "t/1"}},
		{"reverse after", scanOpts{reverse: true, after: []byte("t/2")}, []string{"t/1"}},
	} {
		var got []string
		if err := s.db.View(func(txn *badger.Txn) error {
			for item := range scanPrefix(txn, []byte("t/"), tc.o) {
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if string(v) != "v"+string(item.Key()) {
					t.Errorf("%s: value of %s = %q", tc.name, item.Key(), v)
				}
				got = append(got, string(item.Key()))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: keys = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Breaking out of the loop closes the iterator: the transaction commits.
	if err := s.db.Update(func(txn *badger.Txn) error {
		for range scanPrefix(txn, []byte("t/"), scanOpts{}) {
			break
		}
		return txn.Set([]byte("t/4"), nil)
	}); err != nil {
		t.Fatal(err)
	}
}
