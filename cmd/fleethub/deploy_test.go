package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeploySettingsAreFlags reads the compose file and the Kubernetes
// manifests: every FLEETHUB_ variable they set must be a serve flag's
// environment name, so a renamed flag cannot leave a deployment running
// on a default it meant to change.
func TestDeploySettingsAreFlags(t *testing.T) {
	fs, _ := serveFlags(io.Discard)
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	files, _ := filepath.Glob("../../deploy/kubernetes/*.yaml")
	compose, _ := filepath.Glob("../../deploy/docker-compose*.yml")
	files = append(files, compose...)
	setting := regexp.MustCompile(`FLEETHUB_[A-Z_]+`)
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue // comments may name what they like
			}
			for _, name := range setting.FindAllString(line, -1) {
				seen++
				if !known[name] {
					t.Errorf("%s sets %s, which is no serve flag (flags read FLEETHUB_<FLAG>)", f, name)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatalf("no FLEETHUB_ setting found in %s", strings.Join(files, ", "))
	}
}
