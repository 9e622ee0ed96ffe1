package onboarding

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChangeEndpointThenDrop(t *testing.T) {
	errDrop, errChange := errors.New("drop"), errors.New("change")
	enabled, disabled := &Endpoint{ID: "we_1", Enabled: true}, &Endpoint{ID: "we_1"}
	type answer struct {
		ep  *Endpoint
		err error
	}
	tests := []struct {
		name      string
		changes   []answer // the change's answers, in turn; the last repeats
		dropErr   error
		want      *Endpoint
		wantErr   error
		wantCalls []string
	}{
		{"enabled after the change", []answer{{enabled, nil}}, nil, enabled, nil, []string{"change"}},
		{"disabled after the change", []answer{{disabled, nil}}, nil, disabled, nil, []string{"change", "drop"}},
		{"the queue left, then enabled", []answer{{nil, ErrQueueLeft}, {enabled, nil}}, nil, enabled, nil, []string{"change", "drop", "change"}},
		{"the queue left every time", []answer{{nil, ErrQueueLeft}}, nil, nil, ErrQueueLeft, []string{"change", "drop", "change", "drop", "change"}},
		{"the change fails", []answer{{nil, errChange}}, nil, nil, errChange, []string{"change"}},
		{"the drop fails", []answer{{disabled, nil}}, errDrop, nil, errDrop, []string{"change", "drop"}},
		{"the drop of what was left fails", []answer{{nil, ErrQueueLeft}}, errDrop, nil, errDrop, []string{"change", "drop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			got, err := ChangeEndpointThenDrop(3, func() (*Endpoint, error) {
				a := tt.changes[min(countOf(calls, "change"), len(tt.changes)-1)]
				calls = append(calls, "change")
				return a.ep, a.err
			}, func() error {
				calls = append(calls, "drop")
				return tt.dropErr
			})
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("= %+v, %v; want %+v, %v", got, err, tt.want, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// countOf counts the elements of ss equal to s.
func countOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}
