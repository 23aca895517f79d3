//go:build race

package mapmatch

// raceOn: the race detector slows the matching tenfold; the report
// tables skip under it.
const raceOn = true
