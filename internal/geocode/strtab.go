package geocode

import (
	"sort"
	"strings"
)

// strtab is a table of strings in one allocation: string i is
// data[off[i]:off[i+1]]. The vocabulary, the house-number keys and the
// ZIP codes are sorted tables, so that an ID is a position, a prefix is a
// range of IDs and the table is its own trie (see fuzzy).
type strtab struct {
	data string
	off  []uint32 // len n+1
}

func newStrtab(ss []string) strtab {
	var b strings.Builder
	off := make([]uint32, 0, len(ss)+1)
	off = append(off, 0)
	for _, s := range ss {
		b.WriteString(s)
		off = append(off, uint32(b.Len()))
	}
	return strtab{data: b.String(), off: off}
}

func (t *strtab) len() int {
	if len(t.off) == 0 {
		return 0
	}
	return len(t.off) - 1
}

func (t *strtab) at(i int) string { return t.data[t.off[i]:t.off[i+1]] }

// find is the position of s in a sorted table.
func (t *strtab) find(s string) (int, bool) {
	n := t.len()
	i := sort.Search(n, func(i int) bool { return t.at(i) >= s })
	return i, i < n && t.at(i) == s
}

// prefixRange is the range [lo, hi) of a sorted table's strings that begin
// with p.
func (t *strtab) prefixRange(p string) (int, int) {
	lo, _ := t.find(p)
	n := t.len()
	hi := lo + sort.Search(n-lo, func(k int) bool { return !strings.HasPrefix(t.at(lo+k), p) })
	return lo, hi
}

// maxFuzzyLen bounds the query words fuzzy matching considers.
const maxFuzzyLen = 40

// fuzzy calls fn for every string of the sorted table within maxd edits
// of q, in the optimal string alignment distance (Damerau–Levenshtein
// where a transposition of neighbours is one edit). The sorted table is
// walked as a trie: rows of the edit matrix are kept for the prefix the
// next string shares with the previous one, and a whole block of strings
// sharing a prefix is skipped as soon as that prefix is more than maxd
// edits from every prefix of q. scratch is reused between calls.
func (t *strtab) fuzzy(q string, maxd int, scratch *[]uint8, fn func(i, d int)) {
	m := len(q)
	if m == 0 || m > maxFuzzyLen {
		return
	}
	stride := m + 1
	depth := m + maxd // rows past this depth cannot end within maxd
	need := (depth + 1) * stride
	if cap(*scratch) < need {
		*scratch = make([]uint8, need)
	}
	rows := (*scratch)[:need]
	for j := 0; j <= m; j++ {
		rows[j] = uint8(j)
	}
	prev, valid := "", 0
	n := t.len()
	for i := 0; i < n; {
		term := t.at(i)
		l := 0
		for l < valid && l < len(term) && prev[l] == term[l] {
			l++
		}
		limit := min(len(term), depth)
		pruned := 0
		for d := l + 1; d <= limit; d++ {
			cur, up := rows[d*stride:(d+1)*stride], rows[(d-1)*stride:d*stride]
			c := term[d-1]
			cur[0] = uint8(d)
			lo := cur[0]
			for j := 1; j <= m; j++ {
				v := up[j] + 1
				if x := cur[j-1] + 1; x < v {
					v = x
				}
				x := up[j-1]
				if q[j-1] != c {
					x++
				}
				if x < v {
					v = x
				}
				if d > 1 && j > 1 && q[j-1] == term[d-2] && q[j-2] == c {
					if x := rows[(d-2)*stride+j-2] + 1; x < v {
						v = x
					}
				}
				cur[j] = v
				if v < lo {
					lo = v
				}
			}
			if int(lo) > maxd {
				pruned = d
				break
			}
		}
		prev = term
		if pruned > 0 {
			valid = pruned - 1
			i = t.blockEnd(i, term[:pruned])
			continue
		}
		valid = limit
		if len(term) <= depth {
			if d := int(rows[len(term)*stride+m]); d <= maxd {
				fn(i, d)
			}
		}
		i++
	}
}

// blockEnd is the first position after i whose string does not begin with
// p, where the string at i does. Blocks are mostly short, so it gallops
// from i before it bisects.
func (t *strtab) blockEnd(i int, p string) int {
	n := t.len()
	lo, step := i, 1 // the string at lo has the prefix
	for lo+step < n && strings.HasPrefix(t.at(lo+step), p) {
		lo += step
		step *= 2
	}
	hi := min(lo+step, n) // the string at hi, if any, has not
	return lo + 1 + sort.Search(hi-lo-1, func(k int) bool { return !strings.HasPrefix(t.at(lo+1+k), p) })
}

// osaWithin is the optimal string alignment distance between a and b
// when it is at most maxd, else maxd+1. Strings longer than maxFuzzyLen
// are maxd+1 away.
func osaWithin(a, b string, maxd int) int {
	la, lb := len(a), len(b)
	if la-lb > maxd || lb-la > maxd {
		return maxd + 1
	}
	if la > maxFuzzyLen || lb > maxFuzzyLen {
		return maxd + 1
	}
	// every edit changes by at most one the letters a has more of than b
	// and those b has more of than a (a transposition changes neither):
	// most words are turned away here, without the matrix
	var bag [256]int8
	for i := 0; i < la; i++ {
		bag[a[i]]++
	}
	for i := 0; i < lb; i++ {
		bag[b[i]]--
	}
	more, fewer := 0, 0
	for i := 0; i < la; i++ {
		if c := bag[a[i]]; c > 0 {
			more += int(c)
			bag[a[i]] = 0
		}
	}
	for i := 0; i < lb; i++ {
		if c := bag[b[i]]; c < 0 {
			fewer -= int(c)
			bag[b[i]] = 0
		}
	}
	if more > maxd || fewer > maxd {
		return maxd + 1
	}
	var rows [3][maxFuzzyLen + 1]uint8
	pp, p, c := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= lb; j++ {
		p[j] = uint8(j)
	}
	for i := 1; i <= la; i++ {
		c[0] = uint8(i)
		lo := c[0]
		for j := 1; j <= lb; j++ {
			v := p[j] + 1
			if x := c[j-1] + 1; x < v {
				v = x
			}
			x := p[j-1]
			if a[i-1] != b[j-1] {
				x++
			}
			if x < v {
				v = x
			}
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				if x := pp[j-2] + 1; x < v {
					v = x
				}
			}
			c[j] = v
			if v < lo {
				lo = v
			}
		}
		if int(lo) > maxd {
			return maxd + 1
		}
		pp, p, c = p, c, pp
	}
	return min(int(p[lb]), maxd+1)
}

// osa is the optimal string alignment distance between a and b, for
// tests and for corrections.
func osa(a, b string) int {
	la, lb := len(a), len(b)
	d := make([][]int, la+1)
	for i := range d {
		d[i] = make([]int, lb+1)
		d[i][0] = i
	}
	for j := 0; j <= lb; j++ {
		d[0][j] = j
	}
	for i := 1; i <= la; i++ {
		for j := 1; j <= lb; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[la][lb]
}
