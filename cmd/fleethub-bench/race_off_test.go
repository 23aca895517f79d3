//go:build !race

package main

// raceOn: see race_on_test.go.
const raceOn = false
