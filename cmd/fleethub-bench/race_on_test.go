//go:build race

package main

// raceOn is true under the race detector: TestModesAgainstAServer, which
// builds and drives a server without it, runs in `make test`'s pass
// without the detector instead.
const raceOn = true
