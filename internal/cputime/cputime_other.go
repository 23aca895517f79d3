//go:build !linux

package cputime

import "time"

// Thread is not read outside Linux.
func Thread() (time.Duration, bool) { return 0, false }

// Process is not read outside Linux.
func Process() (time.Duration, bool) { return 0, false }
