package form

import "onboard/onboarding"

// The form's wording, for the tests of the whole server (package server),
// which check that the pages say what these say.

// NoticeText is the fixed message a redirect's notice code asks for; ""
// for an unknown code.
func NoticeText(code string) string { return notices[code] }

// DateText shows an ISO date ("2018-04-16") as the pages do ("16 April
// 2018").
func DateText(iso string) string { return dateText(iso) }

// FieldMessages are the form's messages for the problem the domain found
// with a value of field f, one per wrong input.
func FieldMessages(f *onboarding.Field, pr onboarding.Problem) []string {
	var msgs []string
	for _, pe := range plainErrors(f, pr, nil) {
		msgs = append(msgs, pe.Message)
	}
	return msgs
}
