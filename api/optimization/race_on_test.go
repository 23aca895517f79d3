//go:build race

package optimization_test

// raceOn is true under the race detector, which makes the solver five to
// ten times slower: the randomized requests then run a few of their
// seeds, and `make test` runs the package again without the detector
// with all of them.
const raceOn = true
