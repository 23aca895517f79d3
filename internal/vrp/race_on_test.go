//go:build race

package vrp

// raceOn is true under the race detector, which makes the solver five to
// ten times slower: the randomized tests then run a few of their seeds,
// and `make test` runs the package again without the detector with all
// of them.
const raceOn = true
