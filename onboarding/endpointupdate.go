package onboarding

import "errors"

// ErrQueueLeft is answered, committing nothing, by a store's change of an
// endpoint (ChangeEndpointThenDrop's change) that would enable it while
// its queue still holds deliveries from when it was disabled.
var ErrQueueLeft = errors.New("the disabled endpoint still has deliveries queued")

// ChangeEndpointThenDrop is a store's UpdateEndpoint in the two steps
// every backend takes, so that the change's transaction touches the
// endpoint's record alone and does not conflict with the queue's traffic:
// change commits the change of the record (ErrQueueLeft: it would enable
// the endpoint with deliveries left); drop drops what is queued for the
// endpoint, each delivery logged. An endpoint disabled after the change
// has its queue dropped before this returns; a change refused with
// ErrQueueLeft drops the queue and is tried again, up to attempts times in
// all, so that enabling never resumes a delivery that disabling dropped
// (while an endpoint is disabled nothing joins its queue).
func ChangeEndpointThenDrop(attempts int, change func() (*Endpoint, error), drop func() error) (*Endpoint, error) {
	for round := 1; ; round++ {
		ep, err := change()
		if errors.Is(err, ErrQueueLeft) && round < attempts {
			if err := drop(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !ep.Enabled {
			if err := drop(); err != nil {
				return nil, err
			}
		}
		return ep, nil
	}
}
