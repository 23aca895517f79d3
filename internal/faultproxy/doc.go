// Package faultproxy is a TCP proxy for fault tests and the soak: it
// forwards connections to a target and can cut them (close every
// connection it carries and refuse new ones, as a part that went away),
// hang them (hold every byte, as a stopped server would) or slow the
// replies of the connections open (Slow: the target runs a command whose
// reply comes after its client gave up). Listener offers the cut on a
// listener a test hands to a server of its own.
//
// It is a test helper and is not linked into the server.
//
// A Proxy and a Listener are safe for concurrent use: a test may Cut,
// Hang or Close from any goroutine while connections run. The Proxy runs
// one goroutine that accepts and two per connection (one per direction),
// under one mutex and a condition variable that holds the bytes while it
// hangs; Close waits for all of them.
package faultproxy
