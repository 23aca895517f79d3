package vrp

// Weights are GoalWeighted's shares of driving time, fuel and cost; only
// their ratios count (arcCost divides by their sum).
type Weights struct{ Time, Fuel, Cost float64 }

// The reference kilometre that makes time, fuel and cost comparable in
// GoalWeighted: one kilometre at SpeedKmh in a vehicle of DefaultCosts
// takes RefMinutes (1.5), burns RefLitres (0.12) and costs RefUSD (0.12
// L at 1.05 USD and 1.5 minutes at 25 USD an hour: 0.751).
const (
	RefMinutes = 60 / SpeedKmh
	RefLitres  = FuelPerKm
	RefUSD     = FuelPerKm*FuelPrice + RefMinutes/60*DriverPerHour
)

// tie is the share of a secondary measure that breaks ties between arcs
// of the same price under a goal (driving minutes under GoalDistance,
// kilometres under the others).
const tie = 0.001

// linear is the goal's price of vehicle c's arcs as perKm × km +
// perMinute × minutes: every goal is linear in the two.
func (p *Problem) linear(c Costs) (perKm, perMinute float64) {
	switch p.Goal {
	case GoalTime:
		return tie, 1
	case GoalCost:
		return c.FuelPerKm*FuelPrice + c.PerKm, c.PerHour / 60
	case GoalFuel:
		return c.FuelPerKm + tie*RefLitres, 0
	case GoalWeighted:
		w := p.Weights
		sum := w.Time + w.Fuel + w.Cost
		if !(sum > 0) {
			return 1, tie
		}
		perKm = (w.Fuel*c.FuelPerKm/RefLitres+w.Cost*(c.FuelPerKm*FuelPrice+c.PerKm)/RefUSD)/sum + tie
		perMinute = (w.Time/RefMinutes + w.Cost*c.PerHour/60/RefUSD) / sum
		return perKm, perMinute
	}
	return 1, tie
}

// arcCost is the goal's price of vehicle c's driving km kilometres in
// minutes. Distance, time and cost keep the arithmetic they had before
// the other goals, so that their plans repeat to the bit.
func (p *Problem) arcCost(c Costs, km, minutes float64) float64 {
	switch p.Goal {
	case GoalDistance:
		return km + tie*minutes
	case GoalTime:
		return minutes + tie*km
	case GoalCost:
		return km*c.FuelPerKm*FuelPrice + minutes/60*c.PerHour + km*c.PerKm
	}
	a, b := p.linear(c)
	return a*km + b*minutes
}

// MinutePrice is what a minute of driving at SpeedKmh costs a vehicle of
// DefaultCosts under p's goal: the unit in which a caller prices Balance,
// Quality and OverloadPrice.
func (p *Problem) MinutePrice() float64 {
	return p.arcCost(DefaultCosts(), SpeedKmh/60, 1)
}

// QualityWeight is the weight of a stop of priority pr (0 to 3) in the
// service-quality term: 1, 2, 4, 8.
func QualityWeight(pr int) float64 { return float64(int(1) << min(max(pr, 0), 3)) }

// price is a vehicle's cost model over a route: fuel litres, kilometres
// and route minutes in USD.
func (c Costs) price(fuel, km, minutes float64) float64 {
	return fuel*FuelPrice + minutes/60*c.PerHour + km*c.PerKm
}
