package onboarding

import (
	"slices"
	"strings"
)

// countryList is every ISO 3166-1 country (249), one a line: its alpha-2
// code (the value the API stores) and its English short name, in
// alphabetical order of name. The names are CLDR's, edited to the names
// people use; the server's tests hold the codes to golang.org/x/text.
const countryList = `
AF Afghanistan
AX Åland Islands
AL Albania
DZ Algeria
AS American Samoa
AD Andorra
AO Angola
AI Anguilla
AQ Antarctica
AG Antigua and Barbuda
AR Argentina
AM Armenia
AW Aruba
AU Australia
AT Austria
AZ Azerbaijan
BS Bahamas
BH Bahrain
BD Bangladesh
BB Barbados
BY Belarus
BE Belgium
BZ Belize
BJ Benin
BM Bermuda
BT Bhutan
BO Bolivia
BA Bosnia and Herzegovina
BW Botswana
BV Bouvet Island
BR Brazil
IO British Indian Ocean Territory
VG British Virgin Islands
BN Brunei
BG Bulgaria
BF Burkina Faso
BI Burundi
KH Cambodia
CM Cameroon
CA Canada
CV Cape Verde
BQ Caribbean Netherlands
KY Cayman Islands
CF Central African Republic
TD Chad
CL Chile
CN China
CX Christmas Island
CC Cocos (Keeling) Islands
CO Colombia
KM Comoros
CG Congo
CD Congo (Democratic Republic)
CK Cook Islands
CR Costa Rica
CI Côte d’Ivoire
HR Croatia
CU Cuba
CW Curaçao
CY Cyprus
CZ Czechia
DK Denmark
DJ Djibouti
DM Dominica
DO Dominican Republic
EC Ecuador
EG Egypt
SV El Salvador
GQ Equatorial Guinea
ER Eritrea
EE Estonia
SZ Eswatini
ET Ethiopia
FK Falkland Islands
FO Faroe Islands
FJ Fiji
FI Finland
FR France
GF French Guiana
PF French Polynesia
TF French Southern Territories
GA Gabon
GM Gambia
GE Georgia
DE Germany
GH Ghana
GI Gibraltar
GR Greece
GL Greenland
GD Grenada
GP Guadeloupe
GU Guam
GT Guatemala
GG Guernsey
GN Guinea
GW Guinea-Bissau
GY Guyana
HT Haiti
HM Heard and McDonald Islands
HN Honduras
HK Hong Kong
HU Hungary
IS Iceland
IN India
ID Indonesia
IR Iran
IQ Iraq
IE Ireland
IM Isle of Man
IL Israel
IT Italy
JM Jamaica
JP Japan
JE Jersey
JO Jordan
KZ Kazakhstan
KE Kenya
KI Kiribati
KW Kuwait
KG Kyrgyzstan
LA Laos
LV Latvia
LB Lebanon
LS Lesotho
LR Liberia
LY Libya
LI Liechtenstein
LT Lithuania
LU Luxembourg
MO Macao
MG Madagascar
MW Malawi
MY Malaysia
MV Maldives
ML Mali
MT Malta
MH Marshall Islands
MQ Martinique
MR Mauritania
MU Mauritius
YT Mayotte
MX Mexico
FM Micronesia
MD Moldova
MC Monaco
MN Mongolia
ME Montenegro
MS Montserrat
MA Morocco
MZ Mozambique
MM Myanmar (Burma)
NA Namibia
NR Nauru
NP Nepal
NL Netherlands
NC New Caledonia
NZ New Zealand
NI Nicaragua
NE Niger
NG Nigeria
NU Niue
NF Norfolk Island
KP North Korea
MK North Macedonia
MP Northern Mariana Islands
NO Norway
OM Oman
PK Pakistan
PW Palau
PS Palestinian Territories
PA Panama
PG Papua New Guinea
PY Paraguay
PE Peru
PH Philippines
PN Pitcairn Islands
PL Poland
PT Portugal
PR Puerto Rico
QA Qatar
RE Réunion
RO Romania
RU Russia
RW Rwanda
WS Samoa
SM San Marino
ST São Tomé and Príncipe
SA Saudi Arabia
SN Senegal
RS Serbia
SC Seychelles
SL Sierra Leone
SG Singapore
SX Sint Maarten
SK Slovakia
SI Slovenia
SB Solomon Islands
SO Somalia
ZA South Africa
GS South Georgia and South Sandwich Islands
KR South Korea
SS South Sudan
ES Spain
LK Sri Lanka
BL St Barthélemy
SH St Helena
KN St Kitts and Nevis
LC St Lucia
MF St Martin
PM St Pierre and Miquelon
VC St Vincent and Grenadines
SD Sudan
SR Suriname
SJ Svalbard and Jan Mayen
SE Sweden
CH Switzerland
SY Syria
TW Taiwan
TJ Tajikistan
TZ Tanzania
TH Thailand
TL Timor-Leste
TG Togo
TK Tokelau
TO Tonga
TT Trinidad and Tobago
TN Tunisia
TR Turkey
TM Turkmenistan
TC Turks and Caicos Islands
TV Tuvalu
UM U.S. Outlying Islands
VI U.S. Virgin Islands
UG Uganda
UA Ukraine
AE United Arab Emirates
GB United Kingdom
US United States
UY Uruguay
UZ Uzbekistan
VU Vanuatu
VA Vatican City
VE Venezuela
VN Vietnam
WF Wallis and Futuna
EH Western Sahara
YE Yemen
ZM Zambia
ZW Zimbabwe
`

// Country is an ISO 3166-1 country: its alpha-2 code and English name.
type Country struct{ Code, Name string }

// Countries lists every country IsCountryCode accepts, in alphabetical
// order of name: the choices of the form's country questions.
func Countries() []Country {
	out := make([]Country, 0, 249)
	for line := range strings.Lines(strings.TrimPrefix(countryList, "\n")) {
		code, name, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		out = append(out, Country{Code: code, Name: name})
	}
	return out
}

// CountryName is the English name of the country with code, or code
// itself when it names none.
func CountryName(code string) string {
	i := countryLine(code)
	if i < 0 {
		return code
	}
	name := countryList[i+len("\nXX "):]
	return name[:strings.IndexByte(name, '\n')]
}

// IsCountryCode reports whether code is an assigned ISO 3166-1 alpha-2
// code, in capitals: GB and IE, not UK, ZZ or gb.
func IsCountryCode(code string) bool { return countryLine(code) >= 0 }

// countryLine is the index in countryList of the newline that starts the
// line of code, or -1 when code is no country's.
func countryLine(code string) int {
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
		return -1
	}
	var key [4]byte
	key[0], key[1], key[2], key[3] = '\n', code[0], code[1], ' '
	return strings.Index(countryList, string(key[:]))
}

// CountryCodes returns the codes IsCountryCode accepts, in alphabetical
// order.
func CountryCodes() []string {
	cs := Countries()
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code
	}
	slices.Sort(out)
	return out
}
