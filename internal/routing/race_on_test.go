//go:build race

package routing

// raceOn is true when the tests run under the race detector, which makes
// contracting a city about ten times slower: TestRealExtracts then skips
// itself, and `make test` runs it without the detector on all three
// extracts.
const raceOn = true
