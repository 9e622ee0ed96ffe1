package onboarding

import (
	"context"
	"slices"
	"time"
)

// DefaultRegistryBudget bounds the registry work of one request (the
// company check and pre-population at create): create answers in time even
// when a registry hangs.
const DefaultRegistryBudget = 8 * time.Second

// companyCheck is a verified company and what its registry adds to it.
type companyCheck struct {
	company Company
	parties *Parties // nil when the registry has none or could not give them
	// partiesFailed is set when the registry has officers and owners but
	// could not give them in time.
	partiesFailed bool
}

// checkCompany verifies a company against its registry and, when the
// registry records officers and owners, fetches them for pre-population,
// all within the request's registry budget. A failure to fetch the parties
// does not fail the check: the company is verified, and the applicant
// enters the people themselves; it is logged.
func (s *Service) checkCompany(ctx context.Context, country, number, name string) (*companyCheck, error) {
	ctx, cancel := context.WithTimeout(ctx, s.registryBudget)
	defer cancel()
	c, err := s.registry.VerifyCompany(ctx, country, number, name)
	if err != nil {
		return nil, err
	}
	check := &companyCheck{company: c}
	if s.registry.Supports(country, FeatureParties) {
		p, err := s.registry.Parties(ctx, country, c.Number)
		if err != nil {
			s.log.Warn("registry officers and owners unavailable; the applicant will enter them",
				"country", country, "company_number", c.Number, "err", err)
			check.partiesFailed = true
		} else {
			check.parties = &p
		}
	}
	return check, nil
}

// applyParties adds a registry's people, entities and their ownership of
// the company to d, with new ids and source "registry" (docs/sandbox.md). An
// owner's percentage is the lower bound of its band, kept in
// PercentageBand ("75-100").
func applyParties(d *Data, p *Parties, random func() (string, error)) error {
	if p == nil {
		return nil
	}
	own := func(ownerType PartyType, ownerID string, b *ShareBand) error {
		if b == nil {
			return nil
		}
		id, err := random()
		if err != nil {
			return err
		}
		d.Ownership = append(d.Ownership, Ownership{
			ID: id, OwnerType: ownerType, OwnerID: ownerID, OwnedType: OwnedTarget,
			Percentage: b.Lower, PercentageBand: b.Label(), IsDirect: true,
		})
		return nil
	}
	for _, rp := range p.People {
		id, err := random()
		if err != nil {
			return err
		}
		d.People = append(d.People, Person{
			ID: id, Source: SourceRegistry, Roles: slices.Clone(rp.Roles),
			FullName: rp.FullName, FirstName: rp.FirstName, LastName: rp.LastName,
			DateOfBirth: rp.DateOfBirth, Nationality: rp.Nationality,
		})
		if err := own(OwnerPerson, id, rp.Shares); err != nil {
			return err
		}
	}
	for _, re := range p.Entities {
		id, err := random()
		if err != nil {
			return err
		}
		d.Entities = append(d.Entities, Entity{ID: id, Source: SourceRegistry, Name: re.Name, Type: re.Type, Country: re.Country})
		if err := own(OwnerEntity, id, re.Shares); err != nil {
			return err
		}
	}
	return nil
}
