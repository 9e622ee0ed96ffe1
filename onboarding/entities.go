package onboarding

import (
	"context"
	"slices"
	"strings"
)

// EntityInput is the applicant's answers about a related legal entity.
type EntityInput struct {
	Name    string
	Type    EntityType
	Country string
}

// SaveEntity adds a related entity (entityID "") or changes one the
// applicant added, and returns its id.
func (s *Service) SaveEntity(ctx context.Context, v *Visitor, entityID string, in EntityInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	if entityID != "" {
		e := v.App.Data.Entity(entityID)
		if e == nil {
			return "", ErrEntityNotFound
		}
		if e.Source == SourceRegistry {
			return "", ErrRegistryRecord
		}
	}
	name := strings.Join(strings.Fields(in.Name), " ")
	country := strings.ToUpper(strings.TrimSpace(in.Country))
	var problems Problems
	if name == "" {
		problems.Add("name", Problem{Code: ProblemRequired, Text: "enter the company's legal name"})
	} else if len(name) > 300 {
		problems.Add("name", Problem{Code: ProblemTooLong, Limit: 300})
	}
	if !slices.Contains(EntityTypes(), in.Type) {
		problems.Add("type", Problem{Code: ProblemNotOption, Allowed: stringsOf(EntityTypes())})
	}
	if country != "" && !IsCountryCode(country) {
		problems.Add("country", Problem{Code: ProblemNotTwoLetterCountry})
	}
	if err := problems.FieldErr(); err != nil {
		return "", err
	}
	id := entityID
	if id == "" {
		var err error
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		e := a.Data.Entity(id)
		if e != nil && e.Source == SourceRegistry {
			return Activity{}, ErrRegistryRecord
		}
		if e == nil {
			if entityID != "" {
				return Activity{}, ErrEntityNotFound
			}
			a.Data.Entities = append(a.Data.Entities, Entity{ID: id, Source: SourceUserAdded})
			e = &a.Data.Entities[len(a.Data.Entities)-1]
		}
		e.Name, e.Type, e.Country = name, in.Type, country
		return Activity{Action: ActionEntitySaved, Detail: id}, nil
	})
	return id, err
}

// RemoveEntity removes an entity the applicant added, with every ownership
// row it is part of and its documents.
func (s *Service) RemoveEntity(ctx context.Context, v *Visitor, entityID string) error {
	return s.removeParty(ctx, v, OwnerEntity, entityID, func(d *Data) *addedParty {
		i := slices.IndexFunc(d.Entities, func(e Entity) bool { return e.ID == entityID })
		if i < 0 {
			return nil
		}
		e := &d.Entities[i]
		return &addedParty{source: e.Source, documents: e.Documents, drop: func() { d.Entities = slices.Delete(d.Entities, i, i+1) }}
	})
}
