//go:build !race

package geocode

// raceOn: see race_on_test.go.
const raceOn = false
