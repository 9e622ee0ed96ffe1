package server

// ErrorAnswer is the status and error message the API answers err with,
// from the error table: the admin socket answers its errors the same way.
func ErrorAnswer(err error) (status int, message string) {
	f := failureOf(err)
	return f.status, f.body.Error
}
