//go:build !race

package optimization_test

// raceOn: see race_on_test.go.
const raceOn = false
