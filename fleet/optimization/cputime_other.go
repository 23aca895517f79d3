//go:build !linux

package optimization

import "time"

// processCPU is not read outside Linux (nor is the solver's rate
// measured there: vrp.MeasureRate answers 0).
func processCPU() (time.Duration, bool) { return 0, false }
