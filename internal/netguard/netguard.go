package netguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// refused are the ranges refused besides what netip classifies as
// loopback, private, link-local, multicast or unspecified.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT (100.100.100.200 is a cloud metadata address)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments (192.0.0.192 is one)
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking networks
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and 255.255.255.255
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated), with :: and ::1
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Allowed reports whether ip is outside every refused range. IPv4
// addresses embedded in IPv6 (mapped, NAT64, 6to4) are judged as IPv4.
// The zero Addr is not allowed.
func Allowed(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("") // a prefix never contains a zoned address
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return Allowed(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return Allowed(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range refused {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Literal reads host (a URL's host without port; brackets are allowed) as
// an address literal. IPv6 is any form netip reads, a zone included.
// IPv4 is any form inet_aton and the WHATWG URL parser read: one to four
// parts separated by dots, each decimal, octal (leading 0) or hex (0x),
// the last filling the remaining bytes (127.1, 2130706433, 0x7f000001,
// 0x7f.0.0.1, 0177.0.0.1), with one trailing dot allowed. ok is false
// for a name.
func Literal(host string) (ip netip.Addr, ok bool) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		return ip, err == nil
	}
	return literal4(host)
}

// literal4 reads the IPv4 forms Literal describes.
func literal4(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// number reads one part of an IPv4 literal: 0x hex ("0x" alone is 0),
// leading-0 octal, or decimal; at most 32 bits.
func number(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" || p[0] == '+' || p[0] == '-' || strings.Contains(p, "_") {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
}

// LiteralRefused reports whether host is an address literal in a refused
// range, and the address read.
func LiteralRefused(host string) (netip.Addr, bool) {
	ip, ok := Literal(host)
	return ip, ok && !Allowed(ip)
}
