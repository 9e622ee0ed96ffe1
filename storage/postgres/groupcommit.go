package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A commitGroup sends writes that are each one batch of statements (a
// create, an optimistic update) together when they arrive faster than
// they commit: while sending transactions are in flight, further writes
// wait, and the next transaction to start carries all of them, so that
// one round trip and one WAL flush serve many writes. PostgreSQL's own
// group commit only groups the commits of different connections that
// wait for the same flush; this one also groups writes beyond the pool's
// connections and saves each its own transaction's overhead. A write
// that arrives while fewer than sending transactions are in flight goes
// at once, alone, as it would without the group: grouping adds no
// latency to an idle store.
//
// A group is one explicit transaction: its statements run in the round
// trip that begins it, and it commits in a second one only when every
// statement and every callback succeeded, so no write of a failed group
// is left half done, whatever failed. Its writes are then sent again, each
// alone and by its own caller, so that each gets the answer it would have
// had alone (a duplicate, a stale cache, a conflict). Writes of one key
// (the record they write) never share a group, and a group sends its
// writes in key order, so that two groups lock rows in the same order.
type commitGroup struct {
	pool *pgxpool.Pool
	// sending bounds the transactions in flight that the group starts;
	// most bounds the writes of one group.
	sending, most int

	mu       sync.Mutex
	inFlight int
	waiting  []*groupedWrite

	// committed counts the groups of more than one write committed.
	committed atomic.Int64
}

// groupedWrite is one write waiting in a commitGroup.
type groupedWrite struct {
	ctx   context.Context
	key   string
	build func(*pgx.Batch)
	// done receives the write's result: nil when it committed in its
	// group, errSendAlone when its group failed and the write was not
	// made, another error when the outcome is unknown.
	done chan error
}

// errSendAlone is a grouped write's result when its group failed before
// its commit: nothing of it was written, and it is to be sent alone.
var errSendAlone = errors.New("postgres: the write's group failed; send it alone")

// newCommitGroup returns a commitGroup over pool starting at most sending
// transactions at once, of at most most writes each.
func newCommitGroup(pool *pgxpool.Pool, sending, most int) *commitGroup {
	return &commitGroup{pool: pool, sending: max(sending, 1), most: max(most, 1)}
}

// send writes the statements build queues as one transaction, alone or
// in a group, and returns the error it would have had alone. build may be
// called more than once (a failed group's writes are built again alone).
// key names the record the write changes.
func (g *commitGroup) send(ctx context.Context, key string, build func(*pgx.Batch)) error {
	g.mu.Lock()
	if g.inFlight < g.sending {
		g.inFlight++
		g.mu.Unlock()
		err := sendAlone(ctx, g.pool, build)
		g.next()
		return err
	}
	w := &groupedWrite{ctx: ctx, key: key, build: build, done: make(chan error, 1)}
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()

	select {
	case err := <-w.done:
		if errors.Is(err, errSendAlone) {
			return sendAlone(ctx, g.pool, build)
		}
		return err
	case <-ctx.Done():
		// Taken by a group, the write may yet commit, as a write alone
		// whose context ends may.
		g.withdraw(w)
		return ctx.Err()
	}
}

// withdraw takes w out of the writes waiting, if a group did not take it
// yet.
func (g *commitGroup) withdraw(w *groupedWrite) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.waiting, w); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
	}
}

// next is called when a transaction of the group ends: it starts the
// next group when writes wait, or else counts one transaction fewer in
// flight.
func (g *commitGroup) next() {
	g.mu.Lock()
	if len(g.waiting) == 0 {
		g.inFlight--
		g.mu.Unlock()
		return
	}
	group := g.take()
	g.mu.Unlock()
	go g.commit(group)
}

// take removes from the writes waiting and returns the next group: the
// first writes, up to most, skipping a write whose key one taken has,
// sorted by key. g.mu is held.
func (g *commitGroup) take() []*groupedWrite {
	var group, left []*groupedWrite
	keys := map[string]bool{}
	for _, w := range g.waiting {
		if len(group) == g.most || (w.key != "" && keys[w.key]) {
			left = append(left, w)
			continue
		}
		keys[w.key] = true
		group = append(group, w)
	}
	g.waiting = left
	slices.SortFunc(group, func(a, b *groupedWrite) int { return strings.Compare(a.key, b.key) })
	return group
}

// commit sends group as one transaction and answers its writes, then
// starts the next group. When a write's statement fails the group, that
// write is answered errSendAlone and the others are sent again as a
// group without it.
func (g *commitGroup) commit(group []*groupedWrite) {
	defer g.next()
	for len(group) > 1 {
		failed, err := g.sendGroup(group)
		switch {
		case err == nil:
			g.committed.Add(1)
		case failed >= 0:
			group[failed].done <- errSendAlone
			group = slices.Delete(group, failed, failed+1)
			continue
		}
		for _, w := range group {
			w.done <- err
		}
		return
	}
	// Alone, a write is sent by its caller as it would be without a group.
	for _, w := range group {
		w.done <- errSendAlone
	}
}

// sendGroup sends group's statements in one transaction. It answers nil
// when it committed; errSendAlone when it did not, and then failed is the
// index of the write whose statement failed it (-1 for none: the
// transaction itself failed); another error when whether it committed is
// unknown.
func (g *commitGroup) sendGroup(group []*groupedWrite) (failed int, err error) {
	// The transaction ends early only when every write's caller gave up.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var left atomic.Int64
	left.Store(int64(len(group)))
	for _, w := range group {
		stop := context.AfterFunc(w.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	conn, err := g.pool.Acquire(ctx)
	if err != nil {
		return -1, errSendAlone
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	reading := -1
	for i, w := range group {
		from := b.Len()
		w.build(b)
		for _, q := range b.QueuedQueries[from:] {
			read := q.Fn
			q.Fn = func(br pgx.BatchResults) error {
				reading = i
				if read != nil {
					return read(br)
				}
				_, err := br.Exec()
				return err
			}
		}
	}
	br := conn.Conn().SendBatch(ctx, b)
	tx := br.Tx()
	if err := br.Close(); err != nil {
		// When the rollback fails too, the pool closes the connection
		// as it is released, which ends the transaction uncommitted.
		_ = tx.Rollback(ctx)
		return reading, errSendAlone
	}
	if err := tx.Commit(ctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// PostgreSQL answered the COMMIT with an error: it rolled back.
			return -1, errSendAlone
		}
		return -1, err
	}
	return -1, nil
}

// sendAlone sends the statements build queues as one implicit
// transaction: one round trip, committed unless a statement fails.
func sendAlone(ctx context.Context, pool *pgxpool.Pool, build func(*pgx.Batch)) error {
	b := &pgx.Batch{}
	build(b)
	return pool.SendBatch(ctx, b).Close()
}

// maxGroupWrites bounds the writes of one group: enough to carry what
// waits behind a busy pool, few enough that a failed group's writes,
// sent again alone, cost little.
const maxGroupWrites = 32

// groupSending is how many transactions of grouped writes may be in
// flight for a pool of maxConns connections: half of them, leaving the
// rest to reads and to the other transactions.
func groupSending(maxConns int) int {
	return max(maxConns/2, 1)
}
