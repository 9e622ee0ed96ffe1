package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Where webhooks may go (docs/webhooks.md). Production refuses endpoint URLs that
// are not https or whose host is, or resolves to, an address inside the
// operator's network: loopback, private, link-local (cloud metadata
// services live there), shared (CGNAT), benchmarking, reserved,
// local-use NAT64, unspecified or multicast. The check
// runs when an endpoint is registered (CheckURL) and again each time a
// delivery connects (dial), on the very address it connects to, so a host
// name that changes its answer after registration (DNS rebinding) gains
// nothing.

// MaxWebhookURL is the longest endpoint URL accepted, in bytes.
const MaxWebhookURL = 2048

// Resolver looks up a host name's addresses; *net.Resolver implements it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

var (
	// cgnat is the shared address space of RFC 6598.
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// thisNetwork is 0.0.0.0/8 (RFC 1122): as a destination, Linux takes
	// 0.0.0.0 for the local host.
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	// nat64 is the well-known NAT64 prefix (RFC 6052), whose last 32 bits
	// are the IPv4 address a NAT64 gateway connects to.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// localNAT64 is the local-use NAT64 prefix (RFC 8215): the operator's
	// own translators, with the IPv4 address wherever their prefix length
	// puts it, so the whole prefix is refused.
	localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")
	// sixToFour is 6to4 (RFC 3056), whose bits 16 to 47 are the IPv4
	// address of the relay that carries the traffic.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// benchmarking is 198.18.0.0/15 (RFC 2544), used inside networks (test
	// beds, proxies handing out stand-in addresses).
	benchmarking = netip.MustParsePrefix("198.18.0.0/15")
	// reserved is 240.0.0.0/4 (RFC 1112), which some networks use
	// internally.
	reserved = netip.MustParsePrefix("240.0.0.0/4")
)

// refusal says what kind of address ip is when production must not
// connect to it ("a loopback address"), and "" when it may. IPv4-mapped,
// NAT64 and 6to4 forms are judged by the IPv4 address they carry.
func refusal(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	switch b := ip.As16(); {
	case localNAT64.Contains(ip):
		return "a local-use NAT64 address"
	case nat64.Contains(ip):
		ip = netip.AddrFrom4([4]byte(b[12:]))
	case sixToFour.Contains(ip):
		ip = netip.AddrFrom4([4]byte(b[2:6]))
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsUnspecified() || thisNetwork.Contains(ip):
		return "an unspecified address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "a link-local address"
	case cgnat.Contains(ip):
		return "a shared (carrier-grade NAT) address"
	case ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "a multicast or broadcast address"
	case benchmarking.Contains(ip):
		return "a benchmarking address"
	case reserved.Contains(ip):
		return "a reserved address"
	}
	return ""
}

// refusedError is a delivery not attempted because its destination is
// refused.
type refusedError struct {
	host    string // as the URL names it
	ip      netip.Addr
	literal bool   // the URL names ip itself
	reason  string // from refusal
}

func (e *refusedError) Error() string {
	if e.literal {
		return fmt.Sprintf("destination refused: %s is %s", e.host, e.reason)
	}
	return fmt.Sprintf("destination refused: %s resolves to %s, %s", e.host, e.ip, e.reason)
}

// parseWebhookURL parses raw and checks what can be checked without the
// network: an absolute http(s) URL with a host, no credentials, no
// fragment, and https unless allowHTTP. Its errors are for the operator.
func parseWebhookURL(raw string, allowHTTP bool) (*url.URL, error) {
	if len(raw) > MaxWebhookURL {
		return nil, fmt.Errorf("webhook URLs are at most %d characters", MaxWebhookURL)
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		// url.Parse takes a space in the path, which RFC 3986 does not.
		return nil, errors.New("webhook URLs must not contain spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's message quotes the URL, credentials and all.
		return nil, errors.New("webhook URL is not a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "":
		return nil, errors.New("webhook URLs must be absolute http or https URLs")
	case u.User != nil:
		return nil, errors.New("webhook URLs must not carry credentials")
	case u.Hostname() == "":
		return nil, errors.New("webhook URLs must have a host")
	case strings.Contains(raw, "#"):
		return nil, errors.New("webhook URLs must not have a fragment")
	case u.Scheme != "https" && !allowHTTP:
		return nil, errors.New("webhook URLs must use https in production")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("webhook URL port '%s' is not a port number", p)
		}
	}
	return u, nil
}

// CheckURL reports why raw cannot be a webhook endpoint, nil when it can
// (onboarding.WebhookTransport). Besides the checks Send makes on every
// URL, production resolves the host, which must resolve, and only to
// addresses it may connect to; an IP address in the URL is checked as it
// is. The errors are plain sentences for the operator.
func (w *Webhooks) CheckURL(ctx context.Context, raw string) error {
	u, err := parseWebhookURL(raw, w.allowHTTP)
	if err != nil || w.allowPrivate {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := refusal(ip); why != "" {
			return fmt.Errorf("webhook URL host '%s' is %s", host, why)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	addrs, err := w.resolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("webhook URL host '%s' could not be resolved", host)
	}
	for _, a := range addrs {
		ip, _ := netip.AddrFromSlice(a.IP)
		if why := refusal(ip); why != "" {
			return fmt.Errorf("webhook URL host '%s' resolves to %s, %s", host, ip.Unmap(), why)
		}
	}
	return nil
}

// dial connects to addr (host:port) for a delivery when private
// destinations are refused: it resolves the host itself, refuses the
// connection if any of its addresses is refused, and dials the checked
// addresses in turn, so the address connected to is one it checked.
func (w *Webhooks) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	ip, err := netip.ParseAddr(host)
	literal := err == nil
	if literal {
		ips = []netip.Addr{ip}
	} else {
		addrs, err := w.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		for _, a := range addrs {
			ip, _ := netip.AddrFromSlice(a.IP)
			ips = append(ips, ip.WithZone(a.Zone))
		}
	}
	for _, ip := range ips {
		if why := refusal(ip); why != "" {
			return nil, &refusedError{host: host, ip: ip.Unmap(), literal: literal, reason: why}
		}
	}
	var firstErr error
	for _, ip := range ips {
		c, err := w.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}
