//go:build race

package routing

// raceOn is true when the tests run under the race detector, which makes
// contracting a city about ten times slower: TestRealExtracts then checks
// the smallest extract only, and `make test` runs it again without the
// detector on all three.
const raceOn = true
