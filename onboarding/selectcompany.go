package onboarding

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// ErrCompanyAlreadyChosen is the error for choosing a company when the
// application already has one.
var ErrCompanyAlreadyChosen = &Error{Kind: KindConflict, Message: "The company has already been chosen for this application."}

// SearchForVisitor searches the registry of the visitor's application for
// companies named like query (company selection).
func (s *Service) SearchForVisitor(ctx context.Context, v *Visitor, query string) ([]CompanyMatch, error) {
	if err := editable(v); err != nil {
		return nil, err
	}
	if !v.NeedsCompany() {
		return nil, ErrCompanyAlreadyChosen
	}
	return s.SearchCompanies(ctx, v.App.Country, query)
}

// SelectCompany sets the applicant's chosen company (company selection):
// the same registry check and pre-population as create with a number.
// name is the registered name the search showed.
func (s *Service) SelectCompany(ctx context.Context, v *Visitor, number, name string) error {
	if err := editable(v); err != nil {
		return err
	}
	if !v.NeedsCompany() {
		return ErrCompanyAlreadyChosen
	}
	number, name = strings.TrimSpace(number), strings.TrimSpace(name)
	if number == "" || name == "" {
		return ErrCompanyNumberRequired
	}
	country := v.App.Country
	var check *companyCheck
	if s.registry.Supports(country, FeatureVerify) {
		var err error
		if check, err = s.checkCompany(ctx, country, number, name); err != nil {
			return err
		}
	}
	now := s.now().UTC()
	ids := make([]string, 0, 16)
	for range 16 {
		id, err := newUUID(s.random)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	pending := false
	err := s.changeForm(ctx, v, now, func(a *Application) (Activity, error) {
		if a.RegistryNumber != "" || len(a.Data.Fields["company_number"]) != 0 {
			return Activity{}, ErrCompanyAlreadyChosen
		}
		next := 0
		random := func() (string, error) {
			if next < len(ids) {
				next++
				return ids[next-1], nil
			}
			return newUUID(s.random)
		}
		if err := s.applyCompany(a, v.Config, number, name, check, random, now); err != nil {
			return Activity{}, err
		}
		a.CompanyChosen = true
		pending = a.RegistryDocumentsStatus == RegistryDocumentsPending
		return Activity{Action: ActionCompanySelected, Detail: number}, nil
	})
	if err != nil {
		return err
	}
	if pending {
		s.wakeRegistryDocuments()
	}
	return nil
}

// applyCompany records a company on an application: its number and name,
// and, when a registry verified it, the registry's details, people and
// owners (docs/sandbox.md); an eligible application starts fetching registry
// documents.
func (s *Service) applyCompany(a *Application, cfg *Configuration, number, name string, check *companyCheck, random func() (string, error), now time.Time) error {
	if a.Data.Fields == nil {
		a.Data.Fields = map[string]json.RawMessage{}
	}
	if RegistryEligible(cfg, a.Country, number) {
		a.RegistryDocumentsStatus = RegistryDocumentsPending
	}
	prefill := map[string]any{"company_country": a.Country}
	if number != "" {
		prefill["company_number"] = number
		prefill["company_name"] = name
	}
	if check != nil {
		company := &check.company
		if err := applyParties(&a.Data, check.parties, random); err != nil {
			return err
		}
		a.RegistryNumber = company.Number
		prefill["company_number"] = company.Number
		prefill["company_name"] = company.Name
		if company.Type != "" {
			prefill["company_type"] = company.Type
		}
		if company.IncorporationDate != "" {
			prefill["incorporation_date"] = company.IncorporationDate
		}
		if company.RegisteredAddress != nil {
			prefill["registered_address"] = company.RegisteredAddress
		}
		a.Data.Meta.RegistrySources = []RegistrySource{company.Source}
	}
	s.prefill(cfg.Form, a.Data.Fields, prefill, now)
	return nil
}

// LookupForVisitor finds the company with number in the registry of the
// visitor's application (company selection), for the applicant to
// confirm before choosing it: a search by number, and the "Is this your
// company?" page. The registry's errors are VerifyCompany's (not found,
// not active, malformed number).
func (s *Service) LookupForVisitor(ctx context.Context, v *Visitor, number string) (Company, error) {
	if err := editable(v); err != nil {
		return Company{}, err
	}
	if !v.NeedsCompany() {
		return Company{}, ErrCompanyAlreadyChosen
	}
	number = strings.TrimSpace(number)
	if number == "" {
		return Company{}, ErrCompanyNumberRequired
	}
	if !s.registry.Supports(v.App.Country, FeatureVerify) {
		return Company{}, ErrSearchNotAvailable(v.App.Country)
	}
	ctx, cancel := context.WithTimeout(ctx, s.registryBudget)
	defer cancel()
	return s.registry.VerifyCompany(ctx, v.App.Country, number, "")
}
