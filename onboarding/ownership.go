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
// up to total percent, more than 100%; others, when given, say who holds
// the rest ("Eleanor Smith holds at least 75% (from the company
// register)"), so that the applicant sees where the total comes from.
func ErrOwnershipOver100(owned string, total float64, others ...string) *OwnershipTotalError {
	msg := fmt.Sprintf("Ownership of %s would add up to %s%%, more than 100%%.", owned, FormatPercent(total))
	if len(others) > 0 {
		msg += " Already stated: " + strings.Join(others, "; ") + "."
	}
	e := &Error{Kind: KindInvalid, Message: msg + " Check the percentages."}
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
	row, err := readOwnership(&v.App.Data, in)
	if err != nil {
		return "", err
	}
	row.ID = ownershipID
	if row.ID == "" {
		if row.ID, err = newUUID(s.random); err != nil {
			return "", err
		}
	}
	err = s.changeForm(ctx, v, s.now().UTC(), func(a *Application) (Activity, error) {
		if err := checkOwnership(a, row); err != nil {
			return Activity{}, err
		}
		i := slices.IndexFunc(a.Data.Ownership, func(o Ownership) bool { return o.ID == row.ID })
		switch {
		case i < 0 && ownershipID != "":
			return Activity{}, ErrOwnershipNotFound
		case i < 0:
			a.Data.Ownership = append(a.Data.Ownership, row)
		case a.Data.Ownership[i].PercentageBand != "":
			return Activity{}, ErrRegistryRecord
		default:
			a.Data.Ownership[i] = row
		}
		return Activity{Action: ActionOwnershipSaved, Detail: row.ID}, nil
	})
	return row.ID, err
}

// readOwnership checks a statement against the parties of d (as the page
// saw them) and returns the row it states, without an id.
func readOwnership(d *Data, in OwnershipInput) (Ownership, error) {
	var problems Problems
	owner, ownerID, _ := strings.Cut(in.Owner, ":")
	row := Ownership{OwnerType: PartyType(owner), OwnerID: ownerID, IsDirect: in.IsDirect, IsNominee: in.IsNominee}
	if !d.hasOwner(row) {
		problems.Add("owner", Problem{Code: ProblemNoOwner})
		row.OwnerType = ""
	}
	owned, ownedID, _ := strings.Cut(in.Owned, ":")
	row.OwnedType, row.OwnedID = PartyType(owned), ownedID
	switch {
	case PartyType(in.Owned) == OwnedTarget:
		row.OwnedType, row.OwnedID = OwnedTarget, ""
	case row.OwnedType == OwnedEntity && d.Entity(ownedID) != nil:
	default:
		problems.Add("owned", Problem{Code: ProblemNoOwned})
		row.OwnedType = ""
	}
	if row.OwnerType == OwnerEntity && row.OwnedType == OwnedEntity && row.OwnerID == row.OwnedID {
		problems.Add("owned", Problem{Code: ProblemOwnsItself})
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(in.Percentage), "%"), 64)
	if err != nil || math.IsNaN(pct) || pct < 0 || pct > 100 {
		problems.Add("percentage", Problem{Code: ProblemNotPercentage})
	}
	row.Percentage = pct
	return row, problems.FieldErr()
}

// hasOwner reports whether the owner of row is a person or entity of d.
func (d *Data) hasOwner(row Ownership) bool {
	return row.OwnerType == OwnerPerson && d.Person(row.OwnerID) != nil ||
		row.OwnerType == OwnerEntity && d.Entity(row.OwnerID) != nil
}

// checkOwnership checks row against the stored application: its parties
// are still there (they may have been removed since the page was read),
// and the ownership it states of one party adds up to at most 100%.
func checkOwnership(a *Application, row Ownership) error {
	if !a.Data.hasOwner(row) {
		return errFieldProblem("owner", Problem{Code: ProblemNoOwner})
	}
	if row.OwnedType == OwnedEntity && a.Data.Entity(row.OwnedID) == nil {
		return errFieldProblem("owned", Problem{Code: ProblemNoOwned})
	}
	// Direct holdings of one party add up to at most 100%, and so do the
	// indirect ones (an owner's stake through other companies): the same
	// shares appear once in each view.
	total := row.Percentage
	var others []string
	for _, o := range a.Data.Ownership {
		if o.ID != row.ID && o.OwnedType == row.OwnedType && o.OwnedID == row.OwnedID && o.IsDirect == row.IsDirect {
			total += o.Percentage
			others = append(others, holding(a, o))
		}
	}
	if total > 100+1e-9 {
		if len(others) > 3 {
			others = append(others[:3], fmt.Sprintf("and %d more", len(others)-3))
		}
		return ErrOwnershipOver100(ownedName(a, row.OwnedType, row.OwnedID), total, others...)
	}
	return nil
}

// holding says who holds o's share, for messages: "Eleanor Smith holds
// at least 75% (from the company register)", "Acme Ltd holds 30%".
func holding(a *Application, o Ownership) string {
	who := "someone"
	switch o.OwnerType {
	case OwnerPerson:
		if p := a.Data.Person(o.OwnerID); p != nil {
			who = PersonName(p)
		}
	case OwnerEntity:
		if e := a.Data.Entity(o.OwnerID); e != nil && e.Name != "" {
			who = e.Name
		}
	}
	if o.PercentageBand != "" {
		return who + " holds at least " + FormatPercent(o.Percentage) + "% (from the company register)"
	}
	return who + " holds " + FormatPercent(o.Percentage) + "%"
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
