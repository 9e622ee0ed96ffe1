package form

import "testing"

func TestDisplayText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{dateText("2018-04-16"), "16 April 2018"},
		{dateText("1980-03"), "March 1980"},
		{dateText("not a date"), "not a date"},
		{phoneText("+442079460958"), "+44 20 7946 0958"},
		{phoneText("+447700900123"), "+44 7700 900123"},
		{phoneText("+35312345678"), "+353 1 234 5678"},
		{phoneText("+353871234567"), "+353 87 123 4567"},
		{phoneText("+14155552671"), "+1 415 555 2671"},
		{phoneText("+33123456789"), "+33 123 456 789"},
		{phoneText("020 7946"), "020 7946"},
		{moneyText("250000", "GBP"), "£250,000"},
		{moneyText("1234.5", "EUR"), "€1,234.50"},
		{moneyText("999", "USD"), "$999"},
		{moneyText("40000.00", "GBP"), "£40,000"},
		{moneyText("12", "CHF"), "CHF 12"},
		{moneyText("1e5", "GBP"), "GBP 1e5"},
		{ibanText("GB82WEST12345698765432"), "GB82 WEST 1234 5698 7654 32"},
		{ibanText("IE29 AIBK 9311 5212 3456 78"), "IE29 AIBK 9311 5212 3456 78"},
		{sentenceCase("dissolved"), "Dissolved"},
		{sentenceCase("élan"), "Élan"},
		{sentenceCase(""), ""},
	} {
		if tt.in != tt.want {
			t.Errorf("got %q, want %q", tt.in, tt.want)
		}
	}
}
