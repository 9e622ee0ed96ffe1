package notify

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCert returns a self-signed certificate for 127.0.0.1 and localhost and
// a pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "notify test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// serverConfig shapes the behaviour of a testServer.
type serverConfig struct {
	startTLS    bool            // advertise and accept STARTTLS
	auth        bool            // advertise AUTH PLAIN
	implicitTLS bool            // speak TLS from the first byte (smtps)
	cert        tls.Certificate // for STARTTLS and implicit TLS
	user, pass  string          // the credentials AUTH accepts
	silent      bool            // accept connections and never answer
	// reject maps a step to the reply that refuses it. Steps: connect,
	// STARTTLS, AUTH, MAIL, RCPT, DATA (the command), DATA-END (the message).
	reject map[string]string
}

// session is what the test server saw in one connection.
type session struct {
	Commands    []string // verbs in order
	TLS         bool     // the connection was (or became) encrypted
	AuthUser    string
	AuthPass    string
	AuthOverTLS bool
	From        string
	Rcpt        []string
	Data        []byte // the message, dot-unstuffed
	Plain       string // every byte the client sent before TLS
}

// testServer is a minimal SMTP server on 127.0.0.1 that records sessions.
type testServer struct {
	cfg      serverConfig
	addr     string
	sessions chan session
}

// newTestServer starts a server that stops when the test ends.
func newTestServer(t *testing.T, cfg serverConfig) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{cfg: cfg, addr: ln.Addr().String(), sessions: make(chan session, 16)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					select {
					case <-done:
					case <-stop:
					}
					_ = conn.Close()
				}()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				s.serve(conn)
			})
		}
	})
	t.Cleanup(func() {
		close(done)
		_ = ln.Close()
		wg.Wait()
	})
	return s
}

// session returns the next finished session.
func (s *testServer) session(t *testing.T) session {
	t.Helper()
	select {
	case ss := <-s.sessions:
		return ss
	case <-time.After(5 * time.Second):
		t.Fatal("test server recorded no session")
		return session{}
	}
}

// serve speaks SMTP on conn until QUIT or the client goes away.
func (s *testServer) serve(conn net.Conn) {
	var ss session
	defer func() { s.sessions <- ss }()
	if s.cfg.silent {
		_, _ = io.Copy(io.Discard, conn)
		return
	}
	// plain records what the client sends until the conversation is
	// encrypted.
	var plain bytes.Buffer
	defer func() {
		if !ss.TLS {
			ss.Plain = plain.String()
		}
	}()
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{s.cfg.cert}}
	var src io.Reader = io.TeeReader(conn, &plain)
	if s.cfg.implicitTLS {
		tc := tls.Server(conn, tlsCfg)
		if tc.Handshake() != nil {
			return
		}
		conn, src, ss.TLS = tc, tc, true
	}
	r := bufio.NewReader(src)
	reply := func(lines ...string) {
		_, _ = io.WriteString(conn, strings.Join(lines, "\r\n")+"\r\n")
	}
	refuse := func(step string) bool {
		if rep, ok := s.cfg.reject[step]; ok {
			reply(rep)
			return true
		}
		return false
	}

	if refuse("connect") {
		return
	}
	reply("220 test.local ESMTP ready")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		ss.Commands = append(ss.Commands, verb)
		switch verb {
		case "EHLO":
			lines := []string{"250-test.local greets you"}
			if s.cfg.startTLS && !ss.TLS {
				lines = append(lines, "250-STARTTLS")
			}
			if s.cfg.auth {
				lines = append(lines, "250-AUTH PLAIN")
			}
			reply(append(lines, "250 8BITMIME")...)
		case "HELO", "NOOP", "RSET":
			reply("250 ok")
		case "STARTTLS":
			if refuse("STARTTLS") {
				continue
			}
			if !s.cfg.startTLS || ss.TLS {
				reply("502 5.5.1 not offered")
				continue
			}
			reply("220 2.0.0 go ahead")
			ss.Plain = plain.String()
			tc := tls.Server(conn, tlsCfg)
			if tc.Handshake() != nil {
				return
			}
			conn, ss.TLS = tc, true
			r = bufio.NewReader(conn)
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			raw, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(raw), "\x00")
			if !strings.EqualFold(mech, "PLAIN") || err != nil || len(parts) != 3 {
				reply("501 5.5.2 malformed AUTH")
				continue
			}
			ss.AuthUser, ss.AuthPass, ss.AuthOverTLS = parts[1], parts[2], ss.TLS
			if refuse("AUTH") {
				continue
			}
			if parts[1] != s.cfg.user || parts[2] != s.cfg.pass {
				reply("535 5.7.8 authentication failed")
				continue
			}
			reply("235 2.7.0 authenticated")
		case "MAIL":
			addr, _, _ := strings.Cut(strings.TrimPrefix(arg, "FROM:"), " ")
			ss.From = strings.Trim(addr, "<>")
			if !refuse("MAIL") {
				reply("250 2.1.0 sender ok")
			}
		case "RCPT":
			ss.Rcpt = append(ss.Rcpt, strings.Trim(strings.TrimPrefix(arg, "TO:"), "<>"))
			if !refuse("RCPT") {
				reply("250 2.1.5 recipient ok")
			}
		case "DATA":
			if refuse("DATA") {
				continue
			}
			reply("354 end with <CRLF>.<CRLF>")
			var data bytes.Buffer
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			ss.Data = data.Bytes()
			if !refuse("DATA-END") {
				reply("250 2.0.0 queued")
			}
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			reply("502 5.5.2 unknown command")
		}
	}
}
