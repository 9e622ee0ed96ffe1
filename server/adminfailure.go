package server

import "onboard/server/web"

// errorBody is the error body the admin socket answers, the API's.
type errorBody = web.ErrorBody

// failure is an error's answer as the admin socket writes it: the
// status and body of web.FailureOf.
type failure struct {
	status int
	body   errorBody
	of     web.Failure
}

// failureOf is err's answer (web.FailureOf).
func failureOf(err error) failure {
	f := web.FailureOf(err)
	return failure{status: f.Status, body: f.Body, of: f}
}

// unexpected reports whether the client cannot act on the failure.
func (f failure) unexpected() bool { return f.of.Unexpected() }
