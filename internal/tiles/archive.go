package tiles

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Limits of what an archive may ask the reader to allocate.
const (
	maxSection      = 64 << 20  // a directory or the metadata, as stored
	maxDecompressed = 256 << 20 // a directory or the metadata, decompressed
	maxLeaves       = 4096      // parsed leaf directories kept
	maxDepth        = 4         // root, then at most three levels of leaves
)

// Archive is an open PMTiles file. It is safe for concurrent use (see the
// package documentation).
type Archive struct {
	f        *os.File
	size     uint64 // of the file, fixed at Open
	modTime  time.Time
	Path     string
	Header   Header
	Metadata []byte // JSON
	root     []entry
	mu       sync.Mutex // guards leaves
	leaves   map[uint64][]entry
}

// Open reads an archive's header, metadata and root directory.
func Open(path string) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	a, err := open(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

func open(f *os.File, path string) (*Archive, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tiles: %w", err)
	}
	a := &Archive{f: f, size: uint64(st.Size()), modTime: st.ModTime(), Path: path, leaves: map[uint64][]entry{}}
	hb := make([]byte, headerLen)
	if _, err := io.ReadFull(f, hb); err != nil {
		return nil, ErrNotPMTiles
	}
	if a.Header, err = parseHeader(hb); err != nil {
		return nil, err
	}
	if a.Metadata, err = a.section(a.Header.MetadataOffset, a.Header.MetadataLength, a.Header.InternalCompression); err != nil {
		return nil, err
	}
	rb, err := a.section(a.Header.RootOffset, a.Header.RootLength, a.Header.InternalCompression)
	if err != nil {
		return nil, err
	}
	if a.root, err = parseDirectory(rb); err != nil {
		return nil, err
	}
	return a, nil
}

// Close closes the file.
func (a *Archive) Close() error { return a.f.Close() }

// Size is the archive's length in bytes, as the file had it at Open.
func (a *Archive) Size() int64 { return int64(a.size) }

// ModTime is the file's modification time at Open.
func (a *Archive) ModTime() time.Time { return a.modTime }

// ReadAt reads the archive's own bytes, as a PMTiles client reads them
// by range: len(p) bytes at off, within Size (io.EOF past it), whatever
// the file grew to since Open. It is safe for concurrent use.
func (a *Archive) ReadAt(p []byte, off int64) (int, error) {
	return io.NewSectionReader(a.f, 0, int64(a.size)).ReadAt(p, off)
}

// read reads n bytes at off, which must lie within the file: a corrupt
// offset or length is an error before anything is allocated for it. what
// names the read in errors.
func (a *Archive) read(what string, off, n uint64) ([]byte, error) {
	if off > a.size || n > a.size-off {
		return nil, fmt.Errorf("tiles: %s: %d bytes at %d past the end of the file: %w", what, n, off, io.ErrUnexpectedEOF)
	}
	b := make([]byte, n)
	if _, err := a.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("tiles: %s: %w", what, err)
	}
	return b, nil
}

func (a *Archive) section(off, n uint64, comp uint8) ([]byte, error) {
	if n > maxSection {
		return nil, fmt.Errorf("tiles: section of %d bytes", n)
	}
	b, err := a.read("read", off, n)
	if err != nil {
		return nil, err
	}
	return decompress(b, comp)
}

func decompress(b []byte, comp uint8) ([]byte, error) {
	switch comp {
	case compressionNone, compressionUnknown:
		return b, nil
	case compressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("tiles: gzip: %w", err)
		}
		defer zr.Close()
		return io.ReadAll(io.LimitReader(zr, maxDecompressed))
	}
	return nil, fmt.Errorf("tiles: compression %d not supported", comp)
}

// Tile returns the stored bytes of a tile (compressed as the archive's
// TileCompression says); ok is false when the archive has no such tile.
func (a *Archive) Tile(z uint8, x, y uint32) ([]byte, bool, error) {
	if z < a.Header.MinZoom || z > a.Header.MaxZoom || x >= 1<<z || y >= 1<<z {
		return nil, false, nil
	}
	id := ZxyToID(z, x, y)
	dir := a.root
	for depth := 0; depth < maxDepth; depth++ {
		e, ok := find(dir, id)
		if !ok {
			return nil, false, nil
		}
		if e.runLength > 0 {
			b, err := a.read("read tile", a.Header.TileDataOffset+e.offset, uint64(e.length))
			if err != nil {
				return nil, false, err
			}
			return b, true, nil
		}
		leaf, err := a.leaf(e)
		if err != nil {
			return nil, false, err
		}
		dir = leaf
	}
	return nil, false, nil
}

// leaf returns the leaf directory e points to, parsed once and cached.
// Two goroutines missing the cache together both parse it; the second
// store replaces the first with an equal directory.
func (a *Archive) leaf(e entry) ([]entry, error) {
	a.mu.Lock()
	leaf, cached := a.leaves[e.offset]
	a.mu.Unlock()
	if cached {
		return leaf, nil
	}
	b, err := a.section(a.Header.LeafOffset+e.offset, uint64(e.length), a.Header.InternalCompression)
	if err != nil {
		return nil, err
	}
	if leaf, err = parseDirectory(b); err != nil {
		return nil, err
	}
	a.mu.Lock()
	if len(a.leaves) >= maxLeaves {
		a.leaves = map[uint64][]entry{}
	}
	a.leaves[e.offset] = leaf
	a.mu.Unlock()
	return leaf, nil
}
