// Package netguard classifies network addresses a server-side request
// (a webhook) may reach: loopback, private, link-local (the cloud
// metadata address 169.254.169.254 among them), CGNAT, unspecified,
// multicast, reserved, benchmarking and documentation ranges are refused,
// also when an IPv4 address is embedded in IPv6 (mapped, NAT64, 6to4).
//
// The ranges are defined once, here: delivery/webhook refuses them when a
// connection is made (on the address actually dialled, after DNS), and
// hub/streams refuses a webhook_url whose host is a literal address in
// them when a stream is started or configured. Literal reads every form a
// resolver or a browser would take as an address (127.1, 2130706433,
// 0x7f000001, 0177.0.0.1, [::ffff:127.0.0.1]) so none slips through as a
// "name".
//
// Every function is a pure function of its arguments over ranges fixed at
// init and only read afterwards: safe for concurrent use.
package netguard
