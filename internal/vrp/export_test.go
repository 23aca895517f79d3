package vrp

// RateInstance exposes MeasureRate's instance to the tests.
var RateInstance = rateInstance

// Seeds is how many seeds of full a randomized test runs: all of them,
// or a quarter (at least one) under the race detector.
func Seeds(full int) int { return seeds(full) }
