// Package vrp is the route optimizer: a solver of the vehicle routing
// problem with capacities, time windows, shifts and route limits
// (VRPTW), the road and cost models it plans with, the timing and pricing
// of its answer (Plan), and a reader of Solomon's benchmark instances
// (ParseSolomon). It holds no HTTP: fleet/optimization turns requests into
// a Problem and encodes a Plan.
//
// # Method
//
// Solve follows SISR, "Slack Induction by String Removals" (Christiaens
// and Vanden Berghe, Transportation Science 54(2), 2020):
//
//   - construction: every stop at its cheapest feasible position, most
//     urgent first, the stops left out offered again (up to three
//     times: a blink may skip an idle vehicle's only position);
//   - with MinimizeVehicles, route minimisation: a whole route (the one
//     with fewer stops of two drawn at random) is removed and its stops
//     reinserted by ruin and recreate, half the ruins removing strings
//     from the routes nearest a stop left out rather than a random
//     served one, to make room where it is needed; a candidate replaces
//     the current plan when fewer stops are left out, or when the stops
//     left out were left out less often (an absence counter per stop);
//     when every stop is back the plan is the new best and another route
//     goes, until the fleet bound (capacities against demand) or the
//     worker's share of the search budget;
//   - ruin and recreate under simulated annealing for the rest: the ruin
//     removes strings of consecutive stops (or a string but for a kept
//     run inside it) from routes near a random stop, the recreate
//     reinserts them in a random, demand, far-first or near-first order,
//     each at its cheapest position, skipping positions at a 1 % blink
//     rate (the positions between two skips drawn at once, a geometric
//     variate) and never checking the positions before the first whose
//     next stop's latest start leaves room for the stop's window opening
//     and service (found by bisection, latest starts rising along a
//     route without breaks); a candidate is accepted when it costs less than the current
//     plan plus the temperature times an exponential variate, the
//     temperature falling geometrically over the budget to 0.003 times
//     the mean return trip to a stop; when the best plan has not fallen
//     for 15 % of the annealing's work (and at least 4 million units),
//     up to 95 % of it, the current plan becomes the best one with about
//     30 of its stops taken out by string removals and reinserted (a
//     kick out of a trap). Above 150 stops
//     a stop is first offered only to the routes of its 40 nearest
//     stops (and idle vehicles), and to all routes when none of those
//     takes it or an idle vehicle is the cheapest of them: a route opens
//     only when no route in use takes the stop for less;
//   - a local search on every new best plan of the annealing (polish):
//     relocate (a stop moved next to one of its 30 nearest stops, in its
//     route or another, checked in constant time) and 2-opt* (two routes
//     exchange their tails so that a stop is followed by one of its
//     nearest stops, priced in constant time and rebuilt only when it
//     saves) and or-opt (a string of two or three stops moved into
//     another route beside one of its first stop's nearest stops, the
//     two routes rebuilt only when the arcs say it saves), and, in a
//     pass where none of those saves, SWAP* (Vidal 2022: two routes near
//     each other trade a stop each, each going to the cheapest of its
//     three cheapest feasible places in the other route or to the place
//     the other leaves, priced by the arcs and rebuilt only when they
//     save), until no move saves; a polished plan that saves becomes
//     both the current and the best one;
//   - at the end of each search, a local search over whole
//     neighbourhoods on its best plan (finish): a stretch of a route
//     reversed, a string of one to three stops moved anywhere in its
//     route or another, in order or reversed, and two routes exchanging
//     a stop each, each going to its cheapest place in the other, priced
//     by the arcs and rebuilt only when they save, until no move saves
//     or it has spent 2 % of the search's work beyond it;
//   - after the searches, a crossover of whole plans (crossover.go; HGS,
//     Vidal et al. 2012): a population of the searches' distinct
//     cheapest plans (each search's best plans at its kicks and its best
//     one, up to 4 each, at most 8) breeds children, two plans drawn at
//     random each time: the ordered crossover (OX) of their giant tours
//     (the routes one after the other in a random order; a stretch of
//     one kept in place, the other positions filled in the other's
//     order), split into at most as many routes as the parents have by a
//     shortest path over the tour (Prins's split with a bounded fleet, a
//     stop left out at twice its price from the depot where no run of
//     the tour can serve it), the stops left out inserted again and, if
//     some still find no place, up to 50 ruins around them; a child that
//     serves every stop is polished (the local search above), its routes
//     go into the pool of the set partitioning, and it replaces the
//     dearest plan of the population when cheaper and not in it. Two
//     streams breed at once, each for a tenth of a search's work, taken
//     from the searches' annealings (route minimisation keeps its
//     share), so a Solve's work is the same; it runs only for a fleet of
//     one class of vehicle without breaks, on plans priced by their arcs,
//     when a tenth of the work is at least 5 million units (on long
//     routes as on short ones since 2026-12-02: at the work of a 2 s
//     request on the project's machine, with both searches annealing
//     twice, it lowered R2's and RC2's gap);
//   - after the searches, a set partitioning over the routes they found
//     (recombine, pool.go): each search keeps in a pool every route of
//     its annealings' best plans and every route built by a candidate
//     whose arcs cost at most 1 % more than the best plan's, one per set
//     of stops and class of vehicle, in its cheapest order (counting no
//     work, so the searches are unchanged); on the better search's plan,
//     for every set of up to three of its routes that routes of the two
//     pools lie within, the cheapest partition of their stops into routes
//     of the pools and of the plan is found by a depth-first search
//     (bounded by each stop's lowest price per stop among the routes
//     that hold it) and taken when it saves, until none saves or it has
//     spent 1 % of a search's work beyond it; a plan it changed goes
//     through the final local search again.
//
// Each route keeps, per position, the earliest service start (forward)
// and the latest service start that keeps every later stop and the
// return on time (backward), its load in three dimensions and its
// distance, so that an insertion is checked in constant time (check);
// Eval, which walks a route, is the reference it agrees with. The
// insertion loop reads the arcs into a stop in the stop's row, as a
// column read is a cache miss on a large matrix: their prices from a
// transposed copy (the prices themselves when they are symmetric), their
// minutes and kilometres when those are symmetric; and it checks
// kilometres only under a limit. From localityFrom (200) locations on,
// the matrices are copied with their locations renumbered along a
// nearest-neighbour chain (renumber), so that the places of the routes
// near a stop lie near it in its row: every arc keeps its values and the
// search its choices, but fewer of those reads miss the cache (about a
// fifth less processor time on CVRPLIB's largest instances). A candidate
// that the annealing or route minimisation refuses, and a route that the
// local search builds and refuses, hand their lists and the routes they
// built to the next ones (drop, discard): a refused candidate, most of
// them, allocates next to nothing, and the plans are those of fresh
// allocations. A left-out stop costs more than any
// route (8 times more per priority level), so urgent stops are kept
// before low ones when not all fit, and a stop that fits nowhere is
// reported with the constraint that refused it (Reason).
//
// Capabilities and breaks: a stop's Needs and a vehicle's Has are bit
// sets (the caller's vocabulary); a vehicle serves a stop only when it
// has every bit the stop needs, checked with the capacity before any
// insertion or move (fits, build), and a stop no vehicle has the bits
// for is left out with ReasonCapability. A vehicle's breaks
// (Vehicle.Breaks, each Minutes inside Start–End) are taken in order
// where the vehicle is, after route positions: the route's earliest and
// latest starts hold them (the departure from such a position waits for
// each break's window and lasts the break), a route rebuilt from scratch
// places them where it returns soonest, by dynamic programming over
// positions and breaks taken (rest.go; exact because leaving earlier
// never makes anything later fail), and the constant-time check of an
// insertion where breaks are taken tries the new stop before, after and
// between them. Eval runs the same search over a walked route.
//
// Travel comes from Problem.Matrix when the caller gives one (its own
// routing engine's, or the road graph's), and for a vehicle whose Profile
// names one from its own matrix of Problem.Profiles over the same
// locations (the road costs of its costing): every route is timed,
// measured and priced by its vehicle's matrix, in the constant-time
// checks as in Eval. Without a matrix travel comes from the coordinates:
// the great-circle distance of internal/geo lengthened by Detour (1.3)
// and driven at SpeedKmh (40 km/h), or, when Planar, the Euclidean
// distance with travel time equal to it (the Solomon convention).
//
// # Objective
//
// The goal (Goal) prices each arc by the vehicle's cost model (Costs;
// DefaultCosts is 12 L/100 km and 25 USD an hour): distance, driving
// time, fuel, cost, or Weights of time, fuel and cost each measured
// against a reference kilometre (objective.go). Beyond the arcs a plan
// may be priced for its longest route (Balance), for each stop's minutes
// from its window's opening to its service start by priority (Quality),
// for every route's minutes from shift start to return (Efficiency),
// and for load beyond capacity, allowed up to Overload of it
// (OverloadPrice per unit) (extras.go); the insertion heuristic estimates
// these, the acceptance of every candidate prices them exactly. With
// none of them the arithmetic is the one that pinned plans were made
// with (TestPinnedSolomonPlans). Plan prices every route by its
// vehicle's cost model, fuel at FuelPrice.
//
// # Budget and repeatability
//
// Solve runs Options.Workers searches (2 by default, one per core of the
// machine it was measured on) with different seeds and keeps the best
// plan, recombined with the routes of all of them. The workers take two styles in turn (style): the first spends up
// to half its budget on route minimisation and anneals from 1.2 times
// the mean return trip, the second at most a fifth and from 0.6; the
// first kind wins the vehicle counts of tight instances, the second the
// distance of instances with few long routes. A worker's length is
// work, not time: WorkPerSecond units (an insertion position checked, a
// route visited, a route position rebuilt, a stop copied with a
// candidate) per second of the limit, and at most ItersPerStop
// iterations per stop, so the same seed gives the same routes. Measured
// in CPU time on Solomon's instances (BenchmarkSolomonSet, one seed), a
// core did 33 to 35 million units a second on the project's 2-vCPU
// Intel Xeon VM of 2026-11-29 22:22 to 23:08 UTC, 71.6 million on the
// machine of 21:47 the same evening and about 91 million on an AMD EPYC
// VM before: WorkPerSecond is 86 to 91 % of the slowest, so that the
// work may end within the limit there and well before it on a faster
// machine (through the API about half of Solomon's answers were still
// paced or cut by the clock on that VM nearly idle: docs/performance.md).
// Since machines differ so, the server does not rely on it: MeasureRate
// times a fixed search on this machine, by its thread's processor time
// (the thread's clock, to the nanosecond), and the optimization service
// gives each search a share of that rate (fleet/optimization Calibrate);
// WorkPerSecond is the fallback until then, and where no thread clock
// can be read. Its short runs spend more of their time in the local
// search than a long search does, so it reports less than a Solomon
// search does: 98 against 115 million units a second on an AMD EPYC VM
// on 2026-11-30. Reusing refused routes' buffers made a unit about 8 %
// cheaper in a Solomon search and 11 % in MeasureRate's run, which
// builds and refuses more routes in its local search (78 to 88 million
// units a core-second on 2026-12-02, BenchmarkMeasureRate and
// BenchmarkRuinRecreate measure it).
// On a busy one the clock paces the annealing when it runs more than
// 10 % ahead of the work, the deadline (97 % of the limit) stops a
// worker, and Solution.Cut says the plan may then differ from one run to
// the next. The searches' phases end 3 % of that time before it
// (endShare), so that the final local search and the set partitioning,
// which may spend 2 % and 1 % of the work beyond the budget, still run
// when the clock ends the searches.
//
// # Concurrency
//
// A Problem is only read by Eval, Solve and Plan, so any number of them
// may run at once on the same Problem as long as nobody changes it
// meanwhile. Solve starts its workers and waits for them; they share the
// read-only tables built from the Problem and nothing else. Instances
// and Plans are values owned by the caller.
package vrp
