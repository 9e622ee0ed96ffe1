package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Webhook delivery and the registry documents job must not cut create's
// throughput below busyTarget of its quiet rate while they run
// (docs/performance.md). The bench measures
// creates quiet (a configuration without registry documents, no webhook
// endpoint, the registry documents queue empty) and busy (every create
// queues its registry documents behind a backlog, and a webhook endpoint
// on a receiver in this process gets every event), in rounds, alternately.
// Each phase starts after the same number of unmeasured creates since the
// database settled: the busy phase's backlog, and as many quiet creates
// before the quiet phase.

// Settings of the create rounds.
const (
	// CreateRounds is how many times quiet and busy creates are measured,
	// alternately and in alternating order (quiet, busy, busy, quiet, …),
	// so that a machine or a database that slows down or speeds up during
	// the run weighs on both alike; more than two, since one round's ratio
	// is as noisy as a few seconds of creates are.
	CreateRounds = 4
	// backlogPerWorker is how many applications, per connection, are
	// created before a busy round for the registry documents job to work
	// through (and whose events are queued for the endpoint).
	backlogPerWorker = 10
	// busyTarget is the floor for busy creates, as a fraction of quiet
	// ones.
	busyTarget = 0.9
	// BusyName is the row of the busy creates.
	BusyName = "create (busy)"
	// busyLimit is how much longer than the duration busy creates go on,
	// at most, waiting for the background work to be seen working.
	busyLimit = 30 * time.Second
	// docsPoll is how often, at most, busy creates that go on read the
	// registry documents job's queue.
	docsPoll = 100 * time.Millisecond
)

// Background is what the create rounds measured beside the
// throughputs: how busy creates compare with quiet ones, and what the
// background work did while they ran.
type Background struct {
	// Ratio is the busy creates' throughput over the quiet ones', each over
	// all its rounds; Target is the floor it must reach.
	Ratio  float64       `json:"busy_to_quiet"`
	Target float64       `json:"target"`
	Rounds []createRound `json:"rounds"`
	// The sums over the busy rounds.
	Deliveries         int `json:"webhook_deliveries"`
	CreatedDelivered   int `json:"created_events_delivered"`
	RegistryFetched    int `json:"registry_applications_fetched"`
	RegistryDocuments  int `json:"registry_documents_fetched"`
	BusyCreates        int `json:"busy_creates"`
	RegistryBacklogEnd int `json:"registry_backlog_at_end"`
}

// createRound is one quiet and one busy measure of create.
type createRound struct {
	Quiet float64 `json:"quiet_per_second"`
	Busy  float64 `json:"busy_per_second"`
	Ratio float64 `json:"busy_to_quiet"`
	// Deliveries is how many webhook deliveries the receiver took during
	// the busy phase, CreatedDelivered how many of them were
	// application.created events.
	Deliveries       int `json:"webhook_deliveries"`
	CreatedDelivered int `json:"created_events_delivered"`
	// RegistryFetched is how many applications the registry documents job
	// finished during the busy phase, and RegistryDocuments how many
	// documents it stored; BacklogStart and BacklogEnd are its queue
	// before and after.
	RegistryFetched   int `json:"registry_applications_fetched"`
	RegistryDocuments int `json:"registry_documents_fetched"`
	BacklogStart      int `json:"registry_backlog_at_start"`
	BacklogEnd        int `json:"registry_backlog_at_end"`
}

// benchReceiver is a webhook receiver on loopback that answers every
// delivery 204 at once and counts them.
type benchReceiver struct {
	url        string
	srv        *http.Server
	served     chan error
	deliveries atomic.Int64
	created    atomic.Int64
}

// startReceiver starts a receiver on 127.0.0.1.
func startReceiver() (*benchReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &benchReceiver{url: "http://" + ln.Addr().String() + "/webhooks", served: make(chan error, 1)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.receive), ReadHeaderTimeout: 10 * time.Second}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

// receive counts one delivery, by its event's type.
func (r *benchReceiver) receive(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	var ev struct {
		Type string `json:"type"`
	}
	if err != nil || json.Unmarshal(b, &ev) != nil {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	r.deliveries.Add(1)
	if ev.Type == "application.created" {
		r.created.Add(1)
	}
	w.WriteHeader(http.StatusNoContent)
}

// close stops the receiver.
func (r *benchReceiver) close() error {
	err := r.srv.Close()
	if serr := <-r.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// measureCreates measures create quiet and busy, alternately, for d each
// (CreateRounds times), after settle, and the durable-insert ceiling after
// each round. It answers the two rows, all rounds of each in one, compared
// with the ceiling's measurements of the rounds merged, and what the
// rounds measured.
func (a *benchAPI) measureCreates(srv Server, ceilings *benchCeilings, concurrency int, d time.Duration, settle func(), progress func(string, ...any)) (Result, Result, *Background, error) {
	rcv, err := startReceiver()
	if err != nil {
		return Result{}, Result{}, nil, err
	}
	defer rcv.close()
	var quiets, busies, inserts []Result
	bg := &Background{Target: busyTarget}
	for round := range CreateRounds {
		measureQuiet := func() (Result, error) {
			settle()
			// As many creates as the busy phase's backlog, unmeasured, so
			// that both phases start as far from the database's last
			// settle, and as near to its next flush and compaction.
			progress("creating %d applications before the quiet creates, as many as the backlog of the busy ones", backlogPerWorker*concurrency)
			if err := a.createMany(backlogPerWorker*concurrency, concurrency, QuietConfig); err != nil {
				return Result{}, fmt.Errorf("before the quiet creates: %w", err)
			}
			progress("measuring create, quiet (round %d of %d)", round+1, CreateRounds)
			return RunPhase("create", concurrency, d, func(w, i int) error {
				_, err := a.create(QuietConfig, false)
				return err
			}), nil
		}
		// Rounds alternate the order (quiet then busy, busy then quiet, …)
		// so that a drift over the run, such as the database growing,
		// weighs on both alike instead of always on the second.
		var quiet Result
		if round%2 == 0 {
			if quiet, err = measureQuiet(); err != nil {
				return Result{}, Result{}, nil, err
			}
		}
		settle()
		busy, r, err := a.busyCreates(srv, rcv, concurrency, d, progress)
		if err != nil {
			return Result{}, Result{}, nil, err
		}
		if round%2 == 1 {
			if quiet, err = measureQuiet(); err != nil {
				return Result{}, Result{}, nil, err
			}
		}
		settle()
		progress("measuring the %s next to create (round %d of %d)", CeilingInsert, round+1, CreateRounds)
		inserts = append(inserts, ceilings.measure(CeilingInsert, d))
		quiets = append(quiets, quiet)
		busies = append(busies, busy)
		r.Quiet, r.Busy = quiet.Throughput, busy.Throughput
		if r.Quiet > 0 {
			r.Ratio = r.Busy / r.Quiet
		}
		progress("create: %.0f/s quiet, %.0f/s busy (%.2f×); %d webhook deliveries, registry documents of %d applications (%d documents) fetched",
			r.Quiet, r.Busy, r.Ratio, r.Deliveries, r.RegistryFetched, r.RegistryDocuments)
		bg.Rounds = append(bg.Rounds, r)
		bg.Deliveries += r.Deliveries
		bg.CreatedDelivered += r.CreatedDelivered
		bg.RegistryFetched += r.RegistryFetched
		bg.RegistryDocuments += r.RegistryDocuments
		bg.BusyCreates += busy.Requests
		bg.RegistryBacklogEnd = r.BacklogEnd
	}
	quiet, busy := mergeResults("create", quiets), mergeResults(BusyName, busies)
	ceiling := mergeResults(CeilingInsert, inserts).Throughput
	quiet.Ceiling, quiet.CeilingRate = CeilingInsert, ceiling
	busy.Ceiling, busy.CeilingRate = CeilingInsert, ceiling
	if quiet.Throughput > 0 {
		bg.Ratio = busy.Throughput / quiet.Throughput
	}
	return quiet, busy, bg, nil
}

// busyCreates registers a webhook endpoint at the receiver, queues a
// backlog of registry documents, and measures creates that queue their
// own; the endpoint is removed afterwards (its queue dropped).
func (a *benchAPI) busyCreates(srv Server, rcv *benchReceiver, concurrency int, d time.Duration, progress func(string, ...any)) (Result, createRound, error) {
	var r createRound
	ep, err := srv.AddEndpoint(rcv.url)
	if err != nil {
		return Result{}, r, fmt.Errorf("webhook endpoint: %w", err)
	}
	backlog := backlogPerWorker * concurrency
	progress("queueing the registry documents of %d applications", backlog)
	if err := a.createMany(backlog, concurrency, ""); err != nil {
		return Result{}, r, fmt.Errorf("registry documents backlog: %w", err)
	}
	if r.BacklogStart, err = srv.PendingDocuments(); err != nil {
		return Result{}, r, err
	}
	blobs0, err := srv.StoredBlobs()
	if err != nil {
		return Result{}, r, err
	}
	delivered0, created0, creates0 := rcv.deliveries.Load(), rcv.created.Load(), a.creates.Load()
	progress("measuring create with webhooks and registry documents running")
	// Creates are busy only while the background works: the phase lasts
	// until a webhook delivery has been received and the registry
	// documents job has finished an application since it began, which a
	// short phase on a loaded machine may not see in its duration. (The
	// deliveries are the queue's oldest first: when the backlog's
	// application.created events went out while it was queued, those of
	// its application.sent come next.)
	// The job has finished applications when fewer wait than the backlog
	// and the phase's creates queued: the queue is read (a scan of its
	// index) at most every docsPoll, and not again once that has been
	// seen, rather than counting the stored documents, which would walk the
	// blob directory beside the creates being measured.
	var atDuration string // what the background had done at d
	var docsSeen bool
	var docsChecked time.Time
	working := func() bool {
		if !docsSeen && time.Since(docsChecked) >= docsPoll {
			// Read the creates first: one that commits in between is
			// among the waiting but not the created, which can only
			// undercount what the job finished.
			created := int(a.creates.Load() - creates0)
			pending, err := srv.PendingDocuments()
			finished := r.BacklogStart + created - pending
			docsSeen, docsChecked = err != nil || finished > 0, time.Now()
			if atDuration == "" {
				atDuration = fmt.Sprintf("%d webhook deliveries, registry documents of %d applications", rcv.deliveries.Load()-delivered0, finished)
			}
		}
		return docsSeen && rcv.deliveries.Load() > delivered0
	}
	busy := runPhaseUntil(BusyName, concurrency, d, busyLimit, working, func(w, i int) error {
		_, err := a.create("", false)
		return err
	})
	if busy.Extended {
		progress("create with webhooks and registry documents ran %s, until both were seen working (after %s: %s)", busy.Elapsed.Round(time.Millisecond), d, atDuration)
	}
	r.Deliveries = int(rcv.deliveries.Load() - delivered0)
	r.CreatedDelivered = int(rcv.created.Load() - created0)
	if r.BacklogEnd, err = srv.PendingDocuments(); err != nil {
		return Result{}, r, err
	}
	blobs1, err := srv.StoredBlobs()
	if err != nil {
		return Result{}, r, err
	}
	// Every busy create queued its application.
	r.RegistryFetched = r.BacklogStart + busy.Requests - r.BacklogEnd
	r.RegistryDocuments = blobs1 - blobs0
	if err := srv.RemoveEndpoint(ep); err != nil {
		return Result{}, r, fmt.Errorf("webhook endpoint: %w", err)
	}
	return busy, r, nil
}

// mergeResults makes one row of the rounds of an operation: their
// requests, over the time they ran in all.
func mergeResults(name string, rounds []Result) Result {
	var all []time.Duration
	var elapsed time.Duration
	failures := 0
	var firstErr error
	for _, r := range rounds {
		all = append(all, r.latencies...)
		elapsed += r.Elapsed
		failures += r.Failures
		if firstErr == nil && r.FirstErr != "" {
			firstErr = errors.New(r.FirstErr)
		}
	}
	return Summarize(name, all, failures, elapsed, firstErr)
}
