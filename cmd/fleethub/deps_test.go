package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerDependencies keeps the load generators and the test broker out
// of the server binary: they build as cmd/fleethub-bench. .ci/deps-check
// holds the same rule.
func TestServerDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{"github.com/twmb/franz-go", "github.com/fleethub/fleethub/bench"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, bad := range forbidden {
			if pkg == bad || strings.HasPrefix(pkg, bad+"/") {
				t.Errorf("cmd/fleethub depends on %s", pkg)
			}
		}
	}
}
