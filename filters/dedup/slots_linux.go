package dedup

import (
	"syscall"
	"unsafe"
)

// hugeMin is the smallest table placed in memory of its own with huge
// pages: below it the table fits the TLB's reach with ordinary pages.
const hugeMin = 4 << 20

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// madvHugepage is MADV_HUGEPAGE.
const madvHugepage = 14

// slotMem is the memory of a table outside the Go heap, unmapped by
// free (or, for the last table of a window nobody references, by the
// cleanup NewCompact registers).
type slotMem struct{ b []byte }

// makeSlots returns a zeroed table of n slots. A large one is mapped on
// its own and asked for transparent huge pages: each look-up in a table
// of hundreds of MiB is a random read, and with 4 KiB pages each one
// also misses the TLB and walks the page tables; 2 MiB pages keep the
// whole table within the TLB's reach. Where the kernel gives no huge
// pages the mapping works as ordinary memory; where it cannot be mapped,
// the table is made on the heap.
func makeSlots(n int) ([]uint64, *slotMem) {
	size := n * 8
	if size < hugeMin {
		return make([]uint64, n), nil
	}
	b, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]uint64, n), nil
	}
	off := 0
	if r := uintptr(unsafe.Pointer(&b[0])) % hugePage; r != 0 {
		off = int(hugePage - r)
	}
	_ = syscall.Madvise(b[off:off+size], madvHugepage) // advice: without it the pages are ordinary ones
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[off])), n), &slotMem{b: b}
}

// free unmaps m's memory; nothing may use its table afterwards.
func (m *slotMem) free() {
	if m != nil && m.b != nil {
		_ = syscall.Munmap(m.b) // only fails for a mapping that is not one
		m.b = nil
	}
}

// size is the length of m's mapping; 0 for none.
func (m *slotMem) size() int {
	if m == nil {
		return 0
	}
	return len(m.b)
}
