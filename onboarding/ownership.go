package onboarding

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// OwnershipInput is one ownership statement of the applicant. Owner is
// "person:{id}" or "entity:{id}"; Owned is "target" (the applying company)
// or "entity:{id}"; Percentage is a number from 0 to 100 as typed.
type OwnershipInput struct {
	Owner, Owned, Percentage string
	IsDirect, IsNominee      bool
}

// OwnershipTotalError is the error for ownership of one party that would
// add up to more than 100%: the statement as a whole is wrong, so its
// message is meant for the percentage and for the page alike.
type OwnershipTotalError struct{ Err *Error }

// Error returns the message the applicant reads.
func (e *OwnershipTotalError) Error() string { return e.Err.Message }

// Unwrap returns the Error, so that AsError and the server's status table
// see it.
func (e *OwnershipTotalError) Unwrap() error { return e.Err }

// ErrOwnershipOver100 is the error for ownership of owned that would add
// up to total percent, more than 100%.
func ErrOwnershipOver100(owned string, total float64) *OwnershipTotalError {
	e := Errorf(KindInvalid, "Ownership of %s would add up to %s%%, more than 100%%. Check the percentages.", owned, FormatPercent(total))
	e.Details = map[string]string{"percentage": fmt.Sprintf("would bring the total for %s to %s%%; the total cannot be more than 100%%", owned, FormatPercent(total))}
	return &OwnershipTotalError{Err: e}
}

// FormatPercent writes a percentage for people, to at most two decimals
// and without trailing zeros: 75, 2.5, 33.33.
func FormatPercent(p float64) string {
	return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64)
}

// SaveOwnership adds an ownership row (ownershipID "") or changes one the
// applicant added, and returns its id. The stated ownership of any one
// party may not add up to more than 100%.
func (s *Service) SaveOwnership(ctx context.Context, v *Visitor, ownershipID string, in OwnershipInput) (string, error) {
	if err := editable(v); err != nil {
		return "", err
	}
	var problems Problems
	owner, ownerID, _ := strings.Cut(in.Owner, ":")
	ownerType := PartyType(owner)
	if !(ownerType == OwnerPerson && v.App.Data.Person(ownerID) != nil ||
		ownerType == OwnerEntity && v.App.Data.Entity(ownerID) != nil) {
		problems.Add("owner", "choose who owns the shares")
		ownerType = ""
	}
	owned, ownedID, _ := strings.Cut(in.Owned, ":")
	ownedType := PartyType(owned)
	switch {
	case PartyType(in.Owned) == OwnedTarget:
		ownedType, ownedID = OwnedTarget, ""
	case ownedType == OwnedEntity && v.App.Data.Entity(ownedID) != nil:
	default:
		problems.Add("owned", "choose which company is owned")
		ownedType = ""
	}
	if ownerType == OwnerEntity && ownedType == OwnedEntity && ownerID == ownedID {
		problems.Add("owned", "a company cannot own itself")
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(in.Percentage), "%"), 64)
	if err != nil || math.IsNaN(pct) || pct < 0 || pct > 100 {
		problems.Add("percentage", msgNotPercent)
	}
	if err := problems.FieldErr(); err != nil {
		return "", err
	}
	id := ownershipID
	if id == "" {
		if id, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err = s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		// The parties may have been removed since the page was read.
		if !(ownerType == OwnerPerson && a.Data.Person(ownerID) != nil ||
			ownerType == OwnerEntity && a.Data.Entity(ownerID) != nil) {
			return Activity{}, ErrInvalidFieldValues([]string{"owner"}, map[string]string{"owner": "choose who owns the shares"})
		}
		if ownedType == OwnedEntity && a.Data.Entity(ownedID) == nil {
			return Activity{}, ErrInvalidFieldValues([]string{"owned"}, map[string]string{"owned": "choose which company is owned"})
		}
		// Direct holdings of one party add up to at most 100%, and so do
		// the indirect ones (an owner's stake through other companies):
		// the same shares appear once in each view.
		total := pct
		for _, o := range a.Data.Ownership {
			if o.ID != id && o.OwnedType == ownedType && o.OwnedID == ownedID && o.IsDirect == in.IsDirect {
				total += o.Percentage
			}
		}
		if total > 100+1e-9 {
			return Activity{}, ErrOwnershipOver100(ownedName(a, ownedType, ownedID), total)
		}
		i := slices.IndexFunc(a.Data.Ownership, func(o Ownership) bool { return o.ID == id })
		if i < 0 {
			if ownershipID != "" {
				return Activity{}, ErrOwnershipNotFound
			}
			a.Data.Ownership = append(a.Data.Ownership, Ownership{ID: id})
			i = len(a.Data.Ownership) - 1
		} else if a.Data.Ownership[i].PercentageBand != "" {
			return Activity{}, ErrRegistryRecord
		}
		a.Data.Ownership[i] = Ownership{ID: id, OwnerType: ownerType, OwnerID: ownerID, OwnedType: ownedType, OwnedID: ownedID,
			Percentage: pct, IsDirect: in.IsDirect, IsNominee: in.IsNominee}
		return Activity{Action: ActionOwnershipSaved, Detail: id}, nil
	})
	return id, err
}

// ownedName names an owned party for messages.
func ownedName(a *Application, ownedType PartyType, ownedID string) string {
	if ownedType == OwnedEntity {
		if e := a.Data.Entity(ownedID); e != nil {
			return e.Name
		}
	}
	if n := a.CompanyName(); n != "" {
		return n
	}
	return "the company"
}

// RemoveOwnership removes an ownership row the applicant added.
func (s *Service) RemoveOwnership(ctx context.Context, v *Visitor, ownershipID string) error {
	if err := editable(v); err != nil {
		return err
	}
	return s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		i := slices.IndexFunc(a.Data.Ownership, func(o Ownership) bool { return o.ID == ownershipID })
		if i < 0 {
			return Activity{}, ErrOwnershipNotFound
		}
		if a.Data.Ownership[i].PercentageBand != "" {
			return Activity{}, ErrRegistryRecord
		}
		a.Data.Ownership = slices.Delete(a.Data.Ownership, i, i+1)
		return Activity{Action: ActionOwnershipRemoved, Detail: ownershipID}, nil
	})
}
