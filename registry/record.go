package registry

import (
	"context"
	"errors"
	"fmt"
	"io"

	"onboard/onboarding"
)

// Visit makes every request onboard makes about one company, in the order
// it makes them, so that a Recorder transport captures a complete set of
// recordings (`onboard registry record`): the profile, and for Companies
// House also the officers, the persons with significant control, the filing
// history and each filing's document chain (metadata, content redirect,
// storage). report receives one line per step. Registry answers that
// onboard maps to rejections or failures (404, 429, 500, a failed download)
// are reported and recorded, not returned: they are what a recording is
// for. Only a malformed number, an unsupported country or ctx ending is an
// error.
func (r *Registry) Visit(ctx context.Context, country, number string, report func(string)) error {
	step := func(what string, err error) bool {
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			report(fmt.Sprintf("%s: %v", what, err))
			return false
		}
		report(what + ": ok")
		return true
	}
	a, err := r.adapters.of(country)
	if err != nil {
		return err
	}
	n, err := a.normalize(number)
	if err != nil {
		return err
	}
	_, err = a.company(ctx, n)
	if !step("company profile", err) {
		return ctx.Err()
	}
	if a.parties != nil {
		p, err := a.parties(ctx, n)
		if step(fmt.Sprintf("officers and PSCs (%d people, %d entities)", len(p.People), len(p.Entities)), err); ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if a.filings == nil || a.openFiling == nil {
		return ctx.Err()
	}
	filings, err := a.filings(ctx, n)
	if !step(fmt.Sprintf("filing history (%d documents)", len(filings)), err) {
		return ctx.Err()
	}
	for _, f := range filings {
		step(fmt.Sprintf("document %s %s %s", f.Ref, f.DocumentType, f.FilingDate), readAll(ctx, a, f))
	}
	return ctx.Err()
}

// readAll downloads a filing to nowhere: the recorder keeps the bytes.
func readAll(ctx context.Context, a adapter, f onboarding.Filing) error {
	rc, err := a.openFiling(ctx, f)
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err == nil && n == 0 {
		err = errors.New("empty document")
	}
	return err
}
