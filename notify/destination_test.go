package notify

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a table; a host it does not know does not
// resolve. It counts its lookups.
type fakeResolver struct {
	hosts   map[string][]string
	lookups atomic.Int32
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.lookups.Add(1)
	ips, ok := r.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// resolverFunc is a Resolver written as a function.
type resolverFunc func(ctx context.Context, host string) ([]net.IPAddr, error)

func (f resolverFunc) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return f(ctx, host)
}

// testHosts is what fakeResolver knows.
var testHosts = map[string][]string{
	"public.example":  {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"rebind.example":  {"127.0.0.1"},
	"mixed.example":   {"93.184.216.34", "10.1.2.3"},
	"private.example": {"192.168.0.10"},
	"meta.example":    {"169.254.169.254"},
	"v6local.example": {"fd12:3456::1"},
	"mapped.example":  {"::ffff:10.0.0.1"},
	"6to4.example":    {"2002:c0a8:1::1"},
	"empty.example":   {},
}

func TestCheckURLProduction(t *testing.T) {
	tests := []struct {
		url  string
		want string // the error; "" for none
	}{
		{"https://93.184.216.34/hook", ""},
		{"https://public.example/hooks/onboard?x=1", ""},
		{"https://public.example:8443/", ""},
		{"HTTPS://public.example/", ""},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/", ""},
		{"http://public.example/", "webhook URLs must use https in production"},
		{"http://93.184.216.34/", "webhook URLs must use https in production"},
		{"https://user:pass@public.example/", "webhook URLs must not carry credentials"},
		{"https://user@public.example/", "webhook URLs must not carry credentials"},
		{"https://public.example/#top", "webhook URLs must not have a fragment"},
		{"https://public.example/#", "webhook URLs must not have a fragment"},
		{"https:///hook", "webhook URLs must have a host"},
		{"https://:443/hook", "webhook URLs must have a host"},
		{"not-a-url", "webhook URLs must be absolute http or https URLs"},
		{"not a url", "webhook URLs must not contain spaces or control characters"},
		{"https://public.example/a b", "webhook URLs must not contain spaces or control characters"},
		{"https://public.example/a\x00b", "webhook URLs must not contain spaces or control characters"},
		{"https://public.example/a\x7fb", "webhook URLs must not contain spaces or control characters"},
		{"/relative/path", "webhook URLs must be absolute http or https URLs"},
		{"ftp://public.example/", "webhook URLs must be absolute http or https URLs"},
		{"https:public.example", "webhook URLs must be absolute http or https URLs"},
		{"https://exa mple.com/", "webhook URLs must not contain spaces or control characters"},
		{"https://exa%zzmple.com/", "webhook URL is not a valid URL"},
		{"https://public.example:99999999/", "webhook URL port '99999999' is not a port number"},
		{"https://public.example:0/", "webhook URL port '0' is not a port number"},
		{"https://public.example/" + strings.Repeat("a", MaxWebhookURL-len("https://public.example/")), ""},
		{"https://public.example/" + strings.Repeat("a", MaxWebhookURL-len("https://public.example/")+1), "webhook URLs are at most 2048 characters"},
		{"https://127.0.0.1/", "webhook URL host '127.0.0.1' is a loopback address"},
		{"https://127.8.9.10/", "webhook URL host '127.8.9.10' is a loopback address"},
		{"https://10.0.0.1/", "webhook URL host '10.0.0.1' is a private address"},
		{"https://172.16.5.4/", "webhook URL host '172.16.5.4' is a private address"},
		{"https://172.31.255.255/", "webhook URL host '172.31.255.255' is a private address"},
		{"https://172.32.0.1/", ""},
		{"https://192.168.1.1/", "webhook URL host '192.168.1.1' is a private address"},
		{"https://169.254.169.254/latest/meta-data/", "webhook URL host '169.254.169.254' is a link-local address"},
		{"https://100.64.0.1/", "webhook URL host '100.64.0.1' is a shared (carrier-grade NAT) address"},
		{"https://100.128.0.1/", ""},
		{"https://0.0.0.0/", "webhook URL host '0.0.0.0' is an unspecified address"},
		{"https://0.1.2.3/", "webhook URL host '0.1.2.3' is an unspecified address"},
		{"https://224.0.0.1/", "webhook URL host '224.0.0.1' is a link-local address"},
		{"https://239.1.2.3/", "webhook URL host '239.1.2.3' is a multicast or broadcast address"},
		{"https://255.255.255.255/", "webhook URL host '255.255.255.255' is a multicast or broadcast address"},
		{"https://[::1]/", "webhook URL host '::1' is a loopback address"},
		{"https://[::]/", "webhook URL host '::' is an unspecified address"},
		{"https://[fe80::1]/", "webhook URL host 'fe80::1' is a link-local address"},
		{"https://[fe80::1%25eth0]/", "webhook URL host 'fe80::1%eth0' is a link-local address"},
		{"https://[fc00::1]/", "webhook URL host 'fc00::1' is a private address"},
		{"https://[fd12:3456::1]/", "webhook URL host 'fd12:3456::1' is a private address"},
		{"https://[ff02::1]/", "webhook URL host 'ff02::1' is a link-local address"},
		{"https://[ff05::1]/", "webhook URL host 'ff05::1' is a multicast or broadcast address"},
		{"https://[::ffff:127.0.0.1]/", "webhook URL host '::ffff:127.0.0.1' is a loopback address"},
		{"https://[::ffff:169.254.169.254]/", "webhook URL host '::ffff:169.254.169.254' is a link-local address"},
		{"https://[64:ff9b::a00:1]/", "webhook URL host '64:ff9b::a00:1' is a private address"},
		{"https://[64:ff9b::5db8:d822]/", ""},
		{"https://[64:ff9b::c612:1]/", "webhook URL host '64:ff9b::c612:1' is a benchmarking address"},
		{"https://[64:ff9b:1::1]/", "webhook URL host '64:ff9b:1::1' is a local-use NAT64 address"},
		{"https://[64:ff9b:1:ffff::5db8:d822]/", "webhook URL host '64:ff9b:1:ffff::5db8:d822' is a local-use NAT64 address"},
		{"https://198.18.0.1/", "webhook URL host '198.18.0.1' is a benchmarking address"},
		{"https://198.19.255.255/", "webhook URL host '198.19.255.255' is a benchmarking address"},
		{"https://198.20.0.1/", ""},
		{"https://198.17.255.255/", ""},
		{"https://240.0.0.1/", "webhook URL host '240.0.0.1' is a reserved address"},
		{"https://255.255.255.254/", "webhook URL host '255.255.255.254' is a reserved address"},
		{"https://[2002:7f00:1::1]/", "webhook URL host '2002:7f00:1::1' is a loopback address"},
		{"https://[2002:a00:1::]/", "webhook URL host '2002:a00:1::' is a private address"},
		{"https://[2002:a9fe:a9fe::1]/", "webhook URL host '2002:a9fe:a9fe::1' is a link-local address"},
		{"https://[2002:c612:1::1]/", "webhook URL host '2002:c612:1::1' is a benchmarking address"},
		{"https://[2002::1]/", "webhook URL host '2002::1' is an unspecified address"},
		{"https://[2002:5db8:d822::1]/", ""},
		{"https://rebind.example/", "webhook URL host 'rebind.example' resolves to 127.0.0.1, a loopback address"},
		{"https://private.example/", "webhook URL host 'private.example' resolves to 192.168.0.10, a private address"},
		{"https://meta.example/", "webhook URL host 'meta.example' resolves to 169.254.169.254, a link-local address"},
		{"https://v6local.example/", "webhook URL host 'v6local.example' resolves to fd12:3456::1, a private address"},
		{"https://mapped.example/", "webhook URL host 'mapped.example' resolves to 10.0.0.1, a private address"},
		{"https://6to4.example/", "webhook URL host '6to4.example' resolves to 2002:c0a8:1::1, a private address"},
		{"https://mixed.example/", "webhook URL host 'mixed.example' resolves to 10.1.2.3, a private address"},
		{"https://nxdomain.example/", "webhook URL host 'nxdomain.example' could not be resolved"},
		{"https://empty.example/", "webhook URL host 'empty.example' could not be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.url[:min(len(tt.url), 60)], func(t *testing.T) {
			res := &fakeResolver{hosts: testHosts}
			w := NewWebhooks(WebhookOptions{Resolver: res})
			err := w.CheckURL(t.Context(), tt.url)
			if got := errString(err); got != tt.want {
				t.Errorf("CheckURL(%q) = %q, want %q", tt.url, got, tt.want)
			}
			// An address in the URL is checked as it is, without DNS.
			if u, err := url.Parse(tt.url); err == nil {
				if _, err := netip.ParseAddr(u.Hostname()); err == nil && res.lookups.Load() != 0 {
					t.Errorf("CheckURL(%q) looked the address up", tt.url)
				}
			}
		})
	}
}

func TestCheckURLSandbox(t *testing.T) {
	tests := []struct {
		url  string
		want string
	}{
		{"http://127.0.0.1:8080/hook", ""},
		{"http://localhost:8080/hook", ""},
		{"http://[::1]/", ""},
		{"http://10.0.0.1/", ""},
		{"https://nxdomain.example/", ""}, // the sandbox does not resolve
		{"http://user:pass@localhost/", "webhook URLs must not carry credentials"},
		{"http://localhost/#x", "webhook URLs must not have a fragment"},
		{"file:///etc/passwd", "webhook URLs must be absolute http or https URLs"},
	}
	res := &fakeResolver{}
	w := NewWebhooks(WebhookOptions{AllowPrivate: true, AllowHTTP: true, Resolver: res})
	for _, tt := range tests {
		if got := errString(w.CheckURL(t.Context(), tt.url)); got != tt.want {
			t.Errorf("CheckURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	if n := res.lookups.Load(); n != 0 {
		t.Errorf("the sandbox made %d lookups", n)
	}
}

func TestCheckURLLocalhost(t *testing.T) {
	// The system's resolver: localhost resolves to a loopback address.
	err := NewWebhooks(WebhookOptions{}).CheckURL(t.Context(), "https://localhost/hook")
	if got := errString(err); !strings.HasPrefix(got, "webhook URL host 'localhost' resolves to ") || !strings.HasSuffix(got, ", a loopback address") {
		t.Errorf("CheckURL(localhost) = %q", got)
	}
}

func TestSendRefused(t *testing.T) {
	var hits atomic.Int32
	srv := serve(t, counter(&hits))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	at := func(host string) string { return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/hook" }
	tests := []struct {
		name      string
		url       string
		allowHTTP bool
		want      string // the error, or its start when it ends with "…"
	}{
		{"loopback address", srv.URL, true, "destination refused: 127.0.0.1 is a loopback address"},
		{"mapped loopback", at("::ffff:127.0.0.1"), true, "destination refused: ::ffff:127.0.0.1 is a loopback address"},
		{"localhost", at("localhost"), true, "destination refused: localhost resolves to …"},
		{"rebound name", at("rebind.example"), true, "destination refused: rebind.example resolves to 127.0.0.1, a loopback address"},
		{"one address of many", at("mixed.example"), true, "destination refused: mixed.example resolves to 10.1.2.3, a private address"},
		{"no https", srv.URL, false, "destination refused: webhook URLs must use https in production"},
		{"credentials", "https://user:pw@public.example/", false, "destination refused: webhook URLs must not carry credentials"},
		{"unresolved", at("nxdomain.example"), true, "host 'nxdomain.example' could not be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res Resolver = net.DefaultResolver
			if tt.name != "localhost" {
				res = &fakeResolver{hosts: testHosts}
			}
			w := NewWebhooks(WebhookOptions{AllowHTTP: tt.allowHTTP, Resolver: res})
			resp, err := w.Send(t.Context(), testRequest(tt.url, testKey1))
			got := errString(err)
			if prefix, ok := strings.CutSuffix(tt.want, "…"); ok && !strings.HasPrefix(got, prefix) || !ok && got != tt.want {
				t.Errorf("Send error = %q, want %q", got, tt.want)
			}
			if resp.StatusCode != 0 {
				t.Errorf("StatusCode = %d", resp.StatusCode)
			}
		})
	}
	// Every Send has returned: a delivery let through would have arrived.
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver on 127.0.0.1 was reached %d times", n)
	}
}

func TestSendRebinding(t *testing.T) {
	// The name resolves to a public address when the endpoint is
	// registered, and to the receiver on 127.0.0.1 at delivery: the check
	// at connect time refuses it.
	var hits atomic.Int32
	srv := serve(t, counter(&hits))
	var lookups atomic.Int32
	res := resolverFunc(func(_ context.Context, host string) ([]net.IPAddr, error) {
		if lookups.Add(1) == 1 {
			return []net.IPAddr{{IP: net.ParseIP("93.184.216.34")}}, nil
		}
		return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
	})
	w := NewWebhooks(WebhookOptions{AllowHTTP: true, Resolver: res})
	url := "http://rebind.example:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port) + "/hook"
	if err := w.CheckURL(t.Context(), url); err != nil {
		t.Fatalf("CheckURL: %v", err)
	}
	_, err := w.Send(t.Context(), testRequest(url, testKey1))
	if want := "destination refused: rebind.example resolves to 127.0.0.1, a loopback address"; errString(err) != want {
		t.Errorf("Send error = %v, want %s", err, want)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver was reached %d times", n)
	}
}

func TestSendSandboxReachesLoopback(t *testing.T) {
	// The same receivers the production tests refuse are reached in the
	// sandbox, so those refusals are the address check's doing.
	var hits atomic.Int32
	srv := serve(t, counter(&hits))
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	w := sandboxWebhooks(0)
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		if resp, err := w.Send(t.Context(), testRequest(u, testKey1)); err != nil || resp.StatusCode != 204 {
			t.Errorf("Send(%s) = %d, %v", u, resp.StatusCode, err)
		}
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("the receiver was reached %d times, want 3", n)
	}
}

// errString is err's message, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
