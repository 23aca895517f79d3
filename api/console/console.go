// Package console serves the dispatch console: a single page, its script
// and style (web/) and the vendored map library (dist/, written by `make
// console` from the pinned npm package), all embedded in the binary so the
// console works without any network beyond the server itself.
//
// The files need no API key: the page asks for one and sends it with its
// own API calls. Every file is answered with a Content-Security-Policy that
// allows scripts, styles, images and connections from the server's own
// origin only, and forbids framing.
//
// A Console holds the files read by New and only reads them afterwards:
// it is safe for concurrent use.
package console

import (
	"embed"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"

	"github.com/fleethub/fleethub/api"
)

//go:embed web dist
var files embed.FS

// Policy is the Content-Security-Policy of every console file.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Console serves the console's files.
type Console struct {
	files map[string]file // by URL path
}

type file struct {
	body  []byte
	ctype string
}

// New reads the embedded files. They are part of the binary, so failing to
// read them is a broken build, and New panics.
func New() *Console {
	c, err := load()
	if err != nil {
		panic("console: embedded files: " + err.Error())
	}
	return c
}

func load() (*Console, error) {
	c := &Console{files: map[string]file{}}
	for _, root := range []string{"web", "dist"} {
		sub, err := fs.Sub(files, root)
		if err != nil {
			return nil, err
		}
		err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(sub, p)
			if err != nil {
				return err
			}
			ct := mime.TypeByExtension(path.Ext(p))
			if ct == "" || path.Base(p) == "LICENSE" {
				ct = "text/plain; charset=utf-8"
			}
			c.files["/console/"+p] = file{body: b, ctype: ct}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if idx, ok := c.files["/console/index.html"]; ok {
		c.files["/console/"] = idx
	}
	return c, nil
}

// Routes are one GET route per file, and the page itself at /console/
// (the router redirects /console there).
func (c *Console) Routes() []*api.Route {
	paths := make([]string, 0, len(c.files))
	for p := range c.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	routes := make([]*api.Route, 0, len(paths))
	for _, p := range paths {
		f := c.files[p]
		ct := f.ctype
		if i := strings.IndexByte(ct, ';'); i >= 0 {
			ct = ct[:i]
		}
		routes = append(routes, &api.Route{Method: "GET", Path: p, Tag: "console", Summary: "Dispatch console file",
			Auth: api.AuthNone, Raw: ct, NoRateLimit: true, Handler: f.serve})
	}
	return routes
}

func (f file) serve(c *api.Ctx) error {
	h := &c.Response.Header
	h.Set("Content-Security-Policy", Policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	c.SetContentType(f.ctype)
	c.SetStatusCode(200)
	c.SetBody(f.body)
	return nil
}
