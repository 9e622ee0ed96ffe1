package onboarding

import (
	"context"
	"slices"
)

// Changing the company (company selection): until the application is
// submitted, the applicant may undo the company they chose on the register
// and choose another. What the register brought with it goes; what the
// applicant added stays.

// Errors of changing the company.
var (
	// ErrCompanyNotChosen is the error for changing the company before
	// one was chosen.
	ErrCompanyNotChosen = &Error{Kind: KindConflict, Message: "No company has been chosen for this application yet."}
	// ErrCompanyNotChangeable is the error for changing a company the
	// applicant did not choose on the register: the partner gave it.
	ErrCompanyNotChangeable = &Error{Kind: KindConflict, Message: "The company was given when this application was started and cannot be changed here. If it is wrong, contact the organization that sent you the link."}
)

// companyFields are the company fields applyCompany fills in from a
// chosen company, which changing the company clears (company_country
// stays: it is the application's).
var companyFields = [...]string{"company_number", "company_name", "company_type", "incorporation_date", "registered_address"}

// CanChangeCompany reports whether the visitor may change the company
// (ChangeCompany): they chose it on the register, and the application is
// not yet submitted.
func (v *Visitor) CanChangeCompany() bool {
	return v.SignedIn && v.App.Status.Writable() && v.Config.CompanySelection && v.App.CompanyChosen
}

// ChangeCompany undoes the company the applicant chose on the register
// (company selection), so that they choose again: it clears the registry
// number, the company fields the choice filled in, the people and related
// companies from the register (with their ownership rows and documents),
// the registry sources and the registry documents. People, companies,
// ownership and documents the applicant added stay. Only a company chosen
// through company selection may be changed, and only before submission.
func (s *Service) ChangeCompany(ctx context.Context, v *Visitor) error {
	if err := editable(v); err != nil {
		return err
	}
	if err := changeableCompany(v.Config, v.App); err != nil {
		return err
	}
	var blobs []string
	err := s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		if err := changeableCompany(v.Config, a); err != nil {
			return Activity{}, err
		}
		number := a.RegistryNumber
		blobs = resetCompany(a, v.Form())
		return Activity{Action: ActionCompanyChanged, Detail: number}, nil
	})
	if err != nil {
		return err
	}
	s.deleteBlobs(blobs)
	return nil
}

// changeableCompany returns an error unless the company of a, on
// configuration cfg, is one the applicant chose and may change.
func changeableCompany(cfg *Configuration, a *Application) error {
	switch {
	case a.CompanyChosen && cfg.CompanySelection:
		return nil
	case cfg.CompanySelection && a.RegistryNumber == "" && len(a.Data.Fields["company_number"]) == 0:
		return ErrCompanyNotChosen
	}
	return ErrCompanyNotChangeable
}

// resetCompany takes off a what choosing its company put on it, and
// returns the files no longer referred to. The stages of form that show
// the company's fields count as not visited again: the next company's
// details are for the applicant to check.
func resetCompany(a *Application, form *Form) (blobs []string) {
	for _, id := range companyFields {
		delete(a.Data.Fields, id)
		if f, ok := form.Field(id); ok {
			a.Visited = slices.DeleteFunc(a.Visited, func(stage string) bool { return stage == f.Category })
		}
	}
	collect := func(docs map[string]Document) {
		for _, d := range docs {
			if d.BlobID != "" {
				blobs = append(blobs, d.BlobID)
			}
		}
	}
	d := &a.Data
	d.People = slices.DeleteFunc(d.People, func(p Person) bool {
		if p.Source != SourceRegistry {
			return false
		}
		collect(p.Documents)
		d.Ownership = slices.DeleteFunc(d.Ownership, func(o Ownership) bool { return o.Involves(OwnerPerson, p.ID) })
		return true
	})
	d.Entities = slices.DeleteFunc(d.Entities, func(e Entity) bool {
		if e.Source != SourceRegistry {
			return false
		}
		collect(e.Documents)
		d.Ownership = slices.DeleteFunc(d.Ownership, func(o Ownership) bool { return o.Involves(OwnerEntity, e.ID) })
		return true
	})
	for _, rd := range a.RegistryDocuments {
		if rd.BlobID != "" {
			blobs = append(blobs, rd.BlobID)
		}
	}
	a.RegistryDocuments, a.RegistryDocumentsStatus = nil, ""
	d.Meta.RegistrySources = nil
	a.RegistryNumber, a.CompanyChosen = "", false
	return blobs
}
