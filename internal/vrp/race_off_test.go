//go:build !race

package vrp

// raceOn: see race_on_test.go.
const raceOn = false
