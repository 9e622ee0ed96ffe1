package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"onboard/onboarding"
)

func TestNormalizeCompanyNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		country, number string
		want            string
	}{
		// GB: all digits are zero-padded to 8.
		{"GB", "10000001", "10000001"},
		{"GB", "445790", "00445790"},
		{"GB", "1", "00000001"},
		{"GB", " 1234 5678 ", "12345678"},
		{"GB", "10\u00a0000001", "10000001"},
		{"GB", "\t00445790\n", "00445790"},
		// GB: two letters and 1–6 digits pad the digits to 6.
		{"GB", "SC311560", "SC311560"},
		{"GB", "sc100007", "SC100007"},
		{"GB", "SC 100007", "SC100007"},
		{"GB", "SC7", "SC000007"},
		{"GB", "ni 12345", "NI012345"},
		{"GB", "OC300001", "OC300001"},
		// GB: one letter and 7 digits stay.
		{"GB", "R0000001", "R0000001"},
		{"GB", "r0000001", "R0000001"},
		// GB: registered-society forms stay.
		{"GB", "RS00001A", "RS00001A"},
		{"GB", "ip1234rs", "IP1234RS"},
		// IE: 1–6 digits, without leading zeros.
		{"IE", "100001", "100001"},
		{"IE", "83740", "83740"},
		{"IE", "000123", "123"},
		{"IE", " 249885 ", "249885"},
		{"IE", "1", "1"},
	}
	for _, tt := range tests {
		got, err := NormalizeCompanyNumber(tt.country, tt.number)
		if err != nil {
			t.Errorf("NormalizeCompanyNumber(%q, %q) error = %v, want %q", tt.country, tt.number, err, tt.want)
			continue
		}
		if got != tt.want {
			t.Errorf("NormalizeCompanyNumber(%q, %q) = %q, want %q", tt.country, tt.number, got, tt.want)
		}
	}
}

func TestNormalizeCompanyNumberMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		country, number string
		want            *onboarding.Error
	}{
		{"GB", "", onboarding.ErrCompanyNumberMalformed("", "UK company registry")},
		{"GB", "   ", onboarding.ErrCompanyNumberMalformed("", "UK company registry")},
		{"GB", " abc ", onboarding.ErrCompanyNumberMalformed("abc", "UK company registry")},
		{"GB", "123456789", onboarding.ErrCompanyNumberMalformed("123456789", "UK company registry")},
		{"GB", "SC1234567", onboarding.ErrCompanyNumberMalformed("SC1234567", "UK company registry")},
		{"GB", "SC", onboarding.ErrCompanyNumberMalformed("SC", "UK company registry")},
		{"GB", "ABC12345", onboarding.ErrCompanyNumberMalformed("ABC12345", "UK company registry")},
		{"GB", "R012345", onboarding.ErrCompanyNumberMalformed("R012345", "UK company registry")},
		{"GB", "S1234567X", onboarding.ErrCompanyNumberMalformed("S1234567X", "UK company registry")},
		{"GB", "10-000-001", onboarding.ErrCompanyNumberMalformed("10-000-001", "UK company registry")},
		{"GB", "RS0001AB1", onboarding.ErrCompanyNumberMalformed("RS0001AB1", "UK company registry")},
		{"GB", "１２３", onboarding.ErrCompanyNumberMalformed("１２３", "UK company registry")},
		{"IE", "", onboarding.ErrCompanyNumberMalformed("", "Irish company registry")},
		{"IE", "0", onboarding.ErrCompanyNumberMalformed("0", "Irish company registry")},
		{"IE", " 000000 ", onboarding.ErrCompanyNumberMalformed("000000", "Irish company registry")},
		{"IE", "1234567", onboarding.ErrCompanyNumberMalformed("1234567", "Irish company registry")},
		{"IE", "IE100001", onboarding.ErrCompanyNumberMalformed("IE100001", "Irish company registry")},
		{"IE", "12 345", onboarding.ErrCompanyNumberMalformed("12 345", "Irish company registry")},
		{"IE", "-1", onboarding.ErrCompanyNumberMalformed("-1", "Irish company registry")},
		{"IE", "12a", onboarding.ErrCompanyNumberMalformed("12a", "Irish company registry")},
	}
	for _, tt := range tests {
		got, err := NormalizeCompanyNumber(tt.country, tt.number)
		if err == nil {
			t.Errorf("NormalizeCompanyNumber(%q, %q) = %q, want error %q", tt.country, tt.number, got, tt.want)
			continue
		}
		if diff := cmp.Diff(onboarding.AsError(err), tt.want); diff != "" {
			t.Errorf("NormalizeCompanyNumber(%q, %q) error mismatch (-got +want):\n%s", tt.country, tt.number, diff)
		}
	}
}

func TestNormalizeCompanyNumberUnsupportedCountry(t *testing.T) {
	t.Parallel()
	got, err := NormalizeCompanyNumber("FR", "552100554")
	if err == nil || onboarding.AsError(err) != nil {
		t.Errorf(`NormalizeCompanyNumber("FR", "552100554") = %q, %v; want a plain error`, got, err)
	}
}
