package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/api/conformance"
)

// TestOpenAPIDescribesEveryRoute fails when a routed endpoint is missing
// from /v1/openapi.json (a HEAD by its GET) or answers with a status or
// shape the document does not describe, with or without its key and with
// a query parameter it does not take.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("GET", "/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi: %d", r.Status)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("version %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	for method, list := range n.app.server.RouterList() {
		for _, p := range list {
			// HEAD is implied by GET, as HTTP has it, and not listed
			// (docs/api.md): a routed HEAD is documented by its GET
			op := method
			if op == "HEAD" {
				op = "GET"
			}
			item, ok := paths[p].(map[string]any)
			if !ok || item[strings.ToLower(op)] == nil {
				t.Errorf("routed %s %s is not in the OpenAPI document", method, p)
			}
		}
	}
	for p, item := range paths {
		for method, op := range item.(map[string]any) {
			url := fillPath(p)
			var body any
			if o := op.(map[string]any); o["requestBody"] != nil {
				body = map[string]any{}
			}
			k := key
			if o := op.(map[string]any); o["security"] != nil && len(o["security"].([]any)) == 0 {
				k = ""
			}
			res := n.do(strings.ToUpper(method), url, k, body)
			if strings.Contains(url, "/ws") && res.Status < 300 {
				continue
			}
			checkResponse(t, doc, op.(map[string]any), method, p, res)
			// every keyed route also documents its auth failure
			if k != "" {
				checkResponse(t, doc, op.(map[string]any), method, p, n.do(strings.ToUpper(method), url, "", body))
			}
			// and every route its answer to a query parameter it does not take
			if res := n.do(strings.ToUpper(method), url+"?zz_unknown=1", k, body); !strings.Contains(url, "/ws") || res.Status >= 300 {
				checkResponse(t, doc, op.(map[string]any), method, p, res)
			}
		}
	}
}

func fillPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '{' {
			j := strings.IndexByte(p[i:], '}')
			b.WriteString("1")
			i += j
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func checkResponse(t *testing.T, doc, op map[string]any, method, path string, res resp) {
	t.Helper()
	responses := op["responses"].(map[string]any)
	st := fmt.Sprint(res.Status)
	spec, ok := responses[st].(map[string]any)
	if !ok {
		t.Errorf("%s %s answered %d, which the document does not list: %.300s", method, path, res.Status, res.Body)
		return
	}
	// the headers the document names are sent: the key is charged on
	// every answer here but a 401 and a 429 for the failed
	// authentications of the calls without a key, which has Retry-After
	for name := range spec["headers"].(map[string]any) {
		if res.Status == 429 && strings.HasPrefix(name, "X-RateLimit-") {
			continue
		}
		if res.Header.Get(name) == "" {
			t.Errorf("%s %s %d: header %s named by the document, not sent", method, path, res.Status, name)
		}
	}
	content, _ := spec["content"].(map[string]any)
	js, ok := content["application/json"].(map[string]any)
	if !ok {
		return
	}
	var v any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Errorf("%s %s %d: body is not JSON: %v", method, path, res.Status, err)
		return
	}
	if err := conformance.Validate(doc, js["schema"].(map[string]any), v); err != nil {
		t.Errorf("%s %s %d: %v\nbody: %.500s", method, path, res.Status, err, res.Body)
	}
}
