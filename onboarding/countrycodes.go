package onboarding

// countryCodes is every ISO 3166-1 alpha-2 code assigned to a country
// (249), in alphabetical order, two letters each: the values a country
// (an address's, a nationality, an RFI request's) may take. The form's
// list in server/countries.go names the same codes (TestCountryNames there
// keeps the two in step, and checks them against golang.org/x/text).
const countryCodes = "ADAEAFAGAIALAMAOAQARASATAUAWAXAZBABBBDBEBFBGBHBIBJBLBMBNBOBQBRBS" +
	"BTBVBWBYBZCACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZDEDJDKDMDODZECEE" +
	"EGEHERESETFIFJFKFMFOFRGAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGYHKHM" +
	"HNHRHTHUIDIEILIMINIOIQIRISITJEJMJOJPKEKGKHKIKMKNKPKRKWKYKZLALBLC" +
	"LILKLRLSLTLULVLYMAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZNA" +
	"NCNENFNGNINLNONPNRNUNZOMPAPEPFPGPHPKPLPMPNPRPSPTPWPYQARERORSRURW" +
	"SASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZTCTDTFTGTHTJTKTLTMTNTO" +
	"TRTTTVTWTZUAUGUMUSUYUZVAVCVEVGVIVNVUWFWSYEYTZAZMZW"

// IsCountryCode reports whether code is an assigned ISO 3166-1 alpha-2
// code, in capitals: GB and IE, not UK, ZZ or gb.
func IsCountryCode(code string) bool {
	if len(code) != 2 {
		return false
	}
	// A binary search of the pairs.
	lo, hi := 0, len(countryCodes)/2
	for lo < hi {
		mid := (lo + hi) / 2
		switch c := countryCodes[2*mid : 2*mid+2]; {
		case c == code:
			return true
		case c < code:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

// CountryCodes returns the codes IsCountryCode accepts, in alphabetical
// order.
func CountryCodes() []string {
	out := make([]string, 0, len(countryCodes)/2)
	for i := 0; i < len(countryCodes); i += 2 {
		out = append(out, countryCodes[i:i+2])
	}
	return out
}
