//go:build !race

package apikey_test

const raceEnabled = false
