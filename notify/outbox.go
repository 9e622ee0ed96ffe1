package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"onboard/atomicfile"
	"onboard/onboarding"
)

// Outbox is the sandbox mail transport: it writes each message as an .eml
// file in a directory and logs its summary (Email.Summary: recipient,
// subject without any code, link, file), so that an operator can follow
// invites without a mail server. It implements onboarding.Mailer and is safe
// for concurrent use.
type Outbox struct {
	dir  string
	from *mail.Address
	log  *slog.Logger
	now  func() time.Time
	keep int // messages kept; older ones are removed (OutboxKeep by default)

	written atomic.Int64 // messages written, to prune every outboxPruneEvery
}

// OutboxKeep is how many messages the sandbox outbox keeps by default: the
// newest ones; older files are removed as new ones are written, so that a
// long-running sandbox does not fill its disk with mail.
const OutboxKeep = 1000

// outboxPruneEvery is how many messages are written between two prunes.
const outboxPruneEvery = 100

var _ onboarding.Mailer = (*Outbox)(nil)

// NewOutbox returns an outbox writing to dir, created with mode 0700 if
// missing, with from as the sender. A nil log discards the log lines; a nil
// now means time.Now.
func NewOutbox(dir, from string, log *slog.Logger, now func() time.Time) (*Outbox, error) {
	addr, err := parseFrom(from)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("notify: outbox directory is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if now == nil {
		now = time.Now
	}
	return &Outbox{dir: dir, from: addr, log: log, now: now, keep: OutboxKeep}, nil
}

// Keep sets how many messages the outbox keeps (at least 1).
func (o *Outbox) Keep(n int) { o.keep = max(n, 1) }

// Dir returns the directory the outbox writes to.
func (o *Outbox) Dir() string { return o.dir }

// Send writes m to <dir>/<UTC timestamp>-<random hex>.eml with mode 0600 (mail
// carries personal data). The file appears whole or not at all
// (atomicfile.WriteFileNoSync). It is not fsynced:
// the outbox is the sandbox's, and a crash may lose its newest message, which
// the fsync would cost every invite to prevent. Every outboxPruneEvery
// messages, the oldest beyond the outbox's keep are removed.
func (o *Outbox) Send(ctx context.Context, m onboarding.Message) error {
	return send(ctx, m, o.sendEmail)
}

// sendEmail writes e as Send writes a message.
func (o *Outbox) sendEmail(ctx context.Context, m Email) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := o.now()
	_, msg, err := compose(o.from, m, now)
	if err != nil {
		return err
	}
	name := now.UTC().Format("20060102T150405.000000000Z") + "-" + randomHex(8) + ".eml"
	path := filepath.Join(o.dir, name)
	if err := atomicfile.WriteFileNoSync(path, msg, 0o600); err != nil {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	if o.written.Add(1)%outboxPruneEvery == 0 {
		o.prune()
	}
	to, subject := m.Summary() // never the body, a code, nor a link
	o.log.InfoContext(ctx, "mail written to sandbox outbox", slog.String("to", to), slog.String("subject", subject), slog.String("file", path))
	return nil
}

// prune removes the oldest messages beyond the outbox's keep. File names
// start with their UTC time, so name order is age order. Failures are
// logged: the next prune tries again.
func (o *Outbox) prune() {
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		o.log.Warn("sandbox outbox prune failed", "err", err)
		return
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".eml") && !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	if len(names) <= o.keep {
		return
	}
	slices.Sort(names)
	for _, n := range names[:len(names)-o.keep] {
		if err := os.Remove(filepath.Join(o.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			o.log.Warn("sandbox outbox prune failed", "err", err)
			return
		}
	}
}
