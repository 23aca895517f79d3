package geocode

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The saved index is one file, addresses-<key>.idx, where key is the
// SHA-256 of the format version and of every input file's content (in
// order): a changed file is a new key, so the index is rebuilt. The file
// is
//
//	"FHGEOIDX" | version uint32 | key [32]byte | sections | CRC-32C uint32
//
// where the sections are the index's tables in a fixed order, each a
// uint64 length then the values, little-endian. The CRC covers everything
// before it. A file that fails the CRC, a bound or an order check is not
// trusted: the index is rebuilt from the input files and saved again.
const (
	savedMagic   = "FHGEOIDX"
	savedVersion = 2 // changes with the layout and with how an index is built from rows
	savedPrefix  = "addresses-"
	savedSuffix  = ".idx"
)

// ErrCorrupt is returned by the saved-index reader for a file it does not
// trust.
var ErrCorrupt = errors.New("geocode: saved index is corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sourceKey is the saved index's key for the input files.
func sourceKey(paths []string) ([32]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d %d\n", savedMagic, savedVersion, len(paths))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return [32]byte{}, fmt.Errorf("geocode: %w", err)
		}
		fh := sha256.New()
		_, err = io.Copy(fh, f)
		f.Close()
		if err != nil {
			return [32]byte{}, fmt.Errorf("geocode: %s: %w", p, err)
		}
		h.Write(fh.Sum(nil))
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k, nil
}

func savedName(key [32]byte) string { return savedPrefix + hex.EncodeToString(key[:12]) + savedSuffix }

// writeSaved writes ix to path through a temporary file renamed into
// place, so a crash never leaves half a file under the name.
func writeSaved(path string, key [32]byte, ix *Index) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".addresses-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(tmp, crc), 1<<20)
	w.WriteString(savedMagic)
	binary.Write(w, binary.LittleEndian, uint32(savedVersion)) //nolint:errcheck // bufio errors surface at Flush
	w.Write(key[:])
	enc := encoder{w: w}
	ix.sections(&enc)
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := binary.Write(tmp, binary.LittleEndian, crc.Sum32()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// readSaved reads a saved index, checking its key, CRC and every table's
// bounds.
func readSaved(data []byte, key [32]byte) (*Index, error) {
	head := len(savedMagic) + 4 + 32
	if len(data) < head+4 || string(data[:len(savedMagic)]) != savedMagic {
		return nil, ErrCorrupt
	}
	if binary.LittleEndian.Uint32(data[len(savedMagic):]) != savedVersion || !bytes.Equal(data[len(savedMagic)+4:head], key[:]) {
		return nil, ErrCorrupt
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, ErrCorrupt
	}
	return decodeSections(body[head:])
}

// decodeSections reads the tables of a saved index and checks them.
func decodeSections(b []byte) (*Index, error) {
	dec := decoder{b: b}
	ix := &Index{}
	ix.sections(&dec)
	if dec.err != nil || len(dec.b) != 0 {
		return nil, ErrCorrupt
	}
	if err := ix.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	ix.derive()
	return ix, nil
}

// encodeSections is the tables of ix as a saved index holds them.
func encodeSections(ix *Index) []byte {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	ix.sections(&encoder{w: w})
	w.Flush() //nolint:errcheck // a bytes.Buffer does not fail
	return buf.Bytes()
}

// coder writes or reads the index's tables; sections calls it on each
// in one order, for both directions.
type coder interface {
	strtab(*strtab)
	u32(*[]uint32)
	i32(*[]int32)
	u8(*[]uint8)
	u64(*[]uint64)
}

func (ix *Index) sections(c coder) {
	c.strtab(&ix.strs)
	c.strtab(&ix.vocab)
	c.u8(&ix.role)
	c.strtab(&ix.nums)
	c.strtab(&ix.zips)
	for _, x := range []*csr{&ix.wordStreets, &ix.wordLocs, &ix.numStreets, &ix.zipLocs, &ix.locWords, &ix.stWords, &ix.cellAddr} {
		c.u32(&x.off)
		c.u32(&x.val)
	}
	for _, x := range []*[]uint32{&ix.locCity, &ix.locState, &ix.locZip, &ix.locStreets, &ix.stName, &ix.stLoc, &ix.stAddr,
		&ix.adNum, &ix.adNumText, &ix.adUnit, &ix.adID} {
		c.u32(x)
	}
	c.u8(&ix.stRoles)
	c.i32(&ix.adLat)
	c.i32(&ix.adLon)
	c.u64(&ix.cells)
}

type encoder struct{ w *bufio.Writer }

func (e *encoder) n(n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	e.w.Write(b[:])
}

func (e *encoder) strtab(t *strtab) {
	e.n(len(t.data))
	e.w.WriteString(t.data)
	e.u32(&t.off)
}

func (e *encoder) u32(v *[]uint32) {
	e.n(len(*v))
	var b [4]byte
	for _, x := range *v {
		binary.LittleEndian.PutUint32(b[:], x)
		e.w.Write(b[:])
	}
}

func (e *encoder) i32(v *[]int32) {
	e.n(len(*v))
	var b [4]byte
	for _, x := range *v {
		binary.LittleEndian.PutUint32(b[:], uint32(x))
		e.w.Write(b[:])
	}
}

func (e *encoder) u8(v *[]uint8) {
	e.n(len(*v))
	e.w.Write(*v)
}

func (e *encoder) u64(v *[]uint64) {
	e.n(len(*v))
	var b [8]byte
	for _, x := range *v {
		binary.LittleEndian.PutUint64(b[:], x)
		e.w.Write(b[:])
	}
}

type decoder struct {
	b   []byte
	err error
}

// n reads a count of elements of size bytes, refusing one longer than
// what is left.
func (d *decoder) n(size int) int {
	if d.err != nil || len(d.b) < 8 {
		d.err = ErrCorrupt
		return 0
	}
	n := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	if n > uint64(len(d.b)/size) {
		d.err = ErrCorrupt
		return 0
	}
	return int(n)
}

func (d *decoder) strtab(t *strtab) {
	n := d.n(1)
	t.data = string(d.b[:n])
	d.b = d.b[n:]
	d.u32(&t.off)
}

func (d *decoder) u32(v *[]uint32) {
	n := d.n(4)
	*v = make([]uint32, n)
	for i := range *v {
		(*v)[i] = binary.LittleEndian.Uint32(d.b[4*i:])
	}
	d.b = d.b[4*n:]
}

func (d *decoder) i32(v *[]int32) {
	n := d.n(4)
	*v = make([]int32, n)
	for i := range *v {
		(*v)[i] = int32(binary.LittleEndian.Uint32(d.b[4*i:]))
	}
	d.b = d.b[4*n:]
}

func (d *decoder) u8(v *[]uint8) {
	n := d.n(1)
	*v = append([]uint8(nil), d.b[:n]...)
	d.b = d.b[n:]
}

func (d *decoder) u64(v *[]uint64) {
	n := d.n(8)
	*v = make([]uint64, n)
	for i := range *v {
		(*v)[i] = binary.LittleEndian.Uint64(d.b[8*i:])
	}
	d.b = d.b[8*n:]
}

// check verifies what queries rely on: every offset and reference in
// bounds, sorted tables sorted.
func (ix *Index) check() error {
	for name, t := range map[string]*strtab{"strings": &ix.strs, "vocabulary": &ix.vocab, "numbers": &ix.nums, "ZIPs": &ix.zips} {
		if err := t.check(name != "strings"); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	nStr, nWord, nLoc, nSt, nAd := uint32(ix.strs.len()), ix.vocab.len(), len(ix.locCity), len(ix.stName), len(ix.adLat)
	if len(ix.role) != nWord || ix.strs.len() == 0 || ix.strs.at(0) != "" {
		return errors.New("roles or strings")
	}
	for _, c := range []struct {
		name       string
		c          *csr
		rows       int
		valueBound int
	}{
		{"word streets", &ix.wordStreets, nWord, nSt}, {"word localities", &ix.wordLocs, nWord, nLoc},
		{"number streets", &ix.numStreets, ix.nums.len(), nSt}, {"ZIP localities", &ix.zipLocs, ix.zips.len(), nLoc},
		{"locality words", &ix.locWords, nLoc, nWord}, {"street words", &ix.stWords, nSt, nWord},
		{"cell addresses", &ix.cellAddr, len(ix.cells), nAd},
	} {
		if err := c.c.check(c.rows, c.valueBound); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if len(ix.locState) != nLoc || len(ix.locZip) != nLoc || len(ix.stLoc) != nSt || len(ix.stRoles) != len(ix.stWords.val) ||
		len(ix.adLon) != nAd || len(ix.adNum) != nAd || len(ix.adNumText) != nAd || len(ix.adUnit) != nAd || len(ix.adID) != nAd {
		return errors.New("table lengths")
	}
	if err := ranges(ix.locStreets, nLoc, nSt); err != nil {
		return fmt.Errorf("locality streets: %w", err)
	}
	if err := ranges(ix.stAddr, nSt, nAd); err != nil {
		return fmt.Errorf("street addresses: %w", err)
	}
	for _, v := range [][]uint32{ix.locCity, ix.locState, ix.locZip, ix.stName, ix.adNumText, ix.adUnit, ix.adID} {
		if !below(v, nStr) {
			return errors.New("string reference out of range")
		}
	}
	if !below(ix.stLoc, uint32(nLoc)) || !below(ix.adNum, uint32(ix.nums.len())) {
		return errors.New("reference out of range")
	}
	for s := range nSt {
		a := ix.adNum[ix.stAddr[s]:ix.stAddr[s+1]]
		for i := 1; i < len(a); i++ {
			if a[i] < a[i-1] {
				return errors.New("a street's numbers out of order")
			}
		}
	}
	for i := range ix.adLat {
		if ix.adLat[i] < -90*coordScale || ix.adLat[i] > 90*coordScale || ix.adLon[i] < -180*coordScale || ix.adLon[i] > 180*coordScale {
			return errors.New("coordinates out of range")
		}
	}
	for i := 1; i < len(ix.cells); i++ {
		if ix.cells[i] <= ix.cells[i-1] {
			return errors.New("grid cells out of order")
		}
	}
	return nil
}

func (t *strtab) check(sorted bool) error {
	if len(t.off) == 0 || t.off[0] != 0 || int(t.off[len(t.off)-1]) != len(t.data) {
		return errors.New("offsets")
	}
	for i := 1; i < len(t.off); i++ {
		if t.off[i] < t.off[i-1] {
			return errors.New("offsets out of order")
		}
		if sorted && i > 1 && t.at(i-1) <= t.at(i-2) {
			return errors.New("strings out of order")
		}
	}
	return nil
}

func (c *csr) check(rows, bound int) error {
	if len(c.off) != rows+1 {
		return errors.New("row count")
	}
	if err := ranges(c.off, rows, len(c.val)); err != nil {
		return err
	}
	if !below(c.val, uint32(bound)) {
		return errors.New("value out of range")
	}
	return nil
}

// ranges checks starts of n ranges over [0, total]: n+1 ascending
// offsets from 0 to total.
func ranges(off []uint32, n, total int) error {
	if len(off) != n+1 || off[0] != 0 || int(off[n]) != total {
		return errors.New("range offsets")
	}
	for i := 1; i <= n; i++ {
		if off[i] < off[i-1] {
			return errors.New("ranges out of order")
		}
	}
	return nil
}

func below(v []uint32, n uint32) bool {
	for _, x := range v {
		if x >= n {
			return false
		}
	}
	return true
}

// removeStale deletes the saved indexes of other keys in dir.
func removeStale(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); n != keep && strings.HasPrefix(n, savedPrefix) && strings.HasSuffix(n, savedSuffix) {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
