//go:build !linux

package dedup

// slotMem is the memory of a table outside the Go heap: none here.
type slotMem struct{}

// makeSlots returns a zeroed table of n slots, on the heap.
func makeSlots(n int) ([]uint64, *slotMem) { return make([]uint64, n), nil }

// free does nothing: the table is the collector's.
func (m *slotMem) free() {}

// size is 0: nothing is mapped.
func (m *slotMem) size() int { return 0 }
