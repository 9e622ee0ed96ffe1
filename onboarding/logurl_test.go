package onboarding

import "testing"

func TestLogURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://hooks.example.com/in?token=s3cret", "https://hooks.example.com/in"},
		{"https://hooks.example.com:8443/a/b?x=1&token=s3cret", "https://hooks.example.com:8443/a/b"},
		{"https://user:s3cret@hooks.example.com/in", "https://hooks.example.com/in"},
		{"https://hooks.example.com/in#s3cret", "https://hooks.example.com/in"},
		{"https://hooks.example.com/a%2Fb/in", "https://hooks.example.com/a%2Fb/in"},
		{"http://127.0.0.1:9/hook", "http://127.0.0.1:9/hook"},
		{"https://[::1]/", "https://[::1]/"},
		{"https://hooks.example.com?token=s3cret", "https://hooks.example.com"},
		{"https://exa mple.com/?token=s3cret", "(not a valid URL)"},
	}
	for _, tt := range tests {
		if got := logURL(tt.raw); got != tt.want {
			t.Errorf("logURL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
