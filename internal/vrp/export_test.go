package vrp

// RateInstance exposes MeasureRate's instance to the tests.
var RateInstance = rateInstance
