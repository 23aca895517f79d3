package routing

import (
	"strconv"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/routing"
)

// avoidSet reads a matrix request's avoid list (tolls, highways,
// ferries); an unknown value is named in bad as avoid[i].
func avoidSet(names []string, bad map[string]string) routing.Avoid {
	var a routing.Avoid
	for i, n := range names {
		k, ok := routing.ParseAvoid(n)
		if !ok {
			bad["avoid["+strconv.Itoa(i)+"]"] = enum.Refusal(routing.AvoidNames()...)
			continue
		}
		a |= k
	}
	return a
}
