package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
	"onboard/server/form"
	"onboard/server/web"
)

// createWith is a valid create body for acme with the given members
// replaced: each pair is a member's text as it stands in the body and its
// replacement.
func createWith(pairs ...string) string {
	return strings.NewReplacer(pairs...).Replace(`{"primary_contact":{"email":"jane@northwind.example","name":"Jane Smith"},"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`)
}

// msgNull is the message for a member given null that may not be.
func msgNull(path string) string { return "Invalid JSON body: " + path + " must not be null" }

// fieldErr is the body of a PATCH refused for one field.
func fieldErr(id, reason string) map[string]any {
	return map[string]any{"error": "Invalid field values — " + id + ": " + reason, "details": map[string]any{id: reason}}
}

const (
	msgDupKey      = `Invalid JSON body: duplicate key `
	msgControl     = "must not contain control characters such as NUL, tab or a line break"
	msgEmail       = "Invalid email address for primary_contact.email"
	longLabel      = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl" // 64 characters
	registeredGB   = `"company_name":"Northwind Trading Ltd"`
	registeredAddr = `{"line1":"1 High Street","city":"London","postcode":"EC1A 1AA","country":"GB"}`
	msgQueryEscape = "Invalid query string: invalid %-escape "
	msgQueryDup    = "Invalid query string: duplicate parameter "
)

// TestBadInputIsRefused sends bad bodies to every JSON endpoint through
// the real router: each gets its 400 and exact message, and nothing is
// stored or sent.
func TestBadInputIsRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.create(t, "acme", "")
	app := "/api/external/applications/" + id
	before := e.do("GET", app, "acme", "").Body.String()
	mails := len(e.mail.messages())
	long := strings.Repeat("x", 500_000)

	tests := []struct {
		name, method, path, body string
		want                     map[string]any
	}{
		// Duplicate keys, at any depth, on every endpoint that reads JSON.
		{"create: a top-level key twice", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":"GB","country":"FR"`), errBody(msgDupKey + `"country"`)},
		{"create: a nested key twice", "POST", "/api/external/applications",
			createWith(`"name":"Jane Smith"`, `"name":"Jane Smith","email":"eve@evil.example"`), errBody(msgDupKey + `"primary_contact.email"`)},
		{"create: a key twice in an unknown member", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":"GB","extra":[{"a":1,"a":2}]`), errBody(msgDupKey + `"extra[0].a"`)},
		{"create: the same key escaped differently", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":"GB","c\u006funtry":"FR"`), errBody(msgDupKey + `"country"`)},
		{"patch: fields twice", "PATCH", app,
			`{"fields":{"industry":"retail"},"fields":{"industry":"healthcare"}}`, errBody(msgDupKey + `"fields"`)},
		{"patch: an address part twice", "PATCH", app,
			`{"fields":{"trading_address":{"line1":"1 A St","line1":"2 B St","city":"London","postcode":"E1 1AA","country":"GB"}}}`,
			errBody(msgDupKey + `"fields.trading_address.line1"`)},
		{"decision: type twice", "POST", app + "/decision",
			`{"type":"application.approved","type":"application.rejected"}`, errBody(msgDupKey + `"type"`)},
		{"decision: a key twice in data", "POST", app + "/decision",
			`{"type":"application.approved","data":{"score":1,"score":99}}`, errBody(msgDupKey + `"data.score"`)},
		{"decision: a member named in capitals is not the type", "POST", app + "/decision",
			`{"TYPE":"application.approved"}`, errBody("Invalid decision type: must be one of application.approved, application.rejected, application.referred")},
		{"rfi: a key twice", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"role":"Director"`, `"role":"Director","role":"CEO"`, 1), errBody(msgDupKey + `"primary_contact.role"`)},
		{"a duplicate key is clipped", "PATCH", app,
			`{"fields":{"` + long + `":1,"` + long + `":2}}`, errBody(msgDupKey + `"fields.` + strings.Repeat("x", 93) + `…"`)},

		// Member names match exactly: a differently cased member is an
		// unknown member, which create ignores.
		{"create: COUNTRY is not country", "POST", "/api/external/applications",
			createWith(`"country"`, `"COUNTRY"`), errBody("country is required for this application configuration")},
		{"create: Primary_Contact is not primary_contact", "POST", "/api/external/applications",
			createWith(`"primary_contact"`, `"Primary_Contact"`), errBody("primary_contact.email is required")},
		{"create: Email is not email", "POST", "/api/external/applications",
			createWith(`"email"`, `"Email"`), errBody("primary_contact.email is required")},
		{"create: a wrong type is still named", "POST", "/api/external/applications",
			createWith(`"company_name":"Northwind Trading Ltd"`, `"company_name":7`), errBody("Invalid request body: company_name must be a string")},
		{"patch: Fields is not fields", "PATCH", app, `{"Fields":{"industry":"retail"}}`, map[string]any{
			"error": `Invalid request body. Only "fields" can be updated via this endpoint.`,
			"details": map[string]any{
				"Fields": `only "fields" can be updated; people, ownership and documents are managed by the applicant`,
				"fields": "is required: an object of field ids to values",
			}}},
		{"patch: Industry is not industry", "PATCH", app, `{"fields":{"Industry":"retail"}}`, errBody("Unknown or non-writable field ids: Industry")},

		// Control characters, in request members and in field values.
		{"create: NUL in company_name", "POST", "/api/external/applications",
			createWith(registeredGB, `"company_name":"Northwind\u0000Trading Ltd"`), errBody("company_name " + msgControl)},
		{"create: a line break in the contact's name", "POST", "/api/external/applications",
			createWith(`"Jane Smith"`, `"Jane\nSmith"`), errBody("primary_contact.name " + msgControl)},
		{"create: a tab in the company number", "POST", "/api/external/applications",
			createWith(`"10000001"`, `"1000\t0001"`), errBody("company_number " + msgControl)},
		{"create: an escape in the e-mail address", "POST", "/api/external/applications",
			createWith(`"jane@northwind.example"`, `"jane\u001b@northwind.example"`), errBody(msgEmail)},
		{"rfi: NUL in the contact's role", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"Director"`, `"Dir\u0000ector"`, 1), errBody("primary_contact.role " + msgControl)},
		{"rfi: DEL in the company name", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"Northwind Trading Ltd"`, `"Northwind\u007f"`, 1), errBody("company_name " + msgControl)},
		{"patch: a line break in a one-line field", "PATCH", app,
			`{"fields":{"company_name":"Northwind\nTrading Ltd"}}`, fieldErr("company_name", msgControl)},
		{"patch: a C1 control in a one-line field", "PATCH", app,
			`{"fields":{"tax_id":"GB\u0085123"}}`, fieldErr("tax_id", msgControl)},
		{"patch: NUL in long text", "PATCH", app,
			`{"fields":{"business_description":"Shoes\u0000 and socks"}}`, fieldErr("business_description", "must not contain control characters other than line breaks and tabs")},
		{"patch: NUL in an address part", "PATCH", app,
			`{"fields":{"trading_address":{"line1":"1 A\u0000St","city":"London","postcode":"E1 1AA","country":"GB"}}}`,
			fieldErr("trading_address", "line1 "+msgControl)},

		// Length limits: the catalog's, or the default of the field's kind.
		{"create: company_name over 200", "POST", "/api/external/applications",
			createWith(registeredGB, `"company_name":"`+strings.Repeat("N", 201)+`"`), errBody("company_name must be at most 200 characters long (it has 201)")},
		{"create: the contact's name over 200", "POST", "/api/external/applications",
			createWith(`"Jane Smith"`, `"`+strings.Repeat("é", 201)+`"`), errBody("primary_contact.name must be at most 200 characters long (it has 201)")},
		{"rfi: the contact's role over 200", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"Director"`, `"`+strings.Repeat("d", 201)+`"`, 1), errBody("primary_contact.role must be at most 200 characters long (it has 201)")},
		{"rfi: company_number over 200", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"10000001"`, `"`+strings.Repeat("1", 201)+`"`, 1), errBody("company_number must be at most 200 characters long (it has 201)")},
		{"patch: a name field over its default 200", "PATCH", app,
			`{"fields":{"company_name":"` + strings.Repeat("N", 201) + `"}}`, fieldErr("company_name", "must be at most 200 characters long (it has 201)")},
		{"patch: a text field over its default 500", "PATCH", app,
			`{"fields":{"tax_id":"` + strings.Repeat("1", 501) + `"}}`, fieldErr("tax_id", "must be at most 500 characters long (it has 501)")},
		{"patch: long text over its max_length", "PATCH", app,
			`{"fields":{"business_description":"` + strings.Repeat("a", 2001) + `"}}`, fieldErr("business_description", "must be at most 2000 characters long (it has 2001)")},
		{"patch: an address part over 200", "PATCH", app,
			`{"fields":{"trading_address":{"line1":"` + strings.Repeat("1", 201) + `","city":"London","postcode":"E1 1AA","country":"GB"}}}`,
			fieldErr("trading_address", "line1 must be at most 200 characters long (it has 201)")},

		// E-mail domains DNS could not hold.
		{"email: a label starting with a hyphen", "POST", "/api/external/applications", createWith("northwind.example", "-x.example"), errBody(msgEmail)},
		{"email: a label ending with a hyphen", "POST", "/api/external/applications", createWith("northwind.example", "x-.example"), errBody(msgEmail)},
		{"email: an empty label", "POST", "/api/external/applications", createWith("northwind.example", "x..example"), errBody(msgEmail)},
		{"email: a single label", "POST", "/api/external/applications", createWith("northwind.example", "localhost"), errBody(msgEmail)},
		{"email: a label over 63", "POST", "/api/external/applications", createWith("northwind.example", longLabel+".example"), errBody(msgEmail)},
		{"email: a domain over 253", "POST", "/api/external/applications",
			createWith("northwind.example", strings.Repeat("abcdefghi.", 25)+"example"), errBody(msgEmail)},
		{"rfi: a label ending with a hyphen", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, "northwind.example", "northwind-.example", 1), errBody(msgEmail)},

		// E-mail addresses with characters that are not seen as written.
		{"email: a right-to-left override in the local part", "POST", "/api/external/applications",
			createWith("jane@", "ja\u202ene@"), errBody(msgEmail)},
		{"email: a zero-width space in the local part", "POST", "/api/external/applications",
			createWith("jane@", "ja\u200bne@"), errBody(msgEmail)},
		{"email: a no-break space in the local part", "POST", "/api/external/applications",
			createWith("jane@", "jane\u00a0@"), errBody(msgEmail)},
		{"rfi: a right-to-left override in the local part", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, "jane@", "jane\u202e@", 1), errBody(msgEmail)},

		{"email: an address literal", "POST", "/api/external/applications", createWith("jane@northwind.example", "jane@[127.0.0.1]"), errBody(msgEmail)},
		{"email: a local part over 64", "POST", "/api/external/applications", createWith("jane@", strings.Repeat("j", 65)+"@"), errBody(msgEmail)},

		// Text that is not UTF-8, and nesting no request needs.
		{"create: bytes that are not UTF-8", "POST", "/api/external/applications",
			createWith(`"Jane Smith"`, "\"Jane \xff\xfeSmith\""), errBody(web.ErrJSONNotUTF8.Message)},
		{"create: an unpaired surrogate", "POST", "/api/external/applications",
			createWith(`"Jane Smith"`, `"Jane \ud800Smith"`), errBody(web.ErrJSONNotUTF8.Message)},
		{"patch: bytes that are not UTF-8", "PATCH", app,
			"{\"fields\":{\"company_number\":\"\xff\xfe1\"}}", errBody(web.ErrJSONNotUTF8.Message)},
		{"rfi: bytes that are not UTF-8", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"Director"`, "\"Dir\xc3\"", 1), errBody(web.ErrJSONNotUTF8.Message)},
		{"decision: data nested 3,000 deep", "POST", app + "/decision",
			`{"type":"application.approved","data":{"deep":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}}`,
			errBody("Invalid JSON body: nested more than 64 levels deep")},
		{"patch: a value nested 65 deep", "PATCH", app,
			`{"fields":{"industry":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}}`,
			errBody("Invalid JSON body: nested more than 64 levels deep")},

		// A number too large for a float64 is a value too large, not bad JSON.
		{"patch: an amount of 5,000 digits", "PATCH", app,
			`{"fields":{"annual_turnover":{"amount":` + strings.Repeat("9", 5000) + `,"currency":"GBP"}}}`,
			fieldErr("annual_turnover", "amount must be at most 1000000000000000")},

		// A company number follows create's rules for the application's
		// registry.
		{"patch: a company number the registry cannot have", "PATCH", app,
			`{"fields":{"company_number":"ABC!!"}}`, fieldErr("company_number", "Invalid company number 'ABC!!' for UK company registry")},
		{"patch: a company number too long for the registry", "PATCH", app,
			`{"fields":{"company_number":"123456789"}}`, fieldErr("company_number", "Invalid company number '123456789' for UK company registry")},
		{"patch: a company number with a right-to-left override", "PATCH", app,
			`{"fields":{"company_number":"1000\u202e0001"}}`, fieldErr("company_number", "Invalid company number '1000\u202e0001' for UK company registry")},

		// Country codes must be assigned ones.
		{"patch: an address in country ZZ", "PATCH", app,
			`{"fields":{"trading_address":{"line1":"a","city":"X","postcode":"AB1","country":"ZZ"}}}`,
			fieldErr("trading_address", `country must be a two-letter ISO 3166-1 alpha-2 code, for example GB; got "ZZ"`)},
		{"rfi: country ZZ", "POST", "/api/external/rfi-requests",
			strings.Replace(strings.Replace(rfiBody, `"GB"`, `"ZZ"`, 1), `"company_number":"10000001",`, ``, 1), errBody("Invalid country 'ZZ'")},

		// Long inputs are quoted clipped.
		{"create: a long country", "POST", "/api/external/applications",
			createWith(`"GB"`, `"`+long+`"`), errBody("Country '" + strings.Repeat("x", 100) + "…' is not supported by this application configuration")},
		{"rfi: a long country", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"GB"`, `"`+long+`"`, 1), errBody("Invalid country '" + strings.Repeat("x", 100) + "…'")},
		{"list: a long status", "GET", "/api/external/applications?status=" + strings.Repeat("s", 5000), "",
			errBody("Invalid status '" + strings.Repeat("s", 100) + "…'")},
		{"patch: long unknown ids", "PATCH", app, `{"fields":{"` + long + `":1}}`,
			errBody("Unknown or non-writable field ids: " + strings.Repeat("x", 100) + "…")},

		// null only where the contract allows it.
		{"create: pre_auth null", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":"GB","pre_auth":null`), errBody(msgNull("pre_auth"))},
		{"create: config_id null", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":"GB","config_id":null`), errBody(msgNull("config_id"))},
		{"create: country null", "POST", "/api/external/applications",
			createWith(`"country":"GB"`, `"country":null`), errBody(msgNull("country"))},
		{"create: company_number null", "POST", "/api/external/applications",
			createWith(`"company_number":"10000001"`, `"company_number":null`), errBody(msgNull("company_number"))},
		{"create: company_name null", "POST", "/api/external/applications",
			createWith(registeredGB, `"company_name":null`), errBody(msgNull("company_name"))},
		{"create: primary_contact null", "POST", "/api/external/applications",
			`{"primary_contact":null,"country":"GB","company_number":"10000001","company_name":"Northwind Trading Ltd"}`, errBody(msgNull("primary_contact"))},
		{"create: the contact's name null", "POST", "/api/external/applications",
			createWith(`"Jane Smith"`, `null`), errBody(msgNull("primary_contact.name"))},
		{"create: the contact's email null", "POST", "/api/external/applications",
			createWith(`"jane@northwind.example"`, `null`), errBody(msgNull("primary_contact.email"))},
		{"rfi: agent_id null", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"country":"GB"`, `"country":"GB","agent_id":null`, 1), errBody(msgNull("agent_id"))},
		{"rfi: pre_authenticated null", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"country":"GB"`, `"country":"GB","pre_authenticated":null`, 1), errBody(msgNull("pre_authenticated"))},
		{"rfi: the contact's role null", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"Director"`, `null`, 1), errBody(msgNull("primary_contact.role"))},
		{"rfi: company_number null", "POST", "/api/external/rfi-requests",
			strings.Replace(rfiBody, `"10000001"`, `null`, 1), errBody(msgNull("company_number"))},
		{"decision: type null", "POST", app + "/decision", `{"type":null}`, errBody(msgNull("type"))},
		{"patch: an address part null", "PATCH", app,
			`{"fields":{"trading_address":{"line1":"1 Rue","city":"Paris","country":"FR","region":null}}}`, fieldErr("trading_address", "region must be a string")},

		// Query strings that cannot be read are refused, not read in part.
		{"list: a broken escape after the status", "GET", "/api/external/applications?status=submitted%zz", "", errBody(msgQueryEscape + `"%zz"`)},
		{"list: a broken escape in another parameter", "GET", "/api/external/applications?status=submitted&x=%zz", "", errBody(msgQueryEscape + `"%zz"`)},
		{"list: a % at the end", "GET", "/api/external/applications?cursor=abc%", "", errBody(msgQueryEscape + `"%"`)},
		{"list: a semicolon", "GET", "/api/external/applications?status=sent;limit=1", "", errBody(`Invalid query string: ";" is not a separator (use "&")`)},
		{"list: an escape that is not UTF-8", "GET", "/api/external/applications?status=%ff", "", errBody("Invalid query string: text must be UTF-8")},
		{"list: too many parameters", "GET", "/api/external/applications?" + strings.Repeat("a=1&", 101), "", errBody("Invalid query string: more than 100 parameters")},
		{"events: a broken escape as the type", "GET", "/api/external/events?type=%zz", "", errBody(msgQueryEscape + `"%zz"`)},
		{"rfi list: a broken escape", "GET", "/api/external/rfi-requests?status=active%2", "", errBody(msgQueryEscape + `"%2"`)},
		{"activity: a broken escape", "GET", app + "/activity?limit=%zz", "", errBody(msgQueryEscape + `"%zz"`)},

		// A single-valued parameter given twice.
		{"list: status twice", "GET", "/api/external/applications?status=sent&status=approved", "", errBody(msgQueryDup + `"status"`)},
		{"list: status twice, once empty", "GET", "/api/external/applications?status=&status=sent", "", errBody(msgQueryDup + `"status"`)},
		{"list: limit twice", "GET", "/api/external/applications?limit=1&limit=2", "", errBody(msgQueryDup + `"limit"`)},
		{"list: cursor twice", "GET", "/api/external/applications?cursor=a&cursor=b", "", errBody(msgQueryDup + `"cursor"`)},
		{"events: type twice", "GET", "/api/external/events?type=application.created&type=application.sent", "", errBody(msgQueryDup + `"type"`)},
		{"rfi list: status twice", "GET", "/api/external/rfi-requests?status=active&status=expired", "", errBody(msgQueryDup + `"status"`)},
		{"activity: limit twice", "GET", app + "/activity?limit=5&limit=5", "", errBody(msgQueryDup + `"limit"`)},

		// An empty limit is not the default page size, nor an empty filter
		// no filter.
		{"list: an empty status", "GET", "/api/external/applications?status=", "", errBody("Invalid status ''")},
		{"events: an empty type", "GET", "/api/external/events?type=&limit=1", "", errBody("Invalid event type ''")},
		{"rfi list: an empty status", "GET", "/api/external/rfi-requests?status", "", errBody("Invalid status ''")},
		{"list: an empty limit", "GET", "/api/external/applications?limit=", "", errBody("limit must be between 1 and 100")},
		{"list: an empty limit, no =", "GET", "/api/external/applications?limit", "", errBody("limit must be between 1 and 100")},
		{"events: an empty limit", "GET", "/api/external/events?limit=", "", errBody("limit must be between 1 and 100")},
		{"rfi list: an empty limit", "GET", "/api/external/rfi-requests?status=active&limit=", "", errBody("limit must be between 1 and 100")},
		{"activity: an empty limit", "GET", app + "/activity?limit=", "", errBody("limit must be between 1 and 100")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.method, tt.path, "acme", tt.body), http.StatusBadRequest, tt.want)
		})
	}

	// Nothing was stored or sent.
	if after := e.do("GET", app, "acme", "").Body.String(); after != before {
		t.Errorf("the application changed:\nbefore %s\nafter  %s", before, after)
	}
	if list := decode(t, e.do("GET", "/api/external/applications", "acme", ""))["applications"].([]any); len(list) != 1 {
		t.Errorf("applications = %d, want only the first", len(list))
	}
	if got := decode(t, e.do("GET", "/api/external/rfi-requests", "acme", ""))["rfi_requests"].([]any); len(got) != 0 {
		t.Errorf("RFI requests = %d, want none", len(got))
	}
	if got := len(e.mail.messages()); got != mails {
		t.Errorf("emails sent = %d, want %d (the first invite only)", got, mails)
	}
}

// TestGoodInputStillPasses keeps what the checks must not refuse: line
// breaks and tabs in long text, non-ASCII names, values at their limits,
// internationalised and hyphenated e-mail domains.
func TestGoodInputStillPasses(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, body := range []string{
		createWith(`"Jane Smith"`, `"`+strings.Repeat("é", 200)+`"`),
		createWith("northwind.example", "mail.north-wind.example"),
		createWith("northwind.example", "münchen.example"),
		createWith("jane@", "jané@"),
		createWith(`"Jane Smith"`, `"Jane \ud83d\ude00 Smith"`),
		createWith("northwind.example", longLabel[:63]+".example"),
		createWith(`"country":"GB"`, `"country":"GB","COUNTRY":"XX","Company_Name":7`),
	} {
		if w := e.do("POST", "/api/external/applications", "acme", body); w.Code != http.StatusCreated {
			t.Errorf("create %.80s… = %d %s, want 201", body, w.Code, w.Body)
		}
	}
	id := e.create(t, "acme", "")
	for _, body := range []string{
		`{"fields":{"business_description":"Shoes\r\n\tand socks\n"}}`,
		`{"fields":{"company_name":"` + strings.Repeat("Ł", 200) + `"}}`,
		`{"fields":{"tax_id":"` + strings.Repeat("1", 500) + `"}}`,
		`{"fields":{"registered_address":` + registeredAddr + `}}`,
		`{"fields":{"company_number":" sc 311560 "}}`,
	} {
		if w := e.do("PATCH", "/api/external/applications/"+id, "acme", body); w.Code != http.StatusOK {
			t.Errorf("PATCH %.80s… = %d %s, want 200", body, w.Code, w.Body)
		}
	}
	// Queries read whole still list: no limit, an empty filter or cursor,
	// limits at their bounds, escapes that decode to UTF-8.
	for _, path := range []string{
		"/api/external/applications", "/api/external/applications?cursor=", "/api/external/applications?limit=100",
		"/api/external/applications?status=submitted&limit=1", "/api/external/events?type=application.created&limit=1",
		"/api/external/rfi-requests?status=%61ctive", "/api/external/applications/" + id + "/activity?limit=1&cursor=",
		"/api/external/applications?utm=caf%C3%A9&utm=x",
	} {
		if w := e.do("GET", path, "acme", ""); w.Code != http.StatusOK {
			t.Errorf("GET %s = %d %s, want 200", path, w.Code, w.Body)
		}
	}
	// null where the contract allows it: a field value (it clears the
	// field), a decision's timestamp, application_id and data.
	if w := e.do("PATCH", "/api/external/applications/"+id, "acme", `{"fields":{"tax_id":null}}`); w.Code != http.StatusOK {
		t.Errorf("PATCH tax_id null = %d %s, want 200", w.Code, w.Body)
	}
	decided := e.create(t, "acme", "")
	e.setStatus(t, decided, onboarding.StatusSubmitted)
	if w := e.do("POST", "/api/external/applications/"+decided+"/decision", "acme",
		`{"type":"application.approved","timestamp":null,"application_id":null,"data":null}`); w.Code != http.StatusOK {
		t.Errorf("decision with null members = %d %s, want 200", w.Code, w.Body)
	}
	fields := decode(t, e.do("GET", "/api/external/applications/"+id, "acme", ""))["data"].(map[string]any)["fields"].(map[string]any)
	if got := fields["company_number"]; got != "SC311560" {
		t.Errorf("company_number = %q, want the registry's form SC311560", got)
	}
	if got := fields["business_description"]; got != "Shoes\r\n\tand socks" {
		t.Errorf("business_description = %q, want its line breaks and tab kept", got)
	}
}

// TestTruncatedBodyIs400 sends, over a real connection, a body shorter
// than its Content-Length: the server answers 400 at once rather than 500
// (and nothing is stored).
func TestTruncatedBodyIs400(t *testing.T) {
	e := newEnv(t, envOptions{})
	sessions, err := form.NewSignedSessions(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	// The bare handler: the contract check of e.h reads bodies itself.
	pages := form.New(form.Options{Service: e.svc, Sessions: sessions, Now: e.clock.Now, PublicURL: "https://onboard.test"})
	srv := New(Options{Service: e.svc, Responses: e.store, Pages: pages, Now: e.clock.Now, Sandbox: true})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	body := createWith()
	for _, tt := range []struct{ name, method, path string }{
		{"create", "POST", "/api/external/applications"},
		{"rfi", "POST", "/api/external/rfi-requests"},
		{"patch", "PATCH", "/api/external/applications/" + e.create(t, "acme", "")},
		{"idempotent create", "POST", "/api/external/applications"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := tt.method + " " + tt.path + " HTTP/1.1\r\nHost: onboard.test\r\nContent-Type: application/json\r\n" +
				"Authorization: Bearer " + e.keys["acme"] + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
			if tt.name == "idempotent create" {
				head += "Idempotency-Key: truncated-1\r\n"
			}
			if _, err := io.WriteString(conn, head+"\r\n"+body[:len(body)/2]); err != nil {
				t.Fatal(err)
			}
			if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", resp.StatusCode)
			}
			if diff := cmp.Diff(`{"error":"The request body could not be read in full"}`, strings.TrimSpace(string(got))); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
	if list := decode(t, e.do("GET", "/api/external/applications", "acme", ""))["applications"].([]any); len(list) != 1 {
		t.Errorf("applications = %d, want only the one created whole", len(list))
	}
}

// TestLongQueryValuesAreClipped: a list's status or type filter is quoted
// back clipped, not whole.
func TestLongQueryValuesAreClipped(t *testing.T) {
	e := newEnv(t, envOptions{})
	long := strings.Repeat("z", 5000)
	clipped := strings.Repeat("z", 100) + "…"
	for path, want := range map[string]string{
		"/api/external/rfi-requests?status=" + long: "Invalid status '" + clipped + "'",
		"/api/external/events?type=" + long:         "Invalid event type '" + clipped + "'",
	} {
		w := e.do("GET", path, "acme", "")
		if w.Code != http.StatusBadRequest || decode(t, w)["error"] != want {
			t.Errorf("GET %s…: %d %.200s, want 400 %q", path[:40], w.Code, w.Body, want)
		}
	}
}
