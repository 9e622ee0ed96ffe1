package server

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

// TestFieldErrors: the summary follows the page's controls, then lists
// reasons about no control in the order the domain found them (by key when
// it does not say), never map order.
func TestFieldErrors(t *testing.T) {
	controls := []labelled{{"name", "Legal name"}, {"type", "Relationship"}, {"country", "Country"}}
	invalid := func(details map[string]string) error {
		return &onboarding.Error{Kind: onboarding.KindInvalid, Message: "Validation failed", Details: details}
	}
	tests := []struct {
		name string
		err  error
		want *formErrors
	}{
		{"no error", nil, nil},
		{"not a validation error", errors.New("disk on fire"), nil},
		{"validation error without details", invalid(nil), nil},
		{"conflict", &onboarding.Error{Kind: onboarding.KindConflict, Message: "x", Details: map[string]string{"name": "taken"}}, nil},
		{
			"controls in page order, then the rest by key",
			invalid(map[string]string{"zeta": "is odd", "country": "is not a code", "alpha": "is wrong", "name": "is required", "mid": "is late"}),
			&formErrors{
				byControl: map[string]string{
					"name": "Legal name is required", "country": "Country is not a code",
					"alpha": "is wrong", "mid": "is late", "zeta": "is odd",
				},
				summary: []errorItem{
					{Anchor: "name", Message: "Legal name is required"},
					{Anchor: "country", Message: "Country is not a code"},
					{Message: "is wrong"},
					{Message: "is late"},
					{Message: "is odd"},
				},
			},
		},
		{
			"controls in page order, then the rest in the order the domain found them",
			onboarding.ErrInvalidFieldValues([]string{"zeta", "country", "alpha"}, map[string]string{"zeta": "is odd", "country": "is not a code", "alpha": "is wrong"}),
			&formErrors{
				byControl: map[string]string{"country": "Country is not a code", "alpha": "is wrong", "zeta": "is odd"},
				summary: []errorItem{
					{Anchor: "country", Message: "Country is not a code"},
					{Message: "is odd"},
					{Message: "is wrong"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldErrors(tt.err, controls)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(formErrors{})); diff != "" {
				t.Errorf("fieldErrors (-want +got):\n%s", diff)
			}
		})
	}
}
