package vrp

// seeds is how many of a randomized test's full count of seeds or rounds
// it runs: all of them, or a quarter (at least one) under the race
// detector (race_on_test.go).
func seeds(full int) int {
	if raceOn {
		return max(1, full/4)
	}
	return full
}
