package config

import (
	"net"
	"strconv"

	"onboard/onboarding"
)

// checkListen checks addr, the value of key (listen or metrics.listen), as
// the address of a TCP listener, noting a problem under topic on p, and
// reports whether it is valid: host:port with the port a number from 0 to
// 65535. net.Listen would also take a service name ("http"), but links
// built from listen need the number. The host is not looked up, and nothing
// is bound.
func checkListen(topic, key, addr string, p *onboarding.Problems) bool {
	_, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil:
		p.Note(topic, "%s %q is not host:port", key, addr)
	case !isPortNumber(port):
		p.Note(topic, "%s %q: the port must be a number from 0 to 65535 (not a service name such as \"http\")", key, addr)
	default:
		return true
	}
	return false
}

// isPortNumber reports whether port is written as a TCP port number, 0 to
// 65535, in decimal digits only.
func isPortNumber(port string) bool {
	if port == "" || len(port) > 5 {
		return false
	}
	for _, r := range port {
		if r < '0' || r > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(port)
	return err == nil && n <= 65535
}
