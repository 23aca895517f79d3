package mapmatch

import "math"

// A device's course over the ground in the emission.
//
// Where a point carries the course its device measured, moving, a
// candidate road is likelier the nearer its direction at the candidate's
// place (either way along a two-way road, its own way along a one-way)
// lies to that course: a Gaussian of the angle between them, sd
// headingSigma, mixed with a uniform share headingOutlier for the
// courses that are wrong (a receiver's course swings in a turn and
// between buildings), so that a wrong course costs a candidate at most
// about 3.4 in log-likelihood (the emission's distance term loses as
// much at 2.6 sigmas). It tells the arms of a junction and a cross street
// from the road travelled, which the fix's place alone often cannot.

// headingSpeed (m/s) is the least measured speed at which a point's
// course is read.
const headingSpeed = 3.0

// headingSigma (radians, 20°) and headingOutlier are the course's
// likelihood: see above.
const (
	headingSigma   = 20 * math.Pi / 180
	headingOutlier = 0.2
)

// headingOf is point p's course in radians, and whether it is read.
func headingOf(p Point) (float64, bool) {
	if !p.HasHeading || !p.HasSpeed || !(p.Speed >= headingSpeed) || math.IsNaN(p.Heading) || math.IsInf(p.Heading, 0) {
		return 0, false
	}
	return p.Heading * math.Pi / 180, true
}

// headingScore is the log-likelihood of course h (radians clockwise from
// north) on candidate c, relative to a candidate whose direction is h.
func (n *network) headingScore(c *candidate, h float64) float64 {
	k := c.seg
	dx, dy := n.x[k+1]-n.x[k], n.y[k+1]-n.y[k]
	if dx == 0 && dy == 0 {
		return 0
	}
	b := math.Atan2(dx, dy) // the segment's bearing, forward
	d := math.Pi
	if n.fwd[c.edge] {
		d = min(d, angleBetween(h, b))
	}
	if n.bwd[c.edge] {
		d = min(d, angleBetween(h, b+math.Pi))
	}
	return headingLog(d) - headingPeak
}

// headingPeak is headingLog(0): the likelihood of a course along the
// road.
var headingPeak = headingLog(0)

// headingLog is the log of the course's likelihood at d radians from the
// road's direction.
func headingLog(d float64) float64 {
	z := d / headingSigma
	g := math.Exp(-0.5*z*z) / (headingSigma * math.Sqrt(2*math.Pi))
	return math.Log((1-headingOutlier)*g + headingOutlier/(2*math.Pi))
}

// angleBetween is the angle between directions a and b, 0 to π.
func angleBetween(a, b float64) float64 {
	d := math.Mod(math.Abs(a-b), 2*math.Pi)
	if d > math.Pi {
		d = 2*math.Pi - d
	}
	return d
}
