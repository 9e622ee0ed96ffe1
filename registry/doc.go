// Package registry checks companies against official company registries:
// Companies House (GB) and the Companies Registration Office, CRO (IE). It
// implements onboarding.Registry and owns company number normalisation and
// company name matching.
//
// There is one adapter per registry, and its only seam is the
// http.RoundTripper of its http.Client: live mode uses a clone of
// http.DefaultTransport, fixtures mode (the sandbox, and tests) a
// FixtureTransport that answers from recordings of the registries' own JSON
// and refuses every request it has no recording for. The same request
// building, decoding and mapping code runs in both modes.
//
// # Recordings
//
// A recording is a JSON file (any *.json under the fixtures root; the
// project's live in testdata/registry, one directory per registry) that
// describes one request and the registry's answer:
//
//	{
//	  "comment": "free text",
//	  "request": {
//	    "method": "GET",
//	    "host": "api.company-information.service.gov.uk",
//	    "path": "/company/10000001",
//	    "query": "format=json"
//	  },
//	  "response": {
//	    "status": 200,
//	    "headers": {"Content-Type": "application/json"},
//	    "body": {"company_name": "NORTHWIND TRADING LIMITED"}
//	  }
//	}
//
// A request matches on method, host (without the scheme's default port), path
// and query; the query's parameter order does not matter, and request headers
// (credentials included) play no part. A path segment written {name} is a
// wildcard for one segment, which makes the recording a fallback: an exact
// recording wins over any fallback, and a fallback with more literal segments
// wins over one with fewer. "GET /company/{company_number}" answering 404 is
// how any other well-formed number is "not found, as the registry would".
//
// The response has a status, headers (one value each; Location for a
// redirect) and at most one body: "body" is inline JSON served byte for byte,
// "body_text" a string served as it is (a plain-text error page), and
// "body_file" the name of a file beside the recording served as it is (PDF
// and other binary content). Recordings never hold credentials: an
// Authorization, Proxy-Authorization, Cookie or Set-Cookie header is refused
// when the recordings are loaded, as are duplicates and ambiguous fallbacks.
//
// # Errors
//
// VerifyCompany returns its rejections as the
// onboarding package's *onboarding.Error values. Registry trouble is wrapped:
// errors.As finds onboarding.ErrRegistryUnavailable (429, 503, timeouts,
// connection failures) or onboarding.ErrRegistryFailed (other statuses,
// undecodable answers, unrecorded requests), and the error text carries the
// cause for the logs.
package registry
