package onboarding

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProblems(t *testing.T) {
	type note struct {
		key, msg string
		every    bool // Note rather than Add
	}
	tests := []struct {
		name      string
		notes     []note
		wantField string // FieldErr's message; "" for nil
		wantErr   string // Err's message; "" for nil
	}{
		{name: "none"},
		{
			name:      "in the order found, never map order",
			notes:     []note{{key: "zeta", msg: "is wrong"}, {key: "alpha", msg: "is required"}, {key: "mid", msg: "is too long"}},
			wantField: "Invalid field values — zeta: is wrong; alpha: is required; mid: is too long",
			wantErr:   "is wrong\nis required\nis too long",
		},
		{
			name:      "a field keeps its first problem",
			notes:     []note{{key: "name", msg: "is required"}, {key: "name", msg: "is too long"}},
			wantField: "Invalid field values — name: is required",
			wantErr:   "is required",
		},
		{
			name:      "Note keeps every message of a key for Err",
			notes:     []note{{key: "field #1", msg: "label is empty", every: true}, {key: "field #1", msg: "type is empty", every: true}},
			wantField: "Invalid field values — field #1: label is empty",
			wantErr:   "label is empty\ntype is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Problems
			for _, n := range tt.notes {
				if n.every {
					p.Note(n.key, "%s", n.msg)
				} else {
					p.Add(n.key, Problem{Code: ProblemOther, Text: n.msg})
				}
			}
			if got, want := p.Empty(), len(tt.notes) == 0; got != want {
				t.Errorf("Empty() = %v, want %v", got, want)
			}
			if diff := cmp.Diff(tt.wantField, message(p.FieldErr())); diff != "" {
				t.Errorf("FieldErr (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, message(p.Err())); diff != "" {
				t.Errorf("Err (-want +got):\n%s", diff)
			}
			if len(tt.notes) > 0 {
				if !p.Has(tt.notes[0].key) || p.Has("absent") {
					t.Errorf("Has: wrong answer for %q or %q", tt.notes[0].key, "absent")
				}
				var e *Error
				if !errors.As(p.FieldErr(), &e) || e.Kind != KindInvalid || e.Details[tt.notes[0].key] != tt.notes[0].msg {
					t.Errorf("FieldErr = %#v, want a KindInvalid Error with details", p.FieldErr())
				}
			}
		})
	}
}

func message(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
