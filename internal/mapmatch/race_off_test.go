//go:build !race

package mapmatch

const raceOn = false
