package bench_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/bench"
)

// TestSoakShort is the soak in two minutes at a tenth of the default rates:
// the same phases and faults as `fleethub-bench soak`, asserting that
// nothing acknowledged is lost (events at every sink, telemetry at its
// subscriber, points in their trips). It runs only with FLEETHUB_SOAK=1
// (it takes about four minutes, so it is not part of CI), on the servers
// of FLEETHUB_TEST_REDIS_URL and FLEETHUB_TEST_DATABASE_URL.
func TestSoakShort(t *testing.T) {
	if os.Getenv("FLEETHUB_SOAK") != "1" {
		t.Skip("FLEETHUB_SOAK=1 runs the two-minute soak")
	}
	redisURL, dbURL := os.Getenv("FLEETHUB_TEST_REDIS_URL"), os.Getenv("FLEETHUB_TEST_DATABASE_URL")
	if redisURL == "" || dbURL == "" {
		t.Fatal("the soak needs FLEETHUB_TEST_REDIS_URL and FLEETHUB_TEST_DATABASE_URL")
	}
	// with a redis-server on the PATH the soak restarts a Redis of its own
	// instead of cutting the shared one's connections
	redisServer, _ := exec.LookPath("redis-server")
	dir := t.TempDir()
	for _, cmd := range []string{"fleethub", "fleethub-bench"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "../cmd/"+cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", cmd, err, out)
		}
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	res, err := bench.Soak(ctx, bench.SoakConfig{Fleethub: filepath.Join(dir, "fleethub"), Broker: filepath.Join(dir, "fleethub-bench"),
		RedisURL: redisURL, RedisServer: redisServer, DatabaseURL: dbURL, Duration: 2 * time.Minute, Rate: 200, PointsRate: 2000, TelemetryRate: 200, Trips: 200,
		Dir: filepath.Join(dir, "soak"), Log: &log})
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	var report strings.Builder
	res.Print(&report)
	t.Log("\n" + report.String())
	for _, p := range res.Phases {
		for _, s := range p.Sinks {
			if s.Lost > 0 {
				t.Errorf("%s: %s lost %d acknowledged messages", p.Name, s.Sink, s.Lost)
			}
		}
	}
	if res.PointsLost > 0 {
		t.Errorf("%d acknowledged points are not in their trips", res.PointsLost)
	}
	first, last := res.Phases[0], res.Phases[len(res.Phases)-1]
	for _, p := range []bench.SoakPhase{first, last} {
		if p.Events.Acked == 0 || p.Points.Acked == 0 || p.Telemetry.Acked == 0 {
			t.Errorf("%s: nothing acknowledged of some kind: events %d, points %d, telemetry %d", p.Name, p.Events.Acked, p.Points.Acked, p.Telemetry.Acked)
		}
	}
}
