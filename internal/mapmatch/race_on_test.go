//go:build race

package mapmatch

// raceOn: the race detector slows the matching tenfold; the report
// tables skip under it, and so do the simulated drives, which `make test`
// runs without the detector.
const raceOn = true
