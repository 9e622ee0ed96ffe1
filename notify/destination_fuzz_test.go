package notify

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzCheckURL checks webhook endpoint URL validation with any string, in
// production (https only, private destinations refused; host names
// resolve to a public address, or to a private one when they contain
// "internal") and in sandbox (http allowed, nothing resolved). It must not
// panic, and every URL it accepts is an absolute http(s) URL that net/url
// parses, of at most MaxWebhookURL bytes, with a host, a valid port if
// any, no credentials and no fragment; in production it is https and its
// host is not, and does not resolve to, a refused address.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"https://hooks.example.com/onboard", "http://hooks.example.com/onboard", "https://internal.example/x",
		"https://user:pass@hooks.example.com/", "https://hooks.example.com/#frag", "https://hooks.example.com:0/",
		"https://hooks.example.com:65536/", "https://hooks.example.com:443/", "https://[::1]/", "https://[::ffff:10.0.0.1]/",
		"https://[64:ff9b::a00:1]/", "https://[2002:a00:1::]/", "https://[fe80::1%25eth0]/", "https://127.0.0.1/",
		"https://169.254.169.254/latest/meta-data", "https://8.8.8.8/", "https://0/", "https://2130706433/",
		"https:hooks.example.com", "https:///path", "//hooks.example.com", "ftp://hooks.example.com", "HTTPS://HOOKS.EXAMPLE.COM",
		"https://hooks.example.com/a b", "https://hooks.example.com/\x00", "https://%68ooks.example.com/", "",
		"https://" + strings.Repeat("a", MaxWebhookURL) + ".example",
	} {
		f.Add(seed)
	}
	public := netip.MustParseAddr("93.184.216.34")
	res := resolverFunc(func(_ context.Context, host string) ([]net.IPAddr, error) {
		if strings.Contains(host, "internal") {
			return []net.IPAddr{{IP: net.IPv4(10, 0, 0, 1)}}, nil
		}
		return []net.IPAddr{{IP: public.AsSlice()}}, nil
	})
	production := NewWebhooks(WebhookOptions{Resolver: res})
	sandbox := NewWebhooks(WebhookOptions{Resolver: res, AllowHTTP: true, AllowPrivate: true})
	f.Fuzz(func(t *testing.T, raw string) {
		for _, w := range []*Webhooks{production, sandbox} {
			if err := w.CheckURL(context.Background(), raw); err != nil {
				if err.Error() == "" {
					t.Fatalf("CheckURL(%q): an error without a message", raw)
				}
				continue
			}
			if len(raw) > MaxWebhookURL {
				t.Fatalf("CheckURL accepted %d bytes", len(raw))
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatalf("CheckURL accepted %q, which net/url does not parse: %v", raw, err)
			}
			if u.Scheme != "https" && (u.Scheme != "http" || !w.allowHTTP) {
				t.Fatalf("CheckURL accepted %q with scheme %q (allowHTTP %v)", raw, u.Scheme, w.allowHTTP)
			}
			if u.Hostname() == "" || u.User != nil || u.Opaque != "" || strings.Contains(raw, "#") {
				t.Fatalf("CheckURL accepted %q: host %q, user %v, opaque %q", raw, u.Hostname(), u.User, u.Opaque)
			}
			if p := u.Port(); p != "" {
				if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
					t.Fatalf("CheckURL accepted %q with port %q", raw, p)
				}
			}
			if w.allowPrivate {
				continue
			}
			if ip, err := netip.ParseAddr(u.Hostname()); err == nil && refusal(ip) != "" {
				t.Fatalf("CheckURL accepted %q, whose host is %s", raw, refusal(ip))
			}
			if strings.Contains(u.Hostname(), "internal") {
				t.Fatalf("CheckURL accepted %q, whose host resolves to a private address", raw)
			}
		}
	})
}
