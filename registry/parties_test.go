package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"onboard/onboarding"
)

// sandbox is the project's recordings, the sandbox's data (docs/sandbox.md).
func sandbox() fs.FS { return os.DirFS("../testdata/registry") }

// sentRequest is what loggingTransport saw of one request.
type sentRequest struct {
	Host, Path, Query, Accept string
	// Auth holds the Authorization header values; nil when none was sent.
	Auth []string
}

// loggingTransport records every request and hands it on to next.
type loggingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []sentRequest
}

func (l *loggingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, sentRequest{
		Host: r.URL.Host, Path: r.URL.Path, Query: r.URL.RawQuery,
		Accept: r.Header.Get("Accept"), Auth: r.Header.Values("Authorization"),
	})
	l.mu.Unlock()
	return l.next.RoundTrip(r)
}

func (l *loggingTransport) sent() []sentRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sentRequest(nil), l.reqs...)
}

// newLoggedRegistry returns a fixtures-mode Registry over fsys whose
// requests are logged; opts may set anything but Mode and Transport.
func newLoggedRegistry(t testing.TB, fsys fs.FS, opts Options) (*Registry, *loggingTransport) {
	t.Helper()
	ft, err := NewFixtureTransport(fsys)
	if err != nil {
		t.Fatalf("NewFixtureTransport: %v", err)
	}
	lt := &loggingTransport{next: ft}
	opts.Mode, opts.Transport = ModeFixtures, lt
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, lt
}

// outcome is what a registry call returned, in a form cmp.Diff can compare:
// the value, the *onboarding.Error of the error chain, or the text of an
// error that carries none.
type outcome[T any] struct {
	Value T
	Err   *onboarding.Error
	Other string
}

func outcomeOf[T any](v T, err error) outcome[T] {
	if err == nil {
		return outcome[T]{Value: v}
	}
	var zero T
	if e := onboarding.AsError(err); e != nil {
		return outcome[T]{Value: zero, Err: e}
	}
	return outcome[T]{Value: zero, Other: err.Error()}
}

func band(lo, hi float64) *onboarding.ShareBand { return &onboarding.ShareBand{Lower: lo, Upper: hi} }

func dob(year, month int) *chDateOfBirth {
	return &chDateOfBirth{Year: flexInt(year), Month: flexInt(month)}
}

const (
	ukRegistry = "UK company registry"
	ieRegistry = "Irish company registry"
)

// The people and entities of the sandbox companies, as the recordings
// under testdata/registry/companies-house give them.
var (
	partyHargreaves = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonUBO, onboarding.PersonShareholder},
		FullName: "Eleanor Mary Hargreaves", FirstName: "Eleanor Mary", LastName: "Hargreaves",
		DateOfBirth: "1979-03", Nationality: "GB", Shares: band(75, 100),
	}
	partyOkafor = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "Daniel Chukwuemeka Okafor", FirstName: "Daniel Chukwuemeka", LastName: "Okafor",
		DateOfBirth: "1985-11", Nationality: "GB",
	}
	partyAshworth = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "Margaret Clare Ashworth", FirstName: "Margaret Clare", LastName: "Ashworth",
		DateOfBirth: "1971-06", Nationality: "GB",
	}
	partyPatel = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonUBO, onboarding.PersonShareholder},
		FullName: "Rajesh Kumar Patel", FirstName: "Rajesh Kumar", LastName: "Patel",
		DateOfBirth: "1975-09", Nationality: "GB", Shares: band(25, 50),
	}
	// The officer is "MACLEOD, Iain"; the merged person keeps the PSC's
	// name_elements casing.
	partyMacLeod = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonDirector, onboarding.PersonUBO, onboarding.PersonShareholder},
		FullName: "Iain MacLeod", FirstName: "Iain", LastName: "MacLeod",
		DateOfBirth: "1968-05", Nationality: "GB", Shares: band(75, 100),
	}
	partyONeill = onboarding.RegistryPerson{
		Roles:    []onboarding.PersonRole{onboarding.PersonDirector},
		FullName: "Patrick Joseph O'Neill", FirstName: "Patrick Joseph", LastName: "O'Neill",
		DateOfBirth: "1966-12", Nationality: "IE",
	}
	entityBluebellGroup = onboarding.RegistryEntity{
		Name: "BLUEBELL GROUP LIMITED", Type: onboarding.EntityParent, Country: "GB", Number: "10000008",
		Shares: band(50, 75),
	}
)

func TestPartiesFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		country, number string
		want            outcome[onboarding.Parties]
		requests        int // requests the call must make
	}{
		{"GB", "10000001", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People: []onboarding.RegistryPerson{partyHargreaves, partyOkafor}}}, 2},
		{"GB", " 1000 0001 ", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People: []onboarding.RegistryPerson{partyHargreaves, partyOkafor}}}, 2},
		{"GB", "10000002", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People:   []onboarding.RegistryPerson{partyAshworth, partyPatel},
			Entities: []onboarding.RegistryEntity{entityBluebellGroup}}}, 2},
		{"GB", "SC100007", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People: []onboarding.RegistryPerson{partyMacLeod}}}, 2},
		{"GB", "sc100007", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People: []onboarding.RegistryPerson{partyMacLeod}}}, 2},
		{"GB", "10000008", outcome[onboarding.Parties]{Value: onboarding.Parties{
			People: []onboarding.RegistryPerson{partyAshworth, partyONeill}}}, 2},
		// The CRO publishes no officers or owners: nothing is asked.
		{"IE", "100001", outcome[onboarding.Parties]{}, 0},
		{"IE", "100003", outcome[onboarding.Parties]{}, 0},
		// 10000003 is rejected before its parties are fetched, so none
		// are recorded: an unrecorded request is a failed registry call.
		{"GB", "10000003", outcome[onboarding.Parties]{Err: onboarding.ErrRegistryFailed}, 1},
		{"GB", "ABC-123", outcome[onboarding.Parties]{Err: onboarding.ErrCompanyNumberMalformed("ABC-123", ukRegistry)}, 0},
		{"FR", "552100554", outcome[onboarding.Parties]{Other: `registry: no company registry for country "FR"`}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.country+"_"+strings.TrimSpace(tt.number), func(t *testing.T) {
			t.Parallel()
			r, log := newLoggedRegistry(t, sandbox(), Options{})
			got := outcomeOf(r.Parties(context.Background(), tt.country, tt.number))
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Parties(%q, %q) mismatch (-got +want):\n%s", tt.country, tt.number, diff)
			}
			if n := len(log.sent()); n != tt.requests {
				t.Errorf("Parties(%q, %q) sent %d requests, want %d: %+v", tt.country, tt.number, n, tt.requests, log.sent())
			}
		})
	}
}

// TestPartiesRequests checks what Parties asks Companies House for.
func TestPartiesRequests(t *testing.T) {
	t.Parallel()
	r, log := newLoggedRegistry(t, sandbox(), Options{CompaniesHouseAPIKey: "my_api_key"})
	if _, err := r.Parties(context.Background(), "GB", "sc100007"); err != nil {
		t.Fatal(err)
	}
	want := []sentRequest{
		{Host: chHost, Path: "/company/SC100007/officers", Query: "items_per_page=100&start_index=0",
			Accept: "application/json", Auth: []string{"Basic bXlfYXBpX2tleTo="}},
		{Host: chHost, Path: "/company/SC100007/persons-with-significant-control", Query: "items_per_page=100&start_index=0",
			Accept: "application/json", Auth: []string{"Basic bXlfYXBpX2tleTo="}},
	}
	if diff := cmp.Diff(log.sent(), want); diff != "" {
		t.Errorf("requests mismatch (-got +want):\n%s", diff)
	}
}

func TestSplitOfficerName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, first, last string }{
		{"SMITH, Jane Alexandra", "Jane Alexandra", "Smith"},
		{"DYSON, James, Sir", "James", "Dyson"},
		{"O'NEILL, Patrick Joseph", "Patrick Joseph", "O'Neill"},
		{"MCDONALD, Ronald", "Ronald", "McDonald"},
		{"SMITH-JONES, Ann", "Ann", "Smith-Jones"},
		{"Plain Name", "Plain", "Name"},
		{"", "", ""},
		{"   ", "", ""},
		{"  SMITH ,  Jane   Alexandra  ", "Jane Alexandra", "Smith"},
		{"DE LA CRUZ, Maria", "Maria", "De La Cruz"},
		{"MACLEOD, Iain", "Iain", "Macleod"},
		{"MacLeod, Iain", "Iain", "MacLeod"}, // not all upper case: the registry's own casing
		{"MADONNA", "", "Madonna"},
		{"SMITH,", "", "Smith"},
		{", Jane", "Jane", ""},
	}
	for _, tt := range tests {
		first, last := splitOfficerName(tt.in)
		if first != tt.first || last != tt.last {
			t.Errorf("splitOfficerName(%q) = %q, %q; want %q, %q", tt.in, first, last, tt.first, tt.last)
		}
	}
}

func TestTitleCase(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"":                  "",
		"SMITH":             "Smith",
		"O'NEILL":           "O'Neill",
		"O’BRIEN":           "O’Brien",
		"SMITH-JONES":       "Smith-Jones",
		"MCDONALD":          "McDonald",
		"SMITH-MCDONALD":    "Smith-McDonald",
		"DE LA CRUZ":        "De La Cruz",
		"MACLEOD":           "Macleod",
		"EMCEE":             "Emcee",
		"MC":                "Mc",
		"ÉLODIE":            "Élodie",
		"ÓG Ó SÚILLEABHÁIN": "Óg Ó Súilleabháin",
		"MacLeod":           "MacLeod",
		"van der Berg":      "van der Berg",
		"Smith":             "Smith",
		"123":               "123",
	}
	for in, want := range tests {
		if got := titleCase(in); got != want {
			t.Errorf("titleCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPSCName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		psc         chPSC
		first, last string
	}{
		{"name elements", chPSC{Name: "Mrs Eleanor Mary Hargreaves",
			NameElements: &chNameElements{Title: "Mrs", Forename: "Eleanor", MiddleName: "Mary", Surname: "Hargreaves"}},
			"Eleanor Mary", "Hargreaves"},
		{"name elements keep their casing", chPSC{Name: "Mr Iain MACLEOD",
			NameElements: &chNameElements{Title: "Mr", Forename: "Iain", Surname: "MacLeod"}}, "Iain", "MacLeod"},
		{"name elements with spaces", chPSC{NameElements: &chNameElements{Forename: " Jane ", MiddleName: "  ", Surname: "  Mac   Leod "}},
			"Jane", "Mac Leod"},
		{"name elements without surname", chPSC{Name: "Dr Jane Smith", NameElements: &chNameElements{Title: "Dr", Forename: "Jane"}},
			"Jane", "Smith"},
		{"Mr", chPSC{Name: "Mr Rajesh Kumar Patel"}, "Rajesh Kumar", "Patel"},
		{"Dr.", chPSC{Name: "Dr. Jane Alexandra Smith"}, "Jane Alexandra", "Smith"},
		{"two titles", chPSC{Name: "Prof Sir James Dyson"}, "James", "Dyson"},
		{"lower-case title", chPSC{Name: "mrs Ann Jones"}, "Ann", "Jones"},
		{"a forename that starts like a title", chPSC{Name: "Drew Barrymore"}, "Drew", "Barrymore"},
		{"no title", chPSC{Name: "  Jane   Smith "}, "Jane", "Smith"},
		{"surname only", chPSC{Name: "Ms Smith"}, "", "Smith"},
		{"empty", chPSC{}, "", ""},
	}
	for _, tt := range tests {
		first, last := pscName(tt.psc)
		if first != tt.first || last != tt.last {
			t.Errorf("%s: pscName(%+v) = %q, %q; want %q, %q", tt.name, tt.psc, first, last, tt.first, tt.last)
		}
	}
}

func TestSharesBand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		natures []string
		want    *onboarding.ShareBand
	}{
		{"none", nil, nil},
		{"25-50", []string{"ownership-of-shares-25-to-50-percent"}, band(25, 50)},
		{"50-75", []string{"ownership-of-shares-50-to-75-percent"}, band(50, 75)},
		{"75-100", []string{"ownership-of-shares-75-to-100-percent"}, band(75, 100)},
		{"as trust", []string{"ownership-of-shares-50-to-75-percent-as-trust"}, band(50, 75)},
		{"as firm", []string{"ownership-of-shares-25-to-50-percent-as-firm"}, band(25, 50)},
		{"voting only", []string{"voting-rights-75-to-100-percent", "voting-rights-75-to-100-percent-as-trust"}, nil},
		{"directors only", []string{"right-to-appoint-and-remove-directors", "significant-influence-or-control"}, nil},
		{"LLP surplus assets", []string{"right-to-share-surplus-assets-25-to-50-percent-limited-liability-partnership",
			"voting-rights-50-to-75-percent-limited-liability-partnership"}, nil},
		{"overseas entity", []string{"ownership-of-shares-more-than-25-percent-registered-overseas-entity"}, band(25, 100)},
		{"overseas entity as trust", []string{"ownership-of-shares-more-than-25-percent-as-trust-registered-overseas-entity"}, band(25, 100)},
		{"several: the highest", []string{"ownership-of-shares-25-to-50-percent", "voting-rights-50-to-75-percent",
			"ownership-of-shares-75-to-100-percent-as-trust", "right-to-appoint-and-remove-directors"}, band(75, 100)},
		{"several, highest first", []string{"ownership-of-shares-75-to-100-percent", "ownership-of-shares-50-to-75-percent-as-firm"}, band(75, 100)},
		{"inverted band", []string{"ownership-of-shares-50-to-25-percent"}, nil},
		{"band past 100", []string{"ownership-of-shares-75-to-150-percent"}, nil},
		{"other suffix", []string{"ownership-of-shares-25-to-50-percent-as-partner"}, nil},
		{"upper case", []string{"OWNERSHIP-OF-SHARES-25-TO-50-PERCENT"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(sharesBand(tt.natures), tt.want); diff != "" {
			t.Errorf("%s: sharesBand(%q) mismatch (-got +want):\n%s", tt.name, tt.natures, diff)
		}
	}
}

func TestNationalityCode(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"British":          "GB",
		"British,Irish":    "GB",
		"British,Indian":   "GB",
		"Irish,British":    "IE",
		" irish ":          "IE",
		"IRISH":            "IE",
		"Northern  Irish":  "GB",
		"Welsh":            "GB",
		"New Zealander":    "NZ",
		"british , irish ": "GB",
		"Martian":          "",
		"":                 "",
		",British":         "",
	}
	for in, want := range tests {
		if got := nationalityCode(in); got != want {
			t.Errorf("nationalityCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegisteredCountry(t *testing.T) {
	t.Parallel()
	tests := []struct{ country, place, want string }{
		{"England", "Register Of Companies For England And Wales", "GB"},
		{"England", "", "GB"},
		{" england  and   wales ", "", "GB"},
		{"United Kingdom", "", "GB"},
		{"", "Register Of Companies For England And Wales", "GB"},
		{"", "Companies House", "GB"},
		{"", "Registrar of Companies for Scotland", "GB"},
		{"", "Companies House, Northern Ireland", "GB"}, // Northern Ireland is the UK, not IE
		{"Northern Ireland", "", "GB"},
		{"Ireland", "", "IE"},
		{"Republic of Ireland", "", "IE"},
		{"", "Companies Registration Office", "IE"},
		{"", "Companies Registration Office, Dublin, Ireland", "IE"},
		{"Cayman Islands", "Registrar of Companies", "KY"},
		{"Jersey", "Jersey Financial Services Commission", "JE"},
		{"The Netherlands", "Kamer van Koophandel", "NL"},
		{"Narnia", "Narnia Companies Registry", ""},
		{"Delaware", "Delaware Division of Corporations", ""},
		// Not the Wales of England and Wales.
		{"", "New South Wales Office of Fair Trading", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := registeredCountry(tt.country, tt.place); got != tt.want {
			t.Errorf("registeredCountry(%q, %q) = %q, want %q", tt.country, tt.place, got, tt.want)
		}
	}
}

func TestShareBandLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		band onboarding.ShareBand
		want string
	}{
		{onboarding.ShareBand{Lower: 25, Upper: 50}, "25-50"},
		{onboarding.ShareBand{Lower: 50, Upper: 75}, "50-75"},
		{onboarding.ShareBand{Lower: 75, Upper: 100}, "75-100"},
		{onboarding.ShareBand{Lower: 25, Upper: 100}, "25-100"},
		{onboarding.ShareBand{Lower: 12.5, Upper: 25}, "12.5-25"},
		{onboarding.ShareBand{}, "0-0"},
	}
	for _, tt := range tests {
		if got := tt.band.Label(); got != tt.want {
			t.Errorf("%+v.Label() = %q, want %q", tt.band, got, tt.want)
		}
	}
	// Every band sharesBand produces labels as the ownership rows expect.
	for natures, want := range map[string]string{
		"ownership-of-shares-25-to-50-percent":                                "25-50",
		"ownership-of-shares-50-to-75-percent-as-firm":                        "50-75",
		"ownership-of-shares-75-to-100-percent-as-trust":                      "75-100",
		"ownership-of-shares-more-than-25-percent-registered-overseas-entity": "25-100",
	} {
		if got := sharesBand([]string{natures}).Label(); got != want {
			t.Errorf("sharesBand(%q).Label() = %q, want %q", natures, got, want)
		}
	}
}

func TestDateOfBirth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		json string
		want string
	}{
		{`{"month": 3, "year": 1979}`, "1979-03"},
		{`{"month": "3", "year": "1979"}`, "1979-03"},
		{`{"month": "03", "year": 1979}`, "1979-03"},
		{`{"month": 12, "year": 1966, "day": 1}`, "1966-12"},
		{`{"month": null, "year": 1979}`, ""},
		{`{"year": 1979}`, ""},
		{`{"month": 13, "year": 1979}`, ""},
		{`{"month": 0, "year": 1979}`, ""},
		{`{"month": 3, "year": 979}`, ""},
		{`{"month": 3, "year": 10000}`, ""},
		{`{}`, ""},
		{`null`, ""},
	}
	for _, tt := range tests {
		var d *chDateOfBirth
		if err := json.Unmarshal([]byte(tt.json), &d); err != nil {
			t.Errorf("decoding %s: %v", tt.json, err)
			continue
		}
		if got := d.iso(); got != tt.want {
			t.Errorf("date of birth %s: iso() = %q, want %q", tt.json, got, tt.want)
		}
	}
	for _, bad := range []string{`{"month": "March", "year": 1979}`, `{"month": 3.5, "year": 1979}`, `{"month": true}`} {
		var d chDateOfBirth
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("decoding %s = %+v, want an error", bad, d)
		}
	}
}

func TestMergeParties(t *testing.T) {
	t.Parallel()
	director := func(name string, birth *chDateOfBirth) chOfficer {
		return chOfficer{Name: name, OfficerRole: "director", DateOfBirth: birth, Nationality: "British"}
	}
	individual := func(name string, birth *chDateOfBirth, natures ...string) chPSC {
		return chPSC{Kind: "individual-person-with-significant-control", Name: name, DateOfBirth: birth,
			Nationality: "British", NaturesOfControl: natures}
	}
	person := func(first, last, birth string, roles ...onboarding.PersonRole) onboarding.RegistryPerson {
		return onboarding.RegistryPerson{Roles: roles, FullName: joinNonEmpty(" ", first, last),
			FirstName: first, LastName: last, DateOfBirth: birth, Nationality: "GB"}
	}
	withShares := func(p onboarding.RegistryPerson, b *onboarding.ShareBand) onboarding.RegistryPerson {
		p.Shares = b
		return p
	}
	ukCompany := &chIdentification{PlaceRegistered: "Companies House", CountryRegistered: "England", RegistrationNumber: "5498655"}
	const (
		dir = onboarding.PersonDirector
		ubo = onboarding.PersonUBO
		sh  = onboarding.PersonShareholder
	)

	tests := []struct {
		name     string
		officers []chOfficer
		pscs     []chPSC
		want     onboarding.Parties
	}{
		{name: "nothing"},
		{
			name:     "resigned officer skipped",
			officers: []chOfficer{director("SMITH, Jane", dob(1984, 7)), {Name: "JONES, Peter", OfficerRole: "director", ResignedOn: "2022-08-31", DateOfBirth: dob(1979, 2)}},
			want:     onboarding.Parties{People: []onboarding.RegistryPerson{person("Jane", "Smith", "1984-07", dir)}},
		},
		{
			name: "secretaries skipped",
			officers: []chOfficer{
				{Name: "BRENNAN, Siobhan", OfficerRole: "secretary"},
				{Name: "EXAMPLE SECRETARIES LIMITED", OfficerRole: "corporate-secretary", Identification: ukCompany},
				{Name: "NOMINEE, Nora", OfficerRole: "nominee-secretary"},
			},
		},
		{
			name: "director roles",
			officers: []chOfficer{
				{Name: "ONE, Ann", OfficerRole: "nominee-director", DateOfBirth: dob(1980, 1)},
				{Name: "TWO, Bob", OfficerRole: "llp-designated-member", DateOfBirth: dob(1980, 2)},
				{Name: "THREE, Cat", OfficerRole: "llp-member", DateOfBirth: dob(1980, 3)},
				{Name: "FOUR, Dan", OfficerRole: " Director ", DateOfBirth: dob(1980, 4)},
				{Name: "FIVE, Eve", OfficerRole: "judicial-factor", DateOfBirth: dob(1980, 5)},
			},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				{Roles: []onboarding.PersonRole{dir}, FullName: "Ann One", FirstName: "Ann", LastName: "One", DateOfBirth: "1980-01"},
				{Roles: []onboarding.PersonRole{dir}, FullName: "Bob Two", FirstName: "Bob", LastName: "Two", DateOfBirth: "1980-02"},
				{Roles: []onboarding.PersonRole{dir}, FullName: "Cat Three", FirstName: "Cat", LastName: "Three", DateOfBirth: "1980-03"},
				{Roles: []onboarding.PersonRole{dir}, FullName: "Dan Four", FirstName: "Dan", LastName: "Four", DateOfBirth: "1980-04"},
			}},
		},
		{
			name: "corporate director is an entity of type other",
			officers: []chOfficer{
				{Name: "ACME DIRECTORS LIMITED", OfficerRole: "corporate-director", Identification: ukCompany},
				{Name: "SOCIÉTÉ EXEMPLE SA", OfficerRole: "corporate-nominee-director",
					Identification: &chIdentification{CountryRegistered: "France", RegistrationNumber: " b 552 100 554 "}},
				{Name: "NOWHERE LLP", OfficerRole: "corporate-llp-member"},
			},
			want: onboarding.Parties{Entities: []onboarding.RegistryEntity{
				{Name: "ACME DIRECTORS LIMITED", Type: onboarding.EntityOther, Country: "GB", Number: "05498655"},
				{Name: "SOCIÉTÉ EXEMPLE SA", Type: onboarding.EntityOther, Country: "FR", Number: "B 552 100 554"},
				{Name: "NOWHERE LLP", Type: onboarding.EntityOther},
			}},
		},
		{
			name:     "corporate PSC named like a corporate director is one parent entity",
			officers: []chOfficer{{Name: "Acme Holdings Limited", OfficerRole: "corporate-director", Identification: ukCompany}},
			pscs: []chPSC{{Kind: "corporate-entity-person-with-significant-control", Name: "ACME HOLDINGS LIMITED",
				Identification:   &chIdentification{CountryRegistered: "England", RegistrationNumber: "5498655"},
				NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent", "voting-rights-50-to-75-percent"}}},
			want: onboarding.Parties{Entities: []onboarding.RegistryEntity{
				{Name: "Acme Holdings Limited", Type: onboarding.EntityParent, Country: "GB", Number: "05498655", Shares: band(50, 75)},
			}},
		},
		{
			name: "corporate PSC",
			pscs: []chPSC{{Kind: "corporate-entity-person-with-significant-control", Name: " EXAMPLE HOLDINGS LIMITED ",
				Identification: &chIdentification{LegalForm: "Private Company Limited By Shares",
					PlaceRegistered: "Register Of Companies For England And Wales", CountryRegistered: "England", RegistrationNumber: "7654321"},
				NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent"}}},
			want: onboarding.Parties{Entities: []onboarding.RegistryEntity{
				{Name: "EXAMPLE HOLDINGS LIMITED", Type: onboarding.EntityParent, Country: "GB", Number: "07654321", Shares: band(50, 75)},
			}},
		},
		{
			name: "legal person PSC is an entity of type other",
			pscs: []chPSC{{Kind: "legal-person-person-with-significant-control", Name: "THE CROWN ESTATE",
				NaturesOfControl: []string{"significant-influence-or-control"}}},
			want: onboarding.Parties{Entities: []onboarding.RegistryEntity{{Name: "THE CROWN ESTATE", Type: onboarding.EntityOther}}},
		},
		{
			name: "foreign corporate PSC keeps its number as given",
			pscs: []chPSC{{Kind: "corporate-entity-beneficial-owner", Name: "OFFSHORE LTD",
				Identification:   &chIdentification{CountryRegistered: "Cayman Islands", RegistrationNumber: "ky-12345"},
				NaturesOfControl: []string{"ownership-of-shares-more-than-25-percent-registered-overseas-entity"}}},
			want: onboarding.Parties{Entities: []onboarding.RegistryEntity{
				{Name: "OFFSHORE LTD", Type: onboarding.EntityParent, Country: "KY", Number: "KY-12345", Shares: band(25, 100)},
			}},
		},
		{
			name: "super-secure PSC skipped",
			pscs: []chPSC{
				{Kind: "super-secure-person-with-significant-control", NaturesOfControl: []string{"ownership-of-shares-75-to-100-percent"}},
				{Kind: "super-secure-beneficial-owner", Name: "Protected"},
			},
		},
		{
			name: "ceased PSCs skipped",
			pscs: []chPSC{
				{Kind: "individual-person-with-significant-control", Name: "Mr Thomas Price", DateOfBirth: dob(1962, 7), CeasedOn: "2021-08-31",
					NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent"}},
				{Kind: "individual-person-with-significant-control", Name: "Mr Tom Ceased", DateOfBirth: dob(1962, 8), Ceased: true,
					NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent"}},
				{Kind: "corporate-entity-person-with-significant-control", Name: "GONE LIMITED", Ceased: true},
			},
		},
		{
			name:     "duplicate officer is one person",
			officers: []chOfficer{director("SMITH, Jane Alexandra", dob(1984, 7)), director("SMITH,  Jane  Alexandra", dob(1984, 7))},
			want:     onboarding.Parties{People: []onboarding.RegistryPerson{person("Jane Alexandra", "Smith", "1984-07", dir)}},
		},
		{
			name:     "namesakes born in different months are two people",
			officers: []chOfficer{director("SMITH, Jane", dob(1984, 7)), director("SMITH, Jane", dob(1990, 1))},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				person("Jane", "Smith", "1984-07", dir), person("Jane", "Smith", "1990-01", dir)}},
		},
		{
			name:     "duplicate corporate director is one entity",
			officers: []chOfficer{{Name: "ACME LIMITED", OfficerRole: "corporate-director"}, {Name: "Acme Limited", OfficerRole: "corporate-director"}},
			want:     onboarding.Parties{Entities: []onboarding.RegistryEntity{{Name: "ACME LIMITED", Type: onboarding.EntityOther}}},
		},
		{
			name:     "director who is a PSC is one person with the PSC's casing",
			officers: []chOfficer{director("O'NEILL, Patrick Joseph", dob(1966, 12))},
			pscs: []chPSC{{Kind: "individual-person-with-significant-control", Name: "Mr Patrick Joseph O'Neill",
				NameElements: &chNameElements{Title: "Mr", Forename: "Patrick", MiddleName: "Joseph", Surname: "O'Neill"},
				DateOfBirth:  dob(1966, 12), Nationality: "Irish",
				NaturesOfControl: []string{"voting-rights-75-to-100-percent", "ownership-of-shares-75-to-100-percent"}}},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				withShares(person("Patrick Joseph", "O'Neill", "1966-12", dir, ubo, sh), band(75, 100))}},
		},
		{
			name:     "the director's nationality wins, the PSC's fills a gap",
			officers: []chOfficer{{Name: "SMITH, Jane", OfficerRole: "director", DateOfBirth: dob(1984, 7), Nationality: "Martian"}, director("JONES, Ann", dob(1970, 1))},
			pscs: []chPSC{
				{Kind: "individual-person-with-significant-control", Name: "Ms Jane Smith", DateOfBirth: dob(1984, 7), Nationality: "Irish"},
				{Kind: "individual-person-with-significant-control", Name: "Mrs Ann Jones", DateOfBirth: dob(1970, 1), Nationality: "Irish"},
			},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				{Roles: []onboarding.PersonRole{dir, ubo}, FullName: "Jane Smith", FirstName: "Jane", LastName: "Smith", DateOfBirth: "1984-07", Nationality: "IE"},
				{Roles: []onboarding.PersonRole{dir, ubo}, FullName: "Ann Jones", FirstName: "Ann", LastName: "Jones", DateOfBirth: "1970-01", Nationality: "GB"},
			}},
		},
		{
			name: "PSC without shares is a UBO only",
			pscs: []chPSC{individual("Dr Jane Smith", dob(1984, 7), "significant-influence-or-control", "voting-rights-25-to-50-percent")},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{person("Jane", "Smith", "1984-07", ubo)}},
		},
		{
			name: "PSC listed twice is one person",
			pscs: []chPSC{
				individual("Mr John Smith", dob(1950, 1), "ownership-of-shares-25-to-50-percent"),
				individual("Mr John Smith", dob(1950, 1), "ownership-of-shares-25-to-50-percent-as-trust"),
			},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				withShares(person("John", "Smith", "1950-01", ubo, sh), band(25, 50))}},
		},
		{
			name: "overseas beneficial owner",
			pscs: []chPSC{{Kind: "individual-beneficial-owner", Name: "Mr Hans Muller", DateOfBirth: dob(1960, 2), Nationality: "German",
				NaturesOfControl: []string{"ownership-of-shares-more-than-25-percent-registered-overseas-entity"}}},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				{Roles: []onboarding.PersonRole{ubo, sh}, FullName: "Hans Muller", FirstName: "Hans", LastName: "Muller", DateOfBirth: "1960-02",
					Nationality: "DE", Shares: band(25, 100)}}},
		},
		{
			name:     "nameless parties skipped",
			officers: []chOfficer{director("", dob(1984, 7)), director("SMITH,", nil), {Name: " ", OfficerRole: "corporate-director"}},
			pscs: []chPSC{individual("", dob(1984, 7)), {Kind: "corporate-entity-person-with-significant-control", Name: "  "},
				{Kind: "individual-person-with-significant-control", NameElements: &chNameElements{Forename: "Jane"}}},
			want: onboarding.Parties{People: []onboarding.RegistryPerson{
				{Roles: []onboarding.PersonRole{dir}, FullName: "Smith", LastName: "Smith", Nationality: "GB"}}},
		},
		{
			name: "unknown PSC kind skipped",
			pscs: []chPSC{{Kind: "persons-with-significant-control-statement", Name: "no-individual-or-entity-with-signficant-control"}},
		},
	}
	for _, tt := range tests {
		got := mergeParties(tt.officers, tt.pscs)
		if diff := cmp.Diff(got, tt.want, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: mergeParties mismatch (-got +want):\n%s", tt.name, diff)
		}
	}
}

// TestMergePartiesKeepsPSCIdentification: a corporate director carries no
// identification in many officer lists (appointments before 2009), while
// the same company as a corporate PSC always does. Merging the two must
// not lose the PSC's registration, or the parent cannot be traced.
func TestMergePartiesKeepsPSCIdentification(t *testing.T) {
	t.Parallel()
	got := mergeParties(
		[]chOfficer{{Name: "BLUEBELL GROUP LIMITED", OfficerRole: "corporate-director"}},
		[]chPSC{{Kind: "corporate-entity-person-with-significant-control", Name: "BLUEBELL GROUP LIMITED",
			Identification: &chIdentification{PlaceRegistered: "Register Of Companies For England And Wales",
				CountryRegistered: "England", RegistrationNumber: "10000008"},
			NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent"}}},
	)
	want := onboarding.Parties{Entities: []onboarding.RegistryEntity{entityBluebellGroup}}
	if diff := cmp.Diff(got, want, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("mergeParties mismatch (-got +want):\n%s", diff)
	}
}

// TestMergePartiesDuplicatePSC: Companies House can list one owner twice
// (two notifications, say one for shares and one for voting rights). The
// second entry must not erase the shares the first one recorded: a
// shareholder without Shares is a contradiction.
func TestMergePartiesDuplicatePSC(t *testing.T) {
	t.Parallel()
	got := mergeParties(nil, []chPSC{
		{Kind: "individual-person-with-significant-control", Name: "Mr John Smith", DateOfBirth: dob(1950, 1),
			NaturesOfControl: []string{"ownership-of-shares-25-to-50-percent"}},
		{Kind: "individual-person-with-significant-control", Name: "Mr John Smith", DateOfBirth: dob(1950, 1),
			NaturesOfControl: []string{"voting-rights-25-to-50-percent"}},
		{Kind: "corporate-entity-person-with-significant-control", Name: "ACME LIMITED",
			NaturesOfControl: []string{"ownership-of-shares-50-to-75-percent"}},
		{Kind: "corporate-entity-person-with-significant-control", Name: "ACME LIMITED",
			NaturesOfControl: []string{"right-to-appoint-and-remove-directors"}},
	})
	want := onboarding.Parties{
		People: []onboarding.RegistryPerson{{Roles: []onboarding.PersonRole{onboarding.PersonUBO, onboarding.PersonShareholder},
			FullName: "John Smith", FirstName: "John", LastName: "Smith", DateOfBirth: "1950-01", Shares: band(25, 50)}},
		Entities: []onboarding.RegistryEntity{{Name: "ACME LIMITED", Type: onboarding.EntityParent, Shares: band(50, 75)}},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("mergeParties mismatch (-got +want):\n%s", diff)
	}
}

// pagedServer plays Companies House for the officer and PSC lists of
// 10000001, answering them with the given handlers, and logs the path and
// query of each request.
type pagedServer struct {
	*httptest.Server
	mu  sync.Mutex
	log []string
}

func newPagedServer(t *testing.T, officers http.HandlerFunc, psc http.HandlerFunc) *pagedServer {
	t.Helper()
	s := &pagedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, r.URL.Path+"?"+r.URL.RawQuery)
		s.mu.Unlock()
		switch r.URL.Path {
		case "/company/10000001/officers":
			officers(w, r)
		case "/company/10000001/persons-with-significant-control":
			psc(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *pagedServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// officerPages serves a list of total directors named "PERSONnnn, Test",
// each page as start_index and items_per_page ask, but at most perPage.
func officerPages(total, perPage int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start, _ := strconv.Atoi(r.URL.Query().Get("start_index"))
		n, _ := strconv.Atoi(r.URL.Query().Get("items_per_page"))
		n = min(n, perPage)
		items := []string{}
		for i := start; i < total && i < start+n; i++ {
			items = append(items, fmt.Sprintf(`{"name":"PERSON%03d, Test","officer_role":"director","date_of_birth":{"month":1,"year":1980}}`, i))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"officer-list","items_per_page":%d,"start_index":%d,"total_results":%d,"items":[%s]}`,
			n, start, total, strings.Join(items, ","))
	}
}

func emptyPSCs(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"items":[],"total_results":0}`)
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// newLiveRegistry returns a live-mode Registry whose registries are at base.
func newLiveRegistry(t testing.TB, base string, opts Options) *Registry {
	t.Helper()
	opts.Mode = ModeLive
	opts.CompaniesHouseBaseURL, opts.CROBaseURL = base, base+"/cws"
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New(live): %v", err)
	}
	return r
}

func TestPartiesPaging(t *testing.T) {
	t.Parallel()
	const officersPath = "/company/10000001/officers"
	const pscPath = "/company/10000001/persons-with-significant-control"
	pageQuery := func(start int) string { return fmt.Sprintf("items_per_page=100&start_index=%d", start) }
	tests := []struct {
		name         string
		officers     http.HandlerFunc
		psc          http.HandlerFunc
		wantPeople   int
		wantRequests []string
	}{
		{"two pages", officerPages(150, 100), emptyPSCs, 150,
			[]string{officersPath + "?" + pageQuery(0), officersPath + "?" + pageQuery(100), pscPath + "?" + pageQuery(0)}},
		{"exactly one page", officerPages(100, 100), emptyPSCs, 100,
			[]string{officersPath + "?" + pageQuery(0), pscPath + "?" + pageQuery(0)}},
		// A registry that sends fewer than asked is followed by what it sent.
		{"short pages", officerPages(150, 60), emptyPSCs, 150,
			[]string{officersPath + "?" + pageQuery(0), officersPath + "?" + pageQuery(60), officersPath + "?" + pageQuery(120), pscPath + "?" + pageQuery(0)}},
		// An empty page ends the list even when the total promises more.
		{"empty page", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("start_index") == "0" {
				officerPages(150, 100)(w, r)
				return
			}
			fmt.Fprint(w, `{"items":[],"total_results":150}`)
		}, emptyPSCs, 100,
			[]string{officersPath + "?" + pageQuery(0), officersPath + "?" + pageQuery(100), pscPath + "?" + pageQuery(0)}},
		// 404 on a sub-resource means "none".
		{"404s", answer(404, `{"errors":[{"error":"not-found"}]}`), answer(404, ""), 0,
			[]string{officersPath + "?" + pageQuery(0), pscPath + "?" + pageQuery(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newPagedServer(t, tt.officers, tt.psc)
			r := newLiveRegistry(t, srv.URL, Options{})
			got, err := r.Parties(context.Background(), "GB", "10000001")
			if err != nil {
				t.Fatalf("Parties: %v", err)
			}
			if len(got.People) != tt.wantPeople || len(got.Entities) != 0 {
				t.Errorf("Parties = %d people, %d entities; want %d people, no entities", len(got.People), len(got.Entities), tt.wantPeople)
			}
			for i, p := range got.People {
				if want := fmt.Sprintf("Person%03d", i); p.LastName != want {
					t.Errorf("person %d is %q, want %q (in the registry's order)", i, p.LastName, want)
					break
				}
			}
			if diff := cmp.Diff(srv.requests(), tt.wantRequests); diff != "" {
				t.Errorf("requests mismatch (-got +want):\n%s", diff)
			}
		})
	}

	// A list that never ends is followed for at most maxPages pages.
	t.Run("endless", func(t *testing.T) {
		t.Parallel()
		srv := newPagedServer(t, officerPages(1_000_000, 100), emptyPSCs)
		r := newLiveRegistry(t, srv.URL, Options{})
		got, err := r.Parties(context.Background(), "GB", "10000001")
		if err != nil {
			t.Fatalf("Parties: %v", err)
		}
		if len(got.People) != maxPages*pageSize || len(srv.requests()) != maxPages+1 {
			t.Errorf("Parties of an endless list: %d people in %d requests; want %d in %d",
				len(got.People), len(srv.requests()), maxPages*pageSize, maxPages+1)
		}
	})
}

func TestPartiesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		officers http.HandlerFunc
		psc      http.HandlerFunc
		want     *onboarding.Error
	}{
		{"PSC 500", officerPages(2, 100), answer(500, `{"error":"Internal server error"}`), onboarding.ErrRegistryFailed},
		{"officers 500", answer(500, ""), emptyPSCs, onboarding.ErrRegistryFailed},
		{"PSC 401", officerPages(2, 100), answer(401, `{"error":"Invalid Authorization"}`), onboarding.ErrRegistryFailed},
		{"officers 503", answer(503, "Service Unavailable"), emptyPSCs, onboarding.ErrRegistryUnavailable(ukRegistry)},
		{"PSC 503", officerPages(2, 100), answer(503, ""), onboarding.ErrRegistryUnavailable(ukRegistry)},
		{"PSC 429", officerPages(2, 100), answer(429, ""), onboarding.ErrRegistryUnavailable(ukRegistry)},
		{"PSC 502", officerPages(2, 100), answer(502, "<html>Bad Gateway</html>"), onboarding.ErrRegistryUnavailable(ukRegistry)},
		{"officers HTML", answer(200, "<html>maintenance</html>"), emptyPSCs, onboarding.ErrRegistryFailed},
		{"PSC wrong shape", officerPages(2, 100), answer(200, `{"items":{"name":"x"}}`), onboarding.ErrRegistryFailed},
		{"officers bad date of birth", answer(200, `{"items":[{"name":"A, B","officer_role":"director","date_of_birth":{"month":"March"}}],"total_results":1}`),
			emptyPSCs, onboarding.ErrRegistryFailed},
		// The second page fails: the first page's officers are not returned.
		{"second page 503", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("start_index") != "0" {
				w.WriteHeader(503)
				return
			}
			officerPages(150, 100)(w, r)
		}, emptyPSCs, onboarding.ErrRegistryUnavailable(ukRegistry)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newPagedServer(t, tt.officers, tt.psc)
			r := newLiveRegistry(t, srv.URL, Options{})
			got, err := r.Parties(context.Background(), "GB", "10000001")
			if diff := cmp.Diff(onboarding.AsError(err), tt.want); diff != "" {
				t.Errorf("Parties error mismatch (-got +want):\n%s\nerror: %v", diff, err)
			}
			if diff := cmp.Diff(got, onboarding.Parties{}); diff != "" {
				t.Errorf("Parties returned parties with its error (-got +want):\n%s", diff)
			}
			if tt.want == onboarding.ErrRegistryFailed && !errors.Is(err, onboarding.ErrRegistryFailed) {
				t.Errorf("Parties error %v does not wrap onboarding.ErrRegistryFailed", err)
			}
			if err != nil && !strings.Contains(err.Error(), "/company/10000001/") {
				t.Errorf("Parties error %q does not name the resource for the logs", err)
			}
		})
	}
}

// TestPartiesQueryEscaping checks that the number reaches the path as
// normalised, never as given.
func TestPartiesQueryEscaping(t *testing.T) {
	t.Parallel()
	r, log := newLoggedRegistry(t, sandbox(), Options{})
	for _, number := range []string{"10000001/../10000002", "10000001?x=1", "%31"} {
		if _, err := r.Parties(context.Background(), "GB", number); onboarding.AsError(err) == nil || onboarding.AsError(err).Kind != onboarding.KindInvalid {
			t.Errorf("Parties(GB, %q) = %v; want a malformed-number error", number, err)
		}
	}
	if sent := log.sent(); len(sent) != 0 {
		t.Errorf("malformed numbers sent requests: %+v", sent)
	}
	if _, err := r.Parties(context.Background(), "GB", "1"); err == nil {
		t.Error("Parties(GB, 1) succeeded; 00000001 has no recording")
	}
	for _, s := range log.sent() {
		if !strings.HasPrefix(s.Path, "/company/00000001/") {
			t.Errorf("request path %q; want the padded number", s.Path)
		}
	}
}
