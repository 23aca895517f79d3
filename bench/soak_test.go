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

// TestSoakShort is the soak in two minutes: the same phases and faults as
// `fleethub-bench soak`, asserting that nothing acknowledged is lost. It
// runs only with FLEETHUB_SOAK=1 (it takes about three minutes, so it is
// not part of CI), on the servers of FLEETHUB_TEST_REDIS_URL and
// FLEETHUB_TEST_DATABASE_URL.
func TestSoakShort(t *testing.T) {
	if os.Getenv("FLEETHUB_SOAK") != "1" {
		t.Skip("FLEETHUB_SOAK=1 runs the two-minute soak")
	}
	redisURL, dbURL := os.Getenv("FLEETHUB_TEST_REDIS_URL"), os.Getenv("FLEETHUB_TEST_DATABASE_URL")
	if redisURL == "" || dbURL == "" {
		t.Fatal("the soak needs FLEETHUB_TEST_REDIS_URL and FLEETHUB_TEST_DATABASE_URL")
	}
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
		RedisURL: redisURL, DatabaseURL: dbURL, Duration: 2 * time.Minute, Rate: 200, Dir: filepath.Join(dir, "soak"), Log: &log})
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, log.String())
	}
	var report strings.Builder
	res.Print(&report)
	t.Log("\n" + report.String())
	for _, p := range res.Phases {
		for i, lost := range p.Lost {
			if lost > 0 {
				t.Errorf("%s: sink %d lost %d acknowledged events", p.Name, i, lost)
			}
		}
	}
	if first, last := res.Phases[0], res.Phases[len(res.Phases)-1]; first.Acked == 0 || last.Acked == 0 {
		t.Errorf("no events acknowledged without a fault: %d before, %d after", first.Acked, last.Acked)
	}
}
