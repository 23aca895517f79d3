//go:build race

package main

// raceOn is true under the race detector, which makes the server five to
// ten times slower: the model tests then run fewer seeds by default, and
// `make test` runs them again without the detector with their full count.
// The tests that drive a server child (built without the detector) or
// contract a city skip themselves under it (skipUnderRace) and run only
// in that second pass.
const raceOn = true
