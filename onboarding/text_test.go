package onboarding

import (
	"strings"
	"testing"
)

func TestClipInput(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("é", 100), strings.Repeat("é", 100)},
		{strings.Repeat("é", 101), strings.Repeat("é", 100) + "…"},
	} {
		if got := ClipInput(tt.in); got != tt.want {
			t.Errorf("ClipInput(%d runes) = %q, want %q", len([]rune(tt.in)), got, tt.want)
		}
	}
}

func TestValidEmailDomains(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"a@x.example", true},
		{"a@north-wind.example", true},
		{"a@" + label63 + ".example", true},
		{"a@-x.example", false},
		{"a@x-.example", false},
		{"a@x..example", false},
		{"a@.x.example", false},
		{"a@x.example.", false},
		{"a@example", false},
		{"a@" + label63 + "a.example", false},
		{"a@" + strings.Repeat("abcdefghi.", 25) + "example", false}, // 257 characters
		{"a\x00b@x.example", false},
		{"a@x.exam\tple", false},
		{"Jane <a@x.example>", false},
		{"a@[127.0.0.1]", false},
		{"a@[IPv6:::1]", false},
		{"a@x_y.example", false},
		{"a@x.ex%ample", false},
		{"a@münchen.example", true},
		{"\xffa@x.example", false},
		{strings.Repeat("a", 64) + "@x.example", true},
		{strings.Repeat("a", 65) + "@x.example", false},
	} {
		if got := validEmail(tt.in); got != tt.want {
			t.Errorf("validEmail(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestValidEmailInvisibleCharacters: an address with a character that
// shows as nothing, or reorders what follows it, is refused wherever it
// stands; visible non-ASCII letters are not.
func TestValidEmailInvisibleCharacters(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"jane@northwind.example", true},
		{"jané@northwind.example", true},
		{"josé.garcía@münchen.example", true},
		{"用户@例子.example", true},
		{"ja\u202ene@northwind.example", false}, // right-to-left override (Cf)
		{"jane\u202Egro.live@northwind.example", false},
		{"ja\u200bne@northwind.example", false},       // zero-width space (Cf)
		{"ja\u200dne@northwind.example", false},       // zero-width joiner (Cf)
		{"ja\u00adne@northwind.example", false},       // soft hyphen (Cf)
		{"ja\u2066ne\u2069@northwind.example", false}, // isolates (Cf)
		{"ja\ufeffne@northwind.example", false},       // byte order mark (Cf)
		{"ja\u00a0ne@northwind.example", false},       // no-break space (Zs)
		{"ja\u2028ne@northwind.example", false},       // line separator (Zl)
		{"ja\ue000ne@northwind.example", false},       // private use (Co)
		{"jane@north\u200bwind.example", false},
		{"jane@northwind.example\u202e", false},
	} {
		if got := validEmail(tt.in); got != tt.want {
			t.Errorf("validEmail(%+q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestTextLimitAndMultiline(t *testing.T) {
	for _, tt := range []struct {
		f         Field
		limit     int
		multiline bool
	}{
		{Field{ID: "tax_id", Type: TypeText}, DefaultTextMaxLength, false},
		{Field{ID: "company_name", Type: TypeText}, DefaultNameMaxLength, false},
		{Field{ID: "nickname", Type: TypeText, MaxLength: 30}, 30, false},
		{Field{ID: "notes", Type: TypeText, MaxLength: 200}, 200, false},
		{Field{ID: "notes", Type: TypeText, MaxLength: 5000}, 5000, true},
	} {
		if got := tt.f.TextLimit(); got != tt.limit {
			t.Errorf("%s (max_length %d): TextLimit = %d, want %d", tt.f.ID, tt.f.MaxLength, got, tt.limit)
		}
		if got := tt.f.Multiline(); got != tt.multiline {
			t.Errorf("%s (max_length %d): Multiline = %v, want %v", tt.f.ID, tt.f.MaxLength, got, tt.multiline)
		}
	}
}
