package vrp

// localityFrom is the matrix size from which the solver renumbers the
// locations so that places near each other have rows and columns near
// each other: the insertion loop reads a stop's row at the locations of
// the routes near it, and on a matrix larger than the processor's cache
// each scattered read is a miss. Below it a matrix fits in the cache.
const localityFrom = 200

// renumber permutes the locations of every travel's matrices, and the
// nodes' locations with them, into the order of a nearest-neighbour
// chain over the locations the nodes use (from the first vehicle's
// start, by the first travel's kilometres, then minutes on a tie), the
// unused locations after them. Every arc keeps its values, so the search
// makes the same choices; only where they lie in memory changes.
func (t *tables) renumber() {
	size := t.size
	if size < localityFrom {
		return
	}
	used := make([]bool, size)
	for _, l := range t.loc {
		used[l] = true
	}
	order := make([]int32, 0, size)
	placed := make([]bool, size)
	tr := &t.tr[0]
	cur := t.loc[t.start[0]]
	for {
		order = append(order, cur)
		placed[cur] = true
		next, best, bestMin := int32(-1), 0.0, 0.0
		row := int(cur) * size
		for l := 0; l < size; l++ {
			if placed[l] || !used[l] {
				continue
			}
			km, mins := tr.km[row+l], tr.minutes[row+l]
			if next < 0 || km < best || (km == best && mins < bestMin) {
				next, best, bestMin = int32(l), km, mins
			}
		}
		if next < 0 {
			break
		}
		cur = next
	}
	for l := 0; l < size; l++ {
		if !placed[l] {
			order = append(order, int32(l))
		}
	}
	newOf := make([]int32, size) // old location → new
	for n, old := range order {
		newOf[old] = int32(n)
	}
	done := map[*float64][]float64{}
	permute := func(m []float64) []float64 {
		if m == nil {
			return nil
		}
		if p, ok := done[&m[0]]; ok {
			return p
		}
		p := make([]float64, len(m))
		for i, oi := range order {
			row, orow := i*size, int(oi)*size
			for j, oj := range order {
				p[row+j] = m[orow+int(oj)]
			}
		}
		done[&m[0]] = p
		return p
	}
	for k := range t.tr {
		x := &t.tr[k]
		x.km, x.minutes, x.cost, x.into = permute(x.km), permute(x.minutes), permute(x.cost), permute(x.into)
	}
	for i, l := range t.loc {
		t.loc[i] = newOf[l]
	}
}
