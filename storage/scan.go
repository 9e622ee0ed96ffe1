package storage

import (
	"bytes"
	"iter"

	"github.com/dgraph-io/badger/v4"
)

// scanOpts narrows a walk of scanPrefix. The zero value walks every key
// under the prefix in key order, prefetching values.
type scanOpts struct {
	// from is the key the walk starts at, itself included; nil starts at
	// the first key under the prefix (the last one when reversed).
	from []byte
	// after, when not nil, is the key the walk starts after: a cursor
	// naming the last key of the page before. It replaces from.
	after []byte
	// reverse walks in descending key order.
	reverse bool
	// keysOnly does not prefetch values: for walks of index keys, or
	// that read few of the values (item.Value still reads one).
	keysOnly bool
	// prefetch is how many items are fetched ahead; 0 is Badger's default.
	prefetch int
}

// scanPrefix walks the keys under prefix in txn (every key when prefix is
// nil), yielding each one's item. An item, its key and its value are valid
// only until the loop body returns: keep copies (KeyCopy, ValueCopy). The
// iterator is closed when the loop ends, so the body may write to txn
// only after it.
func scanPrefix(txn *badger.Txn, prefix []byte, o scanOpts) iter.Seq[*badger.Item] {
	return func(yield func(*badger.Item) bool) {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.Reverse = o.reverse
		opts.PrefetchValues = !o.keysOnly
		if o.prefetch > 0 {
			opts.PrefetchSize = o.prefetch
		}
		seek := o.from
		if o.after != nil {
			seek = o.after
		}
		if seek == nil {
			seek = prefix
			if o.reverse {
				seek = append(bytes.Clone(prefix), 0xff)
			}
		}
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			if o.after != nil && bytes.Equal(item.Key(), o.after) {
				continue
			}
			if !yield(item) {
				return
			}
		}
	}
}
