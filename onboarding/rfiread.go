package onboarding

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// GetRFIRequest returns the RFI request id of k's organization.
func (s *Service) GetRFIRequest(ctx context.Context, k *APIKey, id string) (*RFIRequest, error) {
	if err := Authorize(k, ScopeRFIRead); err != nil {
		return nil, err
	}
	return s.rfiRequest(ctx, k.OrgID, id)
}

// rfiRequest loads the request id of org; another organization's request
// is not found.
func (s *Service) rfiRequest(ctx context.Context, org, id string) (*RFIRequest, error) {
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return nil, ErrRFINotFound
	}
	r, err := s.store.RFIRequest(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrRFINotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load rfi request: %w", err)
	}
	if r.OrgID != org {
		return nil, ErrRFINotFound
	}
	return r, nil
}

// ListRFIRequests returns a page of k's organization's RFI requests,
// newest first: of one status, or of every status when status is empty.
func (s *Service) ListRFIRequests(ctx context.Context, k *APIKey, status RFIStatus, req PageRequest) (*Page[*RFIRequest], error) {
	if err := Authorize(k, ScopeRFIRead); err != nil {
		return nil, err
	}
	q := RFIListQuery{OrgID: k.OrgID, Status: status, Limit: req.Limit}
	filter := "rfi:" + string(q.Status)
	var err error
	if q.Before, err = req.Cursor.after(filter); err != nil {
		return nil, err
	}
	reqs, more, err := s.store.ListRFIRequests(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list rfi requests: %w", err)
	}
	return newPage(reqs, more, func(r *RFIRequest) ulid.ULID { return r.Seq }, filter), nil
}

// GetRFIDocument returns a download link, valid DocumentDownloadTTL, for
// the document docID of the RFI request id; only accepted and forced
// documents with a file are found.
func (s *Service) GetRFIDocument(ctx context.Context, k *APIKey, id, docID string) (*DocumentLink, error) {
	if err := Authorize(k, ScopeRFIRead); err != nil {
		return nil, err
	}
	r, err := s.rfiRequest(ctx, k.OrgID, id)
	if err != nil {
		return nil, err
	}
	if u, err := uuid.Parse(docID); err != nil || u.String() != docID {
		return nil, ErrDocumentNotFound
	}
	for _, d := range r.Documents {
		if d.FileID != docID || (d.Status != DocumentAccepted && d.Status != DocumentForced) || d.BlobID == "" {
			continue
		}
		link := s.DocumentURL(&d, DocumentDownloadTTL)
		if link == "" {
			break
		}
		return &DocumentLink{URL: link, FileName: d.FileName, FileType: d.FileType}, nil
	}
	return nil, ErrDocumentNotFound
}
