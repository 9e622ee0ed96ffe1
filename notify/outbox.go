package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"time"

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
}

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
	return &Outbox{dir: dir, from: addr, log: log, now: now}, nil
}

// Dir returns the directory the outbox writes to.
func (o *Outbox) Dir() string { return o.dir }

// Send writes m to <dir>/<UTC timestamp>-<random hex>.eml with mode 0600 (mail
// carries personal data). The file appears whole or not at all: it is written
// to a temporary file in the same directory, synced and renamed.
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
	if err := writeFileAtomic(path, msg); err != nil {
		return fmt.Errorf("notify: outbox: %w", err)
	}
	to, subject, link := m.Summary() // never the body, nor a code
	attrs := []any{slog.String("to", to), slog.String("subject", subject)}
	if link != "" {
		attrs = append(attrs, slog.String("link", link))
	}
	o.log.InfoContext(ctx, "mail written to sandbox outbox", append(attrs, slog.String("file", path))...)
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory: create (0600), write, fsync, close, rename, then sync the
// directory so that the rename survives a crash.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*.eml") // CreateTemp uses mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		_ = d.Close()
	}
	return nil
}
