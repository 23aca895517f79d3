//go:build race

package keys_test

// raceEnabled: the race detector makes sync.Pool drop items, so
// allocation counts mean nothing under -race.
const raceEnabled = true
