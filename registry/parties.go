package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"onboard/onboarding"
)

// pageSize is the items_per_page of Companies House list requests; maxPages
// bounds how far a list is followed (1,000 entries is far beyond any real
// company's officers or PSCs).
const (
	pageSize = 100
	maxPages = 10
)

// chOfficerList is a page of GET /company/{n}/officers.
type chOfficerList struct {
	Items        []chOfficer `json:"items"`
	TotalResults int         `json:"total_results"`
}

// chOfficer holds the members of an officer that onboard reads.
type chOfficer struct {
	Name           string            `json:"name"`
	OfficerRole    string            `json:"officer_role"`
	ResignedOn     string            `json:"resigned_on"`
	DateOfBirth    *chDateOfBirth    `json:"date_of_birth"`
	Nationality    string            `json:"nationality"`
	Identification *chIdentification `json:"identification"`
}

// chPSCList is a page of GET /company/{n}/persons-with-significant-control.
type chPSCList struct {
	Items        []chPSC `json:"items"`
	TotalResults int     `json:"total_results"`
}

// chPSC holds the members of a person with significant control that onboard reads.
type chPSC struct {
	Kind             string            `json:"kind"`
	Name             string            `json:"name"`
	NameElements     *chNameElements   `json:"name_elements"`
	DateOfBirth      *chDateOfBirth    `json:"date_of_birth"`
	Nationality      string            `json:"nationality"`
	NaturesOfControl []string          `json:"natures_of_control"`
	CeasedOn         string            `json:"ceased_on"`
	Ceased           bool              `json:"ceased"`
	Identification   *chIdentification `json:"identification"`
}

type chNameElements struct {
	Title      string `json:"title"`
	Forename   string `json:"forename"`
	MiddleName string `json:"middle_name"`
	Surname    string `json:"surname"`
}

// chDateOfBirth is the public part of a date of birth; CH sends integers,
// some recorded payloads strings, so both decode.
type chDateOfBirth struct {
	Month flexInt `json:"month"`
	Year  flexInt `json:"year"`
}

type chIdentification struct {
	LegalForm          string `json:"legal_form"`
	PlaceRegistered    string `json:"place_registered"`
	CountryRegistered  string `json:"country_registered"`
	RegistrationNumber string `json:"registration_number"`
}

// flexInt decodes 7 and "7".
type flexInt int

// UnmarshalJSON accepts a JSON number, a numeric string, or null.
func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%s is not an integer", b)
	}
	*n = flexInt(v)
	return nil
}

// iso returns YYYY-MM, or "" when the month or year is missing.
func (d *chDateOfBirth) iso() string {
	if d == nil || d.Year < 1000 || d.Year > 9999 || d.Month < 1 || d.Month > 12 {
		return ""
	}
	return fmt.Sprintf("%04d-%02d", int(d.Year), int(d.Month))
}

// Parties returns the current officers and persons with significant control
// of a company: directors and individual PSCs become people
// (one person when a director is also a PSC), corporate PSCs and corporate
// directors become entities. number is normalised first. The CRO publishes
// neither, so Irish companies have no parties.
func (r *Registry) Parties(ctx context.Context, country, number string) (onboarding.Parties, error) {
	a, err := r.adapters.of(country)
	if err != nil || a.parties == nil {
		return onboarding.Parties{}, err
	}
	n, err := a.normalize(number)
	if err != nil {
		return onboarding.Parties{}, err
	}
	return a.parties(ctx, n)
}

func (c *companiesHouse) parties(ctx context.Context, number string) (onboarding.Parties, error) {
	var officers []chOfficer
	err := c.list(ctx, "/company/"+number+"/officers", func(body []byte) (int, int, error) {
		var page chOfficerList
		err := json.Unmarshal(body, &page)
		officers = append(officers, page.Items...)
		return len(page.Items), page.TotalResults, err
	})
	if err != nil {
		return onboarding.Parties{}, err
	}
	var pscs []chPSC
	err = c.list(ctx, "/company/"+number+"/persons-with-significant-control", func(body []byte) (int, int, error) {
		var page chPSCList
		err := json.Unmarshal(body, &page)
		pscs = append(pscs, page.Items...)
		return len(page.Items), page.TotalResults, err
	})
	if err != nil {
		return onboarding.Parties{}, err
	}
	return mergeParties(officers, pscs), nil
}

// list pages through a Companies House list resource, handing each page's
// body to decode, which returns the number of items on the page and the
// total. A 404 is an empty list: CH answers it for a company with none.
func (c *companiesHouse) list(ctx context.Context, urlPath string, decode func([]byte) (items, total int, err error)) error {
	for page, start := 0, 0; page < maxPages; page++ {
		q := url.Values{"items_per_page": {strconv.Itoa(pageSize)}, "start_index": {strconv.Itoa(start)}}
		r, err := c.get(ctx, urlPath, q, "application/json")
		if err != nil {
			return err
		}
		switch r.status {
		case http.StatusOK:
		case http.StatusNotFound:
			return nil
		default:
			return c.unexpectedStatus(urlPath, r)
		}
		n, total, err := decode(r.body)
		if err != nil {
			return c.failed(urlPath, err)
		}
		start += n
		if n == 0 || start >= total {
			return nil
		}
	}
	return nil
}

// directorRoles are the officer roles that make a person a director.
var directorRoles = map[string]bool{
	"director": true, "nominee-director": true,
	"llp-designated-member": true, "llp-member": true,
}

// corporateDirectorRoles are the corporate officer roles that make an
// entity part of the company's management.
var corporateDirectorRoles = map[string]bool{
	"corporate-director": true, "corporate-nominee-director": true,
	"corporate-llp-designated-member": true, "corporate-llp-member": true,
}

// mergeParties maps current officers and PSCs to people and entities.
// Resigned officers, ceased PSCs, secretaries and super-secure PSCs (which
// carry no details) are left out. A director who is also an individual PSC
// (same forenames, surname and month of birth) is one person with both roles.
func mergeParties(officers []chOfficer, pscs []chPSC) onboarding.Parties {
	var out onboarding.Parties
	people := make(map[string]int)   // identity key → index in out.People
	entities := make(map[string]int) // upper-case name → index in out.Entities
	for _, o := range officers {
		if o.ResignedOn != "" {
			continue
		}
		role := strings.ToLower(strings.TrimSpace(o.OfficerRole))
		switch {
		case directorRoles[role]:
			first, last := splitOfficerName(o.Name)
			if last == "" {
				continue
			}
			p := onboarding.RegistryPerson{
				Roles:     []onboarding.PersonRole{onboarding.PersonDirector},
				FirstName: first, LastName: last, FullName: joinNonEmpty(" ", first, last),
				DateOfBirth: o.DateOfBirth.iso(),
				Nationality: nationalityCode(o.Nationality),
			}
			key := personKey(p)
			if _, dup := people[key]; dup {
				continue
			}
			people[key] = len(out.People)
			out.People = append(out.People, p)
		case corporateDirectorRoles[role]:
			name := strings.TrimSpace(o.Name)
			if name == "" {
				continue
			}
			if _, dup := entities[strings.ToUpper(name)]; dup {
				continue
			}
			entities[strings.ToUpper(name)] = len(out.Entities)
			out.Entities = append(out.Entities, newEntity(name, onboarding.EntityOther, o.Identification))
		}
	}
	for _, p := range pscs {
		if p.CeasedOn != "" || p.Ceased {
			continue
		}
		shares := sharesBand(p.NaturesOfControl)
		kind := strings.ToLower(p.Kind)
		switch {
		case strings.HasPrefix(kind, "individual-"):
			first, last := pscName(p)
			if last == "" {
				continue
			}
			person := onboarding.RegistryPerson{
				Roles:     []onboarding.PersonRole{onboarding.PersonUBO},
				FirstName: first, LastName: last, FullName: joinNonEmpty(" ", first, last),
				DateOfBirth: p.DateOfBirth.iso(),
				Nationality: nationalityCode(p.Nationality),
				Shares:      shares,
			}
			if shares != nil {
				person.Roles = append(person.Roles, onboarding.PersonShareholder)
			}
			key := personKey(person)
			i, known := people[key]
			if !known {
				people[key] = len(out.People)
				out.People = append(out.People, person)
				continue
			}
			// The director again: keep one person, the PSC's own casing
			// of the name (CH officer surnames are upper case), and add
			// the roles and shares.
			d := &out.People[i]
			d.FirstName, d.LastName, d.FullName = person.FirstName, person.LastName, person.FullName
			for _, r := range person.Roles {
				if !slices.Contains(d.Roles, r) {
					d.Roles = append(d.Roles, r)
				}
			}
			if d.Nationality == "" {
				d.Nationality = person.Nationality
			}
			d.Shares = higherBand(d.Shares, shares)
		case strings.HasPrefix(kind, "corporate-entity-"), strings.HasPrefix(kind, "legal-person-"):
			name := strings.TrimSpace(p.Name)
			if name == "" {
				continue
			}
			typ := onboarding.EntityParent
			if strings.HasPrefix(kind, "legal-person-") {
				typ = onboarding.EntityOther
			}
			e := newEntity(name, typ, p.Identification)
			e.Shares = shares
			if i, known := entities[strings.ToUpper(name)]; known {
				// A corporate director that is also a PSC, or a PSC listed
				// twice: one entity, keeping what either entry tells.
				known := &out.Entities[i]
				known.Type, known.Shares = typ, higherBand(known.Shares, shares)
				if known.Country == "" {
					known.Country, known.Number = e.Country, e.Number
				}
				continue
			}
			entities[strings.ToUpper(name)] = len(out.Entities)
			out.Entities = append(out.Entities, e)
		}
	}
	return out
}

// higherBand returns the band with the higher lower bound; nil when both are.
func higherBand(a, b *onboarding.ShareBand) *onboarding.ShareBand {
	if a == nil || (b != nil && b.Lower > a.Lower) {
		return b
	}
	return a
}

// personKey identifies a human across the officer and PSC lists.
func personKey(p onboarding.RegistryPerson) string {
	return strings.ToUpper(foldSpaces(p.FirstName)) + "|" + strings.ToUpper(foldSpaces(p.LastName)) + "|" + p.DateOfBirth
}

func foldSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }

// newEntity maps a corporate officer or PSC.
func newEntity(name string, typ onboarding.EntityType, id *chIdentification) onboarding.RegistryEntity {
	e := onboarding.RegistryEntity{Name: name, Type: typ}
	if id == nil {
		return e
	}
	e.Country = registeredCountry(id.CountryRegistered, id.PlaceRegistered)
	e.Number = strings.ToUpper(strings.TrimSpace(id.RegistrationNumber))
	if e.Country == countryGB {
		// CH often gives UK registration numbers unpadded ("5498655").
		if n, err := normalizeGB(e.Number); err == nil {
			e.Number = n
		}
	}
	return e
}

// splitOfficerName splits a Companies House officer name, "SURNAME,
// Forenames" with sometimes a trailing honorific ("DYSON, James, Sir"), into
// forenames and a surname in title case. A name without a comma is taken as
// "Forenames Surname".
func splitOfficerName(name string) (first, last string) {
	parts := strings.Split(name, ",")
	if len(parts) == 1 {
		fields := strings.Fields(name)
		if len(fields) == 0 {
			return "", ""
		}
		return strings.Join(fields[:len(fields)-1], " "), titleCase(fields[len(fields)-1])
	}
	return foldSpaces(parts[1]), titleCase(foldSpaces(parts[0]))
}

// honorifics are the titles a PSC's plain name may start with.
var honorifics = map[string]bool{
	"MR": true, "MRS": true, "MS": true, "MISS": true, "MX": true, "DR": true, "PROF": true,
	"SIR": true, "DAME": true, "LORD": true, "LADY": true, "REV": true,
}

// pscName returns an individual PSC's forenames and surname, from
// name_elements when present, else from the name without its title.
func pscName(p chPSC) (first, last string) {
	if ne := p.NameElements; ne != nil && strings.TrimSpace(ne.Surname) != "" {
		return joinNonEmpty(" ", ne.Forename, ne.MiddleName), foldSpaces(ne.Surname)
	}
	fields := strings.Fields(p.Name)
	for len(fields) > 1 && honorifics[strings.ToUpper(strings.TrimSuffix(fields[0], "."))] {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return "", ""
	}
	return strings.Join(fields[:len(fields)-1], " "), fields[len(fields)-1]
}

// titleCase turns an upper-case surname into title case: a capital after
// every space, hyphen or apostrophe, and after "Mc" ("O'NEILL" → "O'Neill",
// "SMITH-JONES" → "Smith-Jones", "MCDONALD" → "McDonald"). A name that is
// not all upper case is the registry's own casing and is kept.
func titleCase(s string) string {
	if s != strings.ToUpper(s) {
		return s
	}
	rs := []rune(strings.ToLower(s))
	for i, r := range rs {
		wordStart := i == 0 || isNameSeparator(rs[i-1])
		afterMc := i >= 2 && rs[i-2] == 'M' && rs[i-1] == 'c' && (i == 2 || isNameSeparator(rs[i-3]))
		if wordStart || afterMc {
			rs[i] = unicode.ToUpper(r)
		}
	}
	return string(rs)
}

func isNameSeparator(r rune) bool { return r == ' ' || r == '-' || r == '\'' || r == '’' }

// sharesNature matches the PSC natures of control that state a band of
// share ownership, as Companies House names them.
var sharesNature = regexp.MustCompile(`^ownership-of-shares-(\d+)-to-(\d+)-percent(-as-trust|-as-firm)?$`)

// sharesBand returns the highest band of share ownership among natures, or
// nil when none states one. The overseas-entity "more than 25 percent"
// forms are the band 25-100.
func sharesBand(natures []string) *onboarding.ShareBand {
	var best *onboarding.ShareBand
	for _, n := range natures {
		var b onboarding.ShareBand
		if m := sharesNature.FindStringSubmatch(n); m != nil {
			lo, _ := strconv.ParseFloat(m[1], 64)
			hi, _ := strconv.ParseFloat(m[2], 64)
			b = onboarding.ShareBand{Lower: lo, Upper: hi}
		} else if strings.HasPrefix(n, "ownership-of-shares-more-than-25-percent") {
			b = onboarding.ShareBand{Lower: 25, Upper: 100}
		} else {
			continue
		}
		if b.Lower >= b.Upper || b.Upper > 100 {
			continue
		}
		if best == nil || b.Lower > best.Lower {
			best = &b
		}
	}
	return best
}

// nationalityCode maps a Companies House nationality ("British", or several
// joined by commas: "British,Irish") to the ISO 3166-1 alpha-2 code of the
// first one, or "" when it is not one onboard knows.
func nationalityCode(s string) string {
	first, _, _ := strings.Cut(s, ",")
	return nationalities[strings.ToUpper(foldSpaces(first))]
}

var nationalities = map[string]string{
	"BRITISH": "GB", "ENGLISH": "GB", "SCOTTISH": "GB", "WELSH": "GB", "NORTHERN IRISH": "GB",
	"UNITED KINGDOM": "GB", "IRISH": "IE", "FRENCH": "FR", "GERMAN": "DE", "SPANISH": "ES",
	"ITALIAN": "IT", "DUTCH": "NL", "AMERICAN": "US", "CANADIAN": "CA", "AUSTRALIAN": "AU",
	"NEW ZEALANDER": "NZ", "INDIAN": "IN", "PAKISTANI": "PK", "BANGLADESHI": "BD", "CHINESE": "CN",
	"JAPANESE": "JP", "POLISH": "PL", "PORTUGUESE": "PT", "ROMANIAN": "RO", "BULGARIAN": "BG",
	"LITHUANIAN": "LT", "LATVIAN": "LV", "ESTONIAN": "EE", "HUNGARIAN": "HU", "CZECH": "CZ",
	"SLOVAK": "SK", "GREEK": "GR", "CYPRIOT": "CY", "MALTESE": "MT", "BELGIAN": "BE",
	"LUXEMBOURGER": "LU", "SWISS": "CH", "AUSTRIAN": "AT", "SWEDISH": "SE", "DANISH": "DK",
	"NORWEGIAN": "NO", "FINNISH": "FI", "ICELANDIC": "IS", "TURKISH": "TR", "SOUTH AFRICAN": "ZA",
	"NIGERIAN": "NG", "KENYAN": "KE", "GHANAIAN": "GH", "BRAZILIAN": "BR", "MEXICAN": "MX",
	"ISRAELI": "IL", "EMIRATI": "AE", "SINGAPOREAN": "SG", "HONG KONGER": "HK", "UKRAINIAN": "UA",
	"CROATIAN": "HR", "SLOVENIAN": "SI", "SERBIAN": "RS", "RUSSIAN": "RU", "SOUTH KOREAN": "KR",
}

// registeredCountry maps a corporate PSC's country_registered (free text:
// "England", "United Kingdom") to ISO 3166-1 alpha-2, falling back to
// place_registered ("Register Of Companies For England And Wales",
// "Companies House"); "" when neither is recognised.
func registeredCountry(country, place string) string {
	if c, ok := countries[strings.ToUpper(foldSpaces(country))]; ok {
		return c
	}
	// "New South Wales" is not Wales.
	p := strings.ReplaceAll(strings.ToUpper(foldSpaces(place)), "NEW SOUTH WALES", "")
	for _, uk := range []string{"COMPANIES HOUSE", "ENGLAND", "WALES", "SCOTLAND", "NORTHERN IRELAND", "UNITED KINGDOM"} {
		if strings.Contains(p, uk) {
			return countryGB
		}
	}
	if strings.Contains(p, "IRELAND") || strings.Contains(p, "COMPANIES REGISTRATION OFFICE") {
		return countryIE
	}
	return ""
}

var countries = map[string]string{
	"ENGLAND": "GB", "WALES": "GB", "SCOTLAND": "GB", "NORTHERN IRELAND": "GB", "ENGLAND AND WALES": "GB",
	"ENGLAND & WALES": "GB", "UNITED KINGDOM": "GB", "UK": "GB", "GREAT BRITAIN": "GB", "GB": "GB",
	"IRELAND": "IE", "REPUBLIC OF IRELAND": "IE", "FRANCE": "FR", "GERMANY": "DE", "SPAIN": "ES",
	"ITALY": "IT", "NETHERLANDS": "NL", "THE NETHERLANDS": "NL", "BELGIUM": "BE", "LUXEMBOURG": "LU",
	"UNITED STATES": "US", "UNITED STATES OF AMERICA": "US", "USA": "US", "CANADA": "CA",
	"JERSEY": "JE", "GUERNSEY": "GG", "ISLE OF MAN": "IM", "CAYMAN ISLANDS": "KY",
	"BRITISH VIRGIN ISLANDS": "VG", "SWITZERLAND": "CH", "CYPRUS": "CY", "MALTA": "MT",
	"SINGAPORE": "SG", "HONG KONG": "HK", "AUSTRALIA": "AU", "GIBRALTAR": "GI",
}
