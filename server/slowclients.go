package server

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"onboard/server/web"
)

// Slow clients (docs/operations.md, "Connections and downloads"): every
// write of an answer has a deadline, so a client that stops reading is cut
// off; downloads are capped per client and in all; and the connections
// the API listener accepts are capped, so that slow clients can never take
// the descriptors the store and the API need.

// Defaults of the limits Options leaves unset.
const (
	// defaultWriteTimeout is how long one write of an answer may wait for
	// the client to take data: nginx's send_timeout. A client on a slow
	// link still gets a large file, as long as it keeps reading.
	defaultWriteTimeout = 60 * time.Second
	// defaultDownloadsPerClient is how many downloads one client address
	// may have in progress: more than a browser opens to one host (6).
	defaultDownloadsPerClient = 8
)

// The descriptor budget: of the descriptors not open when the server
// starts, a reserve is never given to clients (the store's new tables and
// value log files, files being uploaded or written, outgoing connections to
// the registry, SMTP and webhook receivers), and of the rest a fifth may
// be downloads, each of which holds a file besides its connection.
const (
	minDescriptorReserve = 64
	reserveShare         = 4 // the reserve is a quarter of the free descriptors, at least minDescriptorReserve
	downloadShare        = 5 // a fifth of the budget may be downloads
)

// downloadRetryAfter is the Retry-After of a download refused for being
// over a cap, in seconds.
const downloadRetryAfter = 5

// The answers to a download over a cap.
var (
	errTooManyClientDownloads = &web.Error{Status: http.StatusTooManyRequests, Retryable: true,
		Message: "Too many downloads at once from this client; retry when one has finished"}
	errTooManyDownloads = &web.Error{Status: http.StatusServiceUnavailable, Retryable: true,
		Message: "Too many downloads in progress; retry in a few seconds"}
)

// descriptorBudget divides the descriptors a process may still open
// (limit, less open already) between client connections and the files of
// downloads, keeping the reserve; limit 0 (unknown) caps neither.
func descriptorBudget(limit, open int) (conns, downloads int) {
	if limit <= 0 {
		return 0, 0
	}
	free := limit - open
	budget := max(free-max(minDescriptorReserve, free/reserveShare), 2)
	downloads = max(budget/downloadShare, 1)
	return budget - downloads, downloads
}

// withWriteDeadlines serves h with a deadline on every write of every
// answer: each write, and the flush after the handler returns, must be
// taken by the client within timeout, however long the answer. A client
// that reads nothing for that long gets its connection closed, while one
// that reads slowly gets a large file in full.
func withWriteDeadlines(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		aw := &answerWriter{ResponseWriter: w, timeout: timeout}
		aw.conn, _ = w.(writeDeadliner) // net/http's; a test recorder has none
		aw.extend()                     // also bounds what net/http writes itself (100 Continue)
		h.ServeHTTP(aw, r)
		aw.extend() // net/http flushes the rest of the answer after h returns
	})
}

// writeDeadliner is net/http's ResponseWriter, which sets its connection's
// write deadline.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// answerWriter extends the connection's write deadline before each write
// and remembers the first write that failed, for the request's log line.
type answerWriter struct {
	http.ResponseWriter
	conn    writeDeadliner // nil: no deadlines
	timeout time.Duration
	err     error // the first write error
}

func (w *answerWriter) extend() {
	if w.conn != nil {
		_ = w.conn.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *answerWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) Write(b []byte) (int, error) {
	w.extend()
	n, err := w.ResponseWriter.Write(b)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// FlushError flushes with the write deadline extended, as Write does.
func (w *answerWriter) FlushError() error {
	w.extend()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeFailedOf reports whether the answer to c's request could not be
// written because the client went away or stopped reading; w is what
// c.Response().Writer was before any middleware replaced it.
func writeFailedOf(w http.ResponseWriter) bool {
	aw, ok := w.(*answerWriter)
	return ok && aw.err != nil && web.HangUp(aw.err)
}

// downloadSlots caps the downloads in progress: in all, and per client
// address.
type downloadSlots struct {
	max, perClient int // max 0: no cap in all

	mu       sync.Mutex
	total    int
	byClient map[string]int
}

func newDownloadSlots(max, perClient int) *downloadSlots {
	return &downloadSlots{max: max, perClient: perClient, byClient: map[string]int{}}
}

// take reserves a slot for a download of client, or returns the error to
// answer: errTooManyClientDownloads when the client has perClient in
// progress, errTooManyDownloads when the server has max. The caller must
// call release once the download is over.
func (d *downloadSlots) take(client string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byClient[client] >= d.perClient {
		return errTooManyClientDownloads
	}
	if d.max > 0 && d.total >= d.max {
		return errTooManyDownloads
	}
	d.total++
	d.byClient[client]++
	return nil
}

// release frees the slot take reserved for client.
func (d *downloadSlots) release(client string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.total--
	if d.byClient[client]--; d.byClient[client] <= 0 {
		delete(d.byClient, client)
	}
}

// inProgress is the number of downloads in progress.
func (d *downloadSlots) inProgress() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total
}

// limitDownloads runs a download handler in a slot of s.downloads, or
// answers that the client or the server is over its cap, with Retry-After,
// and closes the connection: a client refused for being slow to read must
// not keep it idle.
func (s *Server) limitDownloads(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		client := clientAddr(c)
		if err := s.downloads.take(client); err != nil {
			h := c.Response().Header()
			h.Set("Retry-After", strconv.Itoa(downloadRetryAfter))
			h.Set("Connection", "close")
			return err
		}
		defer s.downloads.release(client)
		if err := next(c); err != nil {
			return err
		}
		// The end of the file may still sit in the server's buffers: it
		// leaves them within the slot, so that a client that reads nothing
		// holds a download (and is capped) rather than a connection that
		// is neither downloading nor idle.
		flushAnswer(c.Response().Writer)
		return nil
	}
}

// flushAnswer flushes what w holds of the answer, unless a write of it
// failed already (the client gone or too slow): flushing again would
// wait a whole write timeout more for that client.
func flushAnswer(w http.ResponseWriter) {
	for {
		if aw, ok := w.(*answerWriter); ok {
			if aw.err == nil {
				_ = aw.FlushError()
			}
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			_ = http.NewResponseController(w).Flush()
			return
		}
		w = u.Unwrap()
	}
}

// limitListener accepts at most n connections at once from l. When all
// are taken, it closes the connection that has been idle the longest
// (waiting for its client's next request), as nginx does when out of
// connections; with none idle, a further connection waits in the
// kernel's queue until one is closed. net/http reports idleness through
// connState.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once

	mu   sync.Mutex
	idle map[*limitedConn]time.Time // idle connections, since when
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), idle: map[*limitedConn]time.Time{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.closeIdle()
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// closeIdle closes the connection idle the longest, if any.
func (l *limitListener) closeIdle() {
	l.mu.Lock()
	var oldest *limitedConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest != nil {
		_ = oldest.Close()
	}
}

// connState is the http.Server's ConnState hook: it keeps the set of idle
// connections.
func (l *limitListener) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its listener's slot back when it is closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes the connection, as net/http does before closing
// one whose request body it did not read.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
