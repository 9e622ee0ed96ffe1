package form

import "time"

// testNow is the tests' fixed "now", the same as the whole server's tests'.
var testNow = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
