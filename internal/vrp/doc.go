// Package vrp is the route optimizer: a solver of the vehicle routing
// problem with capacities, time windows, shifts and route limits
// (VRPTW), the road and cost models it plans with, the timing and pricing
// of its answer (Plan), and a reader of Solomon's benchmark instances
// (ParseSolomon). It holds no HTTP: api/optimization decodes requests into
// a Problem and encodes a Plan.
//
// # Method
//
// Solve inserts the stops in priority order, then by deadline, each at
// the cheapest feasible position of any vehicle (capacity in weight,
// volume and packages; time windows with waiting allowed; the shift end
// including the return; the route limits). Relocate moves (a stop to
// another position or vehicle) and 2-opt reversals inside a route then
// run until none improves or the time budget has passed. The objective is
// distance, with time as a tie breaker (Schedule.Km + 0.001 Minutes).
// A stop no vehicle can take is reported with the constraint that refused
// it (Reason).
//
// Travel is the great-circle distance of internal/geo lengthened by
// Detour (1.3) and driven at SpeedKmh (40 km/h); road distances from the
// routing graph are not used yet. A Planar problem takes coordinates as
// plane units and travel time as equal to distance, the convention of
// the Solomon benchmark. Plan prices fuel at 12 L/100 km and 1.05 USD a
// litre and driver time at 25 USD an hour.
//
// Every candidate move is evaluated from scratch (Eval walks the route),
// which keeps the solver short and obviously right at the price of
// allocations: BenchmarkSolve takes the 12-customer fixture to its local
// optimum in 0.22 ms (1,179 allocations) and Solomon's C101 (100
// customers, 25 vehicles) in 16.5 ms (125,713 allocations, 8.4 MB), on a
// busy 2-vCPU AMD EPYC VM. Against the best-known solutions the plans are
// +4 % to +20 % longer (docs/optimization.md).
//
// # Concurrency
//
// A Problem is only read by Eval, Solve and Plan, so any number of them
// may run at once on the same Problem as long as nobody changes it
// meanwhile. Solve runs in the caller's goroutine and starts none; it is
// CPU-bound, and returns after the insertion phase plus at most about its
// budget (the clock is read between moves, and only for the budget).
// Instances and Plans are values owned by the caller.
package vrp
