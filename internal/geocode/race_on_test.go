//go:build race

package geocode

// raceOn: the race detector makes loading and searching the real address
// data about ten times slower; the tests over it and the randomized
// comparison skip under it, and `make test` runs them without the
// detector.
const raceOn = true
