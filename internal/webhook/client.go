package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// MaxResponseBytes bounds how much of a receiver's answer is read.
const MaxResponseBytes = 64 << 10

// ErrForbiddenAddress is returned when a host resolves to an address
// webhooks may not reach (loopback, private, link-local, metadata...).
var ErrForbiddenAddress = errors.New("address is not a public unicast address")

// forbidden lists the ranges refused at connect time beyond what
// netip.Addr's predicates catch: CGNAT, IETF protocol assignments,
// benchmarking, documentation, reserved and NAT64 ranges.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// PublicAddress reports whether webhooks may connect to ip without it
// being whitelisted as that literal: not loopback, private (RFC 1918,
// IPv6 ULA), link-local (including the 169.254.169.254 metadata
// service), unspecified, multicast, CGNAT or another special range.
func PublicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range forbidden {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// literalKey carries, in a request's context, the IP literal a request
// may connect to whatever its range: the whitelisted host when it is an
// IP literal itself.
type literalKey struct{}

// newClient returns the delivery client: no proxy, no redirects, a
// dialer that checks every address at connect time, and a timeout. It
// keeps up to conns idle connections per receiver (the dispatcher's
// concurrency), so that a busy receiver's connections are reused rather
// than dialled again for every attempt.
func newClient(timeout time.Duration, conns int) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			allowed, _ := ctx.Value(literalKey{}).(netip.Addr)
			d := *dialer
			d.Control = func(_, address string, _ syscall.RawConn) error {
				return checkDialAddress(address, allowed)
			}
			return d.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   conns,
		IdleConnTimeout:       60 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport:     transport,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkDialAddress runs after name resolution, before connecting: the
// address must be public, unless it is the whitelisted literal itself.
func checkDialAddress(address string, allowed netip.Addr) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", address, ErrForbiddenAddress)
	}
	ip := ap.Addr().Unmap()
	if allowed.IsValid() && ip == allowed.Unmap() {
		return nil
	}
	if !PublicAddress(ip) {
		return fmt.Errorf("connect to %s: %w", ip, ErrForbiddenAddress)
	}
	return nil
}

// withLiteral marks a whitelisted IP-literal host as reachable.
func withLiteral(ctx context.Context, u *url.URL) context.Context {
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		return context.WithValue(ctx, literalKey{}, ip)
	}
	return ctx
}
