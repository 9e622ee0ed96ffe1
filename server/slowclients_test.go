package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"onboard/blobs"
	"onboard/onboarding"
)

// watchedListener accepts at most n connections at once, as a process
// out of descriptors would, and tells when the server closes each one.
type watchedListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once

	mu     sync.Mutex
	closed map[string]chan struct{} // by the client's address
}

func newWatchedListener(l net.Listener, n int) *watchedListener {
	return &watchedListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), closed: map[string]chan struct{}{}}
}

// closedChan is closed once the server has closed the connection from
// client (its address).
func (l *watchedListener) closedChan(client string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch, ok := l.closed[client]
	if !ok {
		ch = make(chan struct{})
		l.closed[client] = ch
	}
	return ch
}

func (l *watchedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	closed := l.closedChan(c.RemoteAddr().String())
	return &limitedConn{Conn: c, release: func() { <-l.slots; close(closed) }}, nil
}

func (l *watchedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slowReader is a download whose client reads its answer's head and then
// nothing.
type slowReader struct {
	conn   net.Conn
	status int
	resp   *http.Response
	err    error
}

// openSlowReader sends a GET of path to addr as client (X-Forwarded-For)
// through a receive buffer of rcvBuf bytes, and reads the answer's head,
// waiting at most guard for it.
func openSlowReader(addr, path, client string, rcvBuf int, guard time.Duration) *slowReader {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return &slowReader{err: err}
	}
	_ = c.(*net.TCPConn).SetReadBuffer(rcvBuf)
	r := &slowReader{conn: c}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: onboard.test\r\nX-Forwarded-For: %s\r\n\r\n", path, client); err != nil {
		r.err = err
		return r
	}
	_ = c.SetReadDeadline(time.Now().Add(guard))
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
	if err != nil {
		r.err = fmt.Errorf("no answer within %v: %w", guard, err)
		return r
	}
	r.resp, r.status = resp, resp.StatusCode
	return r
}

// TestSlowReadersCannotExhaustTheServer serves the real router on a
// listener that, like a process limited to 256 descriptors (ulimit -n
// 256), holds at most 100 connections, with the server told the same
// limit. Slow readers of a large download, clients that read nothing:
// one client past its cap gets 429, many clients past the server's cap get
// 503, and the downloads in progress never exceed the server's cap;
// /healthz and a create still answer meanwhile; every slow reader is cut
// off once a write has waited the write timeout (the test waits for the
// server to close each connection), and its request is logged as 499. A
// client that reads slowly but steadily, pausing for longer in all than
// the write timeout, gets the whole file.
func TestSlowReadersCannotExhaustTheServer(t *testing.T) {
	const (
		writeTimeout = 3 * time.Second
		connLimit    = 100 // what 256 descriptors hold beside the store and the files of downloads
		fileSize     = 8 << 20
		guard        = 60 * time.Second // never reached unless the server is stuck
	)
	start := time.Now()
	e := newEnv(t, envOptions{})
	logs := &lockedBuffer{}
	srv := New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now, Sandbox: true,
		Logger:         slog.New(slog.NewJSONHandler(logs, nil)),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		WriteTimeout:   writeTimeout, MaxOpenFiles: 256})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	watched := newWatchedListener(ln, connLimit)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, watched, nil, 10*time.Second) }()
	t.Cleanup(func() { stop(); <-ran })
	addr := ln.Addr().String()
	base := "http://" + addr

	id, _, err := e.blobs.Put(ctx, bytes.NewReader(make([]byte, fileSize)), fileSize)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := blobs.NewSigner(bytes.Repeat([]byte{7}, 32), e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	path := signer.SignedLink("", id, onboarding.Download{FileName: "big.pdf", ContentType: "application/pdf"}, time.Hour)

	maxDownloads := srv.downloads.max
	if maxDownloads < 9 || maxDownloads > connLimit/2 {
		t.Errorf("the server's download cap is %d for 256 descriptors, want 9 to %d", maxDownloads, connLimit/2)
	}
	var held []*slowReader
	defer func() {
		for _, r := range held {
			r.conn.Close()
		}
	}()

	// One client: its 9th download is over its cap.
	for i := range defaultDownloadsPerClient + 1 {
		r := openSlowReader(addr, path, "10.1.0.1", 4096, guard)
		if r.err != nil {
			t.Fatalf("slow reader %d: %v", i, r.err)
		}
		if i < defaultDownloadsPerClient {
			if r.status != http.StatusOK {
				t.Fatalf("slow reader %d of one client = %d, want 200", i, r.status)
			}
			held = append(held, r)
			continue
		}
		body, _ := io.ReadAll(r.resp.Body)
		r.conn.Close()
		if r.status != http.StatusTooManyRequests || r.resp.Header.Get("Retry-After") != "5" || !r.resp.Close {
			t.Errorf("download past the client's cap = %d, Retry-After %q, close %v; want 429, 5, true", r.status, r.resp.Header.Get("Retry-After"), r.resp.Close)
		}
		var got map[string]any
		_ = json.Unmarshal(body, &got)
		if diff := cmp.Diff(map[string]any{"error": "Too many downloads at once from this client; retry when one has finished", "retryable": true}, got); diff != "" {
			t.Errorf("429 body (-want +got):\n%s", diff)
		}
	}

	// Many clients, each with one download, more than the listener holds.
	const many = 150
	readers := make([]*slowReader, many)
	var wg sync.WaitGroup
	for i := range many {
		wg.Add(1)
		go func() {
			defer wg.Done()
			readers[i] = openSlowReader(addr, path, fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), 4096, guard)
		}()
	}
	wg.Wait()
	statuses := map[int]int{}
	for i, r := range readers {
		if r.err != nil {
			t.Errorf("slow reader %d: %v", i, r.err)
			continue
		}
		statuses[r.status]++
		if r.status == http.StatusOK {
			held = append(held, r)
			continue
		}
		if r.status == http.StatusServiceUnavailable && !r.resp.Close {
			t.Errorf("a 503 keeps its connection open")
		}
		r.conn.Close()
	}
	want := map[int]int{http.StatusOK: maxDownloads - defaultDownloadsPerClient, http.StatusServiceUnavailable: many - maxDownloads + defaultDownloadsPerClient}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("answers to %d slow readers of %d clients (-want +got):\n%s", many, many, diff)
	}
	if n := srv.downloads.inProgress(); n != maxDownloads {
		t.Errorf("%d downloads in progress, want the cap %d", n, maxDownloads)
	}

	t.Logf("%v: %d slow readers held", time.Since(start), len(held))

	// The API still answers.
	client := &http.Client{Timeout: guard}
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz beside %d slow readers: %v", len(held), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("POST", base+"/api/external/applications", strings.NewReader(
		`{"primary_contact":{"email":"jane@northwind.example"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`))
	req.Header.Set("Authorization", "Bearer "+e.keys["acme"])
	if resp, err = client.Do(req); err != nil {
		t.Fatalf("create beside %d slow readers: %v", len(held), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("create = %d", resp.StatusCode)
	}

	t.Logf("%v: the API answered", time.Since(start))

	// Every slow reader is cut off, and its download's slot freed.
	for _, r := range held {
		select {
		case <-watched.closedChan(r.conn.LocalAddr().String()):
		case <-time.After(guard):
			t.Fatalf("a slow reader is still connected %v after the others were cut off", guard)
		}
	}
	// A handler may still be returning when its connection is seen
	// closed: wait for the slots and the log lines, up to the guard.
	cut := func() int {
		n := 0
		for _, l := range logs.lines(t) {
			if l["route"] == "/files/:id" && l["status"] == float64(499) {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(guard); srv.downloads.inProgress() != 0 || cut() < len(held); {
		if time.Now().After(deadline) {
			t.Fatalf("%v after the slow readers were cut off: %d downloads in progress, %d download lines with status 499; want 0 and one for each of the %d slow readers",
				guard, srv.downloads.inProgress(), cut(), len(held))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := cut(); n != len(held) {
		t.Errorf("%d download lines with status 499, want one for each of the %d slow readers", n, len(held))
	}

	t.Logf("%v: the slow readers were cut off", time.Since(start))

	// A slow but live reader: pauses of a third of the write timeout, for
	// longer than the write timeout in all.
	r := openSlowReader(addr, path, "10.3.0.1", 128<<10, guard)
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("live reader: %d %v", r.status, r.err)
	}
	defer r.conn.Close()
	_ = r.conn.SetReadDeadline(time.Now().Add(guard))
	var got int64
	for got < fileSize {
		n, err := io.CopyN(io.Discard, r.resp.Body, fileSize/5+1)
		got += n
		if err != nil {
			break
		}
		if got < fileSize {
			time.Sleep(writeTimeout / 3) // slow, not stalled: the four pauses add up past the write timeout
		}
	}
	if got != fileSize {
		t.Errorf("the live reader got %d bytes of %d", got, fileSize)
	}
}

// TestDescriptorBudget: the caps serve derives from its descriptor limit
// and the descriptors open at start (docs/operations.md gives these
// figures).
func TestDescriptorBudget(t *testing.T) {
	tests := []struct {
		limit, open, conns, downloads int
	}{
		{limit: 0, open: 18, conns: 0, downloads: 0}, // unknown: no caps
		{limit: 256, open: 18, conns: 140, downloads: 34},
		{limit: 1024, open: 18, conns: 604, downloads: 151},
		{limit: 64, open: 60, conns: 1, downloads: 1}, // nearly none free: the reserve wins, one of each stays
	}
	for _, tt := range tests {
		conns, downloads := descriptorBudget(tt.limit, tt.open)
		if conns != tt.conns || downloads != tt.downloads {
			t.Errorf("descriptorBudget(%d, %d) = %d connections, %d downloads; want %d, %d", tt.limit, tt.open, conns, downloads, tt.conns, tt.downloads)
		}
	}
}

// TestIdleConnectionsGiveWay: when the API listener has taken as many
// connections as its cap, each idle (its client got its answer and sent
// nothing more), a new client still gets in: the listener closes the
// connection idle the longest rather than leave the newcomer waiting for
// the idle timeout.
func TestIdleConnectionsGiveWay(t *testing.T) {
	const (
		maxConns = 10
		guard    = 60 * time.Second // the idle timeout is 2 minutes
	)
	e := newEnv(t, envOptions{})
	srv := New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now})
	srv.maxConns = maxConns // as a small descriptor limit would set it
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, ln, nil, 10*time.Second) }()
	t.Cleanup(func() { stop(); <-ran })
	addr := ln.Addr().String()

	closed := make(chan int, maxConns)
	for i := range maxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: onboard.test\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(guard))
			if _, err := br.ReadByte(); err == io.EOF {
				closed <- i
			}
		}()
	}

	client := &http.Client{Timeout: guard}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("/healthz beside %d idle connections: %v", maxConns, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	select {
	case <-closed:
	case <-time.After(guard):
		t.Errorf("no idle connection was closed to let the new client in")
	}
}

// flushSpy is a ResponseWriter that records, at each flush, how many
// downloads were in progress.
type flushSpy struct {
	http.ResponseWriter
	slots    *downloadSlots
	inFlight []int
}

func (w *flushSpy) Flush() { w.inFlight = append(w.inFlight, w.slots.inProgress()) }

// TestDownloadFlushesWithinItsSlot: a download's answer leaves the
// server's buffers before its slot is given back, so that a client that
// reads nothing of a small file holds a download, which the caps count,
// and not a connection that is neither downloading nor idle, which
// nothing counts and the listener cannot close.
func TestDownloadFlushesWithinItsSlot(t *testing.T) {
	e := newEnv(t, envOptions{})
	srv := New(Options{Service: e.svc, Responses: e.store, Now: e.clock.Now})
	spy := &flushSpy{ResponseWriter: httptest.NewRecorder(), slots: srv.downloads}
	c := srv.e.NewContext(httptest.NewRequest(http.MethodGet, "/files/x", nil), spy)
	handler := srv.limitDownloads(func(c echo.Context) error {
		return c.Blob(http.StatusOK, "application/pdf", []byte("%PDF-1.4 small"))
	})
	if err := handler(c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1}, spy.inFlight); diff != "" {
		t.Errorf("downloads in progress at each flush (-want +got):\n%s", diff)
	}
	if n := srv.downloads.inProgress(); n != 0 {
		t.Errorf("%d downloads in progress after the answer, want 0", n)
	}
}
