// Command manifests checks the deployment files under deploy/ offline:
// the compose file against the Compose specification's schema (embedded in
// compose-go, no network), every Kubernetes document against the API's
// own types with unknown fields refused, and the Grafana dashboard as
// JSON whose panels query metrics. Beyond the schemas it checks the shape
// the operations guide promises: three fleethub nodes, readiness on
// /readyz and liveness on /healthz, selectors that match their pods, and
// services that point at a named port.
//
//	go run . ../../deploy
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

func main() {
	dir := "deploy"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	var problems []string
	report := func(err error) {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	report(checkCompose(filepath.Join(dir, "docker-compose.yml")))
	// the TLS overlay is loaded over the compose file, as its header says
	report(checkCompose(filepath.Join(dir, "docker-compose.yml"), filepath.Join(dir, "docker-compose.tls.yml")))
	files, _ := filepath.Glob(filepath.Join(dir, "kubernetes", "*.yaml"))
	if len(files) == 0 {
		report(fmt.Errorf("%s/kubernetes: no manifests", dir))
	}
	var objs []object
	for _, f := range files {
		o, err := readKubernetes(f)
		report(err)
		objs = append(objs, o...)
	}
	report(checkShape(objs))
	report(checkDashboard(filepath.Join(dir, "grafana", "fleethub.json")))
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "manifests:", p)
		}
		os.Exit(1)
	}
	fmt.Printf("manifests: compose, %d Kubernetes objects and the dashboard are valid\n", len(objs))
}

// checkCompose loads the compose file as docker compose would, which
// validates it against the Compose specification's JSON schema.
func checkCompose(paths ...string) error {
	path := strings.Join(paths, " + ")
	opts, err := cli.NewProjectOptions(paths, cli.WithName("fleethub"), cli.WithResolvedPaths(true))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	nodes := 0
	for name, s := range p.Services {
		if !strings.HasPrefix(name, "fleethub") {
			continue
		}
		nodes++
		for _, env := range []string{"FLEETHUB_DATABASE_URL", "FLEETHUB_REDIS_URL", "FLEETHUB_KAFKA_BROKERS"} {
			if v := s.Environment[env]; v == nil || *v == "" {
				return fmt.Errorf("%s: service %s has no %s", path, name, env)
			}
		}
		for _, dep := range []string{"postgres", "redis", "kafka"} {
			if _, ok := s.DependsOn[dep]; !ok {
				return fmt.Errorf("%s: service %s does not depend on %s", path, name, dep)
			}
		}
	}
	if nodes != 3 {
		return fmt.Errorf("%s: %d fleethub services, want 3", path, nodes)
	}
	return nil
}

// object is one Kubernetes document, decoded into its API type.
type object struct {
	file, kind, name string
	v                any
}

var docSplit = regexp.MustCompile(`(?m)^---\s*$`)

// readKubernetes decodes every document of path into the type its kind
// names, refusing unknown fields and unknown kinds.
func readKubernetes(path string) ([]object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []object
	var errs []error
	for i, doc := range docSplit.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			errs = append(errs, fmt.Errorf("%s document %d: %w", path, i+1, err))
			continue
		}
		var v any
		switch head.APIVersion + " " + head.Kind {
		case "v1 Secret":
			v = &corev1.Secret{}
		case "v1 Service":
			v = &corev1.Service{}
		case "v1 ConfigMap":
			v = &corev1.ConfigMap{}
		case "apps/v1 Deployment":
			v = &appsv1.Deployment{}
		case "apps/v1 StatefulSet":
			v = &appsv1.StatefulSet{}
		case "networking.k8s.io/v1 Ingress":
			v = &networkingv1.Ingress{}
		case "policy/v1 PodDisruptionBudget":
			v = &policyv1.PodDisruptionBudget{}
		default:
			errs = append(errs, fmt.Errorf("%s document %d: unknown kind %q %q", path, i+1, head.APIVersion, head.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
			errs = append(errs, fmt.Errorf("%s document %d (%s): %w", path, i+1, head.Kind, err))
			continue
		}
		name := ""
		if m, ok := v.(interface{ GetName() string }); ok {
			name = m.GetName()
		}
		if name == "" {
			errs = append(errs, fmt.Errorf("%s document %d (%s): no metadata.name", path, i+1, head.Kind))
		}
		out = append(out, object{file: path, kind: head.Kind, name: name, v: v})
	}
	return out, errors.Join(errs...)
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// checkShape checks what the API's types cannot: every workload's
// selector matches its pod labels and every container names an image;
// every service selects some workload's pods on a port it has; the
// fleethub Deployment runs three replicas probed on /readyz and /healthz.
func checkShape(objs []object) error {
	var errs []error
	type pods struct {
		name   string
		labels map[string]string
		ports  map[string]bool
	}
	var workloads []pods
	workload := func(o object, sel map[string]string, tpl corev1.PodTemplateSpec) {
		if !labels.SelectorFromSet(sel).Matches(labels.Set(tpl.Labels)) || len(sel) == 0 {
			errs = append(errs, fmt.Errorf("%s: %s %s: selector %v does not match its pods' labels %v", o.file, o.kind, o.name, sel, tpl.Labels))
		}
		ports := map[string]bool{}
		for _, c := range tpl.Spec.Containers {
			if c.Image == "" {
				errs = append(errs, fmt.Errorf("%s: %s %s: container %q has no image", o.file, o.kind, o.name, c.Name))
			}
			for _, p := range c.Ports {
				ports[p.Name] = true
				ports[fmt.Sprint(p.ContainerPort)] = true
			}
		}
		workloads = append(workloads, pods{o.name, tpl.Labels, ports})
	}
	var fleethub *appsv1.Deployment
	for _, o := range objs {
		switch v := o.v.(type) {
		case *appsv1.Deployment:
			if v.Spec.Selector == nil {
				errs = append(errs, fmt.Errorf("%s: Deployment %s has no selector", o.file, o.name))
				continue
			}
			workload(o, v.Spec.Selector.MatchLabels, v.Spec.Template)
			if o.name == "fleethub" {
				fleethub = v
			}
		case *appsv1.StatefulSet:
			if v.Spec.Selector == nil {
				errs = append(errs, fmt.Errorf("%s: StatefulSet %s has no selector", o.file, o.name))
				continue
			}
			workload(o, v.Spec.Selector.MatchLabels, v.Spec.Template)
		}
	}
	for _, o := range objs {
		s, ok := o.v.(*corev1.Service)
		if !ok {
			continue
		}
		found := false
		for _, w := range workloads {
			if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.labels)) {
				found = true
				for _, p := range s.Spec.Ports {
					if t := p.TargetPort.String(); t != "0" && !w.ports[t] {
						errs = append(errs, fmt.Errorf("%s: Service %s: target port %s is not a port of %s", o.file, o.name, t, w.name))
					}
				}
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s: Service %s selects no workload's pods", o.file, o.name))
		}
	}
	errs = append(errs, checkIngresses(objs)...)
	switch {
	case fleethub == nil:
		errs = append(errs, errors.New("no Deployment named fleethub"))
	case fleethub.Spec.Replicas == nil || *fleethub.Spec.Replicas != 3:
		errs = append(errs, errors.New("deployment fleethub: want 3 replicas"))
	default:
		for _, c := range fleethub.Spec.Template.Spec.Containers {
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				errs = append(errs, fmt.Errorf("deployment fleethub: container %s: readiness is not GET /readyz", c.Name))
			}
			if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				errs = append(errs, fmt.Errorf("deployment fleethub: container %s: liveness is not GET /healthz", c.Name))
			}
		}
	}
	return errors.Join(errs...)
}

// checkDashboard reads the Grafana dashboard: JSON with a title and
// panels, each with at least one query over a fleethub metric.
func checkDashboard(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d.Title == "" || len(d.Panels) == 0 {
		return fmt.Errorf("%s: a dashboard needs a title and panels", path)
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		ok := false
		for _, t := range p.Targets {
			if strings.Contains(t.Expr, "fleethub_") || strings.Contains(t.Expr, "go_") || strings.Contains(t.Expr, "process_") {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("%s: panel %q queries no fleethub metric", path, p.Title)
		}
	}
	return nil
}

// checkIngresses: every ingress backend names a Service of the manifests
// and a port that Service has.
func checkIngresses(objs []object) []error {
	services := map[string]*corev1.Service{}
	for _, o := range objs {
		if s, ok := o.v.(*corev1.Service); ok {
			services[o.name] = s
		}
	}
	var errs []error
	for _, o := range objs {
		ing, ok := o.v.(*networkingv1.Ingress)
		if !ok {
			continue
		}
		for _, r := range ing.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				if b == nil {
					errs = append(errs, fmt.Errorf("%s: Ingress %s: path %s has no service backend", o.file, o.name, p.Path))
					continue
				}
				s := services[b.Name]
				if s == nil {
					errs = append(errs, fmt.Errorf("%s: Ingress %s: no Service %s", o.file, o.name, b.Name))
					continue
				}
				found := false
				for _, sp := range s.Spec.Ports {
					found = found || (b.Port.Name != "" && sp.Name == b.Port.Name) || (b.Port.Number != 0 && sp.Port == b.Port.Number)
				}
				if !found {
					errs = append(errs, fmt.Errorf("%s: Ingress %s: Service %s has no port %s%d", o.file, o.name, b.Name, b.Port.Name, b.Port.Number))
				}
			}
		}
	}
	return errs
}
