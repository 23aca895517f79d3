//go:build !race

package routing

// raceOn: see race_on_test.go.
const raceOn = false
