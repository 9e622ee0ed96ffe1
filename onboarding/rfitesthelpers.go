package onboarding

import (
	"bytes"
	"context"
)

// Sandbox test helpers for RFI requests (docs/sandbox.md): complete a request
// as its contact would, or expire it as the sweep would, through the same
// code.

// ErrCannotCompleteRFI is the 400 for completing, through the test
// helper, a request that is no longer active.
func ErrCannotCompleteRFI(st RFIStatus) *Error {
	return Errorf(KindInvalid, "Cannot complete RFI request in %s status", st)
}

// ErrCannotExpireRFI is the 400 for expiring, through the test helper, a
// request that is no longer active.
func ErrCannotExpireRFI(st RFIStatus) *Error {
	return Errorf(KindInvalid, "Cannot expire RFI request in %s status", st)
}

// CompleteRFIForTest completes an RFI request of k's organization as its
// contact would: it opens the request (rfi_request.opened, when not yet
// opened), uploads a sample file for every requested document not yet
// accepted, through the page's upload step, and completes it
// (rfi_request.completed). It answers the completed request. idem, when
// not nil, is the request's Idempotency-Key: its outcome is committed
// with the completion, so that a retry after a crash before it does the
// rest of the work and one after it does nothing again.
func (s *Service) CompleteRFIForTest(ctx context.Context, k *APIKey, id string, idem *Idempotency) (*RFIRequest, error) {
	if err := Authorize(k, ScopeRFICreate); err != nil {
		return nil, err
	}
	r, err := s.rfiRequest(ctx, k.OrgID, id)
	if err != nil {
		return nil, err
	}
	actor := keyActor(k)
	v := &RFIVisitor{Request: r, Participant: r.Primary(), Org: s.orgs[r.OrgID], now: s.now().UTC(), acting: &actor, idem: idem}
	if r.Status != RFIActive || v.Participant == nil || v.Org == nil {
		return nil, ErrCannotCompleteRFI(r.Status)
	}
	if v.Expired() {
		return nil, ErrCannotCompleteRFI(RFIExpired)
	}
	if r.OpenedAt == nil {
		if err := s.markRFIOpened(ctx, v, v.now); err != nil {
			return nil, err
		}
	}
	for _, f := range s.RFIDocumentFields(r) {
		if d, ok := v.Request.Documents[f.ID]; ok && d.Status == DocumentAccepted {
			continue
		}
		file, err := sampleDocument(f)
		if err != nil {
			return nil, err
		}
		doc, err := s.UploadRFIDocument(ctx, v, Upload{FieldID: f.ID, FileName: file.Name, Type: file.Type, Body: bytes.NewReader(file.Body)})
		if err != nil {
			return nil, err
		}
		if doc.Status != DocumentAccepted {
			return nil, ErrSampleRejected(f, doc.RejectReason)
		}
	}
	if err := s.CompleteRFI(ctx, v); err != nil {
		return nil, err
	}
	return v.Request, nil
}

// ExpireRFIForTest expires an active RFI request of k's organization now,
// as the sweep does at its expires_at (rfi_request.expired). idem, when
// not nil, is the request's Idempotency-Key: its outcome is committed
// with the expiry.
func (s *Service) ExpireRFIForTest(ctx context.Context, k *APIKey, id string, idem *Idempotency) (*RFIRequest, error) {
	if err := Authorize(k, ScopeRFICreate); err != nil {
		return nil, err
	}
	r, err := s.rfiRequest(ctx, k.OrgID, id)
	if err != nil {
		return nil, err
	}
	if r.Status != RFIActive {
		return nil, ErrCannotExpireRFI(r.Status)
	}
	expired, err := s.expireRFI(ctx, id, keyActor(k), false, idem.rfiOutcome())
	if err == errUnchanged {
		// Completed or expired since it was read.
		if r, err = s.rfiRequest(ctx, k.OrgID, id); err != nil {
			return nil, err
		}
		return nil, ErrCannotExpireRFI(r.Status)
	}
	return expired, err
}
