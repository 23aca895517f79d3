package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/fleethub/fleethub/internal/netguard"
)

func TestLiteralRefused(t *testing.T) {
	for _, c := range []struct {
		host    string
		literal bool   // read as an address
		ip      string // the address read
		refused bool
	}{
		// IPv4 forms of loopback
		{"127.0.0.1", true, "127.0.0.1", true},
		{"127.0.0.1.", true, "127.0.0.1", true},
		{"127.1", true, "127.0.0.1", true},
		{"127.0.1", true, "127.0.0.1", true},
		{"2130706433", true, "127.0.0.1", true},
		{"0x7f000001", true, "127.0.0.1", true},
		{"0X7F000001", true, "127.0.0.1", true},
		{"0x7f.0.0.1", true, "127.0.0.1", true},
		{"0x7f.1", true, "127.0.0.1", true},
		{"0177.0.0.1", true, "127.0.0.1", true},
		{"0177.1", true, "127.0.0.1", true},
		{"017700000001", true, "127.0.0.1", true},
		// other refused ranges
		{"10.1.2.3", true, "10.1.2.3", true},
		{"012.1.2.3", true, "10.1.2.3", true},
		{"172.16.0.1", true, "172.16.0.1", true},
		{"192.168.1.1", true, "192.168.1.1", true},
		{"3232235777", true, "192.168.1.1", true},
		{"169.254.169.254", true, "169.254.169.254", true},
		{"0xa9fea9fe", true, "169.254.169.254", true},
		{"2852039166", true, "169.254.169.254", true},
		{"100.64.0.1", true, "100.64.0.1", true},
		{"100.100.100.200", true, "100.100.100.200", true},
		{"0.0.0.0", true, "0.0.0.0", true},
		{"0", true, "0.0.0.0", true},
		{"224.0.0.1", true, "224.0.0.1", true},
		{"255.255.255.255", true, "255.255.255.255", true},
		{"198.18.0.1", true, "198.18.0.1", true},
		// IPv6 forms
		{"::1", true, "::1", true},
		{"[::1]", true, "::1", true},
		{"0:0:0:0:0:0:0:1", true, "::1", true},
		{"::", true, "::", true},
		{"::ffff:127.0.0.1", true, "::ffff:127.0.0.1", true},
		{"[::ffff:127.0.0.1]", true, "::ffff:127.0.0.1", true},
		{"::ffff:7f00:1", true, "::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true, "::ffff:169.254.169.254", true},
		{"64:ff9b::7f00:1", true, "64:ff9b::7f00:1", true},
		{"64:ff9b::127.0.0.1", true, "64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true, "64:ff9b::a9fe:a9fe", true},
		{"2002:7f00:1::", true, "2002:7f00:1::", true},
		{"::127.0.0.1", true, "::7f00:1", true},
		{"fe80::1", true, "fe80::1", true},
		{"fe80::1%eth0", true, "fe80::1%eth0", true},
		{"fc00::1", true, "fc00::1", true},
		{"fd12:3456::1", true, "fd12:3456::1", true},
		{"ff02::1", true, "ff02::1", true},
		{"2001:db8::1", true, "2001:db8::1", true},
		// public addresses: literals, accepted
		{"8.8.8.8", true, "8.8.8.8", false},
		{"134744072", true, "8.8.8.8", false},
		{"0x08080808", true, "8.8.8.8", false},
		{"93.184.216.34", true, "93.184.216.34", false},
		{"2606:4700:4700::1111", true, "2606:4700:4700::1111", false},
		{"[2606:4700:4700::1111]", true, "2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", true, "::ffff:8.8.8.8", false},
		{"64:ff9b::808:808", true, "64:ff9b::808:808", false},
		// names and malformed: not literals (checked at connect time)
		{"localhost", false, "", false},
		{"hooks.example.com", false, "", false},
		{"127.0.0.1.nip.io", false, "", false},
		{"1.2.3.4.5", false, "", false},
		{"256.0.0.1", false, "", false},
		{"127.0.0.256", false, "", false},
		{"4294967296", false, "", false},
		{"08.0.0.1", false, "", false},
		{"0x7g.0.0.1", false, "", false},
		{"127..1", false, "", false},
		{"", false, "", false},
		{".", false, "", false},
		{"+1", false, "", false},
		{"1_0.0.0.1", false, "", false},
		{"[::1", false, "", false},
	} {
		ip, ok := netguard.Literal(c.host)
		if ok != c.literal || (ok && ip.String() != c.ip) {
			t.Errorf("Literal(%q) = %v, %v; want %s, %v", c.host, ip, ok, c.ip, c.literal)
		}
		if _, refused := netguard.LiteralRefused(c.host); refused != c.refused {
			t.Errorf("LiteralRefused(%q) = %v, want %v", c.host, refused, c.refused)
		}
	}
}

func TestAllowedZero(t *testing.T) {
	if netguard.Allowed(netip.Addr{}) {
		t.Fatal("the zero Addr is allowed")
	}
}

// FuzzLiteral checks that Literal never panics, that every IPv4 literal
// it reads is the address the dotted form reads, and that refusal does
// not depend on the form: the dotted, decimal, hex and mapped forms of
// the same address are judged alike.
func FuzzLiteral(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1",
		"::1", "[::ffff:127.0.0.1]", "64:ff9b::7f00:1", "169.254.169.254", "8.8.8.8", "example.com", "0x", "00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		ip, ok := netguard.Literal(host)
		_, refused := netguard.LiteralRefused(host)
		if !ok {
			if refused {
				t.Fatalf("%q: refused but not a literal", host)
			}
			return
		}
		if refused == netguard.Allowed(ip) {
			t.Fatalf("%q: LiteralRefused %v disagrees with Allowed(%v)", host, refused, ip)
		}
		ip4 := ip.Unmap()
		if !ip4.Is4() {
			return
		}
		b := ip4.As4()
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		for _, form := range []string{ip4.String(), itoa(uint64(v), 10, ""), itoa(uint64(v), 16, "0x"), itoa(uint64(v), 8, "0"), "[::ffff:" + ip4.String() + "]"} {
			got, ok := netguard.Literal(form)
			if !ok || got.Unmap() != ip4 {
				t.Fatalf("%q: form %q reads %v, %v; want %v", host, form, got, ok, ip4)
			}
			if _, r := netguard.LiteralRefused(form); r != refused {
				t.Fatalf("%q: form %q refused %v, want %v", host, form, r, refused)
			}
		}
		if (b[0] == 127 || b[0] == 10 || (b[0] == 169 && b[1] == 254)) && !refused {
			t.Fatalf("%q (%v) is not refused", host, ip)
		}
	})
}

func itoa(v uint64, base int, prefix string) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= uint64(base) {
		b = append([]byte{digits[v%uint64(base)]}, b...)
	}
	return prefix + string(b)
}
