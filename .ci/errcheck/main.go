// Command errcheck fails on an error thrown away with the blank
// identifier in the module's non-test code: `_ = f()`, `x, _ := f()`,
// `_, _ = f()` and `var _ = f()`, where the value given to _ is an error
// (its type implements error). The types come from go/types, so a blank
// that takes a bool (`v, _ := m[k]`) or a count is not one. Calls whose
// error cannot be anything but nil, or is of no use to the caller, are
// on the allow-list below, each with its reason.
//
//	go run . ../..
//
// prints each finding as file:line:col and exits 1 if there is any.
package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// allowed is the allow-list: a call whose discarded error is accepted.
// Each entry names the calls it covers and why their error may go.
var allowed = []struct {
	reason string
	match  func(c call) bool
}{
	{"a hash.Hash's Write never returns an error (package hash)",
		func(c call) bool { return c.isWrite() && implements(c.recv, "hash", "Hash") }},
	{"writes to a strings.Builder or bytes.Buffer always return a nil error",
		func(c call) bool { return c.isWrite() && isInMemory(c.recv) }},
	{"fmt.Fprint* into a strings.Builder, bytes.Buffer or hash cannot fail",
		func(c call) bool {
			return c.pkg == "fmt" && strings.HasPrefix(c.name, "Fprint") && c.recv == nil && len(c.args) > 0 &&
				(isInMemory(c.args[0]) || implements(c.args[0], "hash", "Hash"))
		}},
	{"crypto/rand.Read never returns an error (it aborts the program instead, since Go 1.24)",
		func(c call) bool { return c.pkg == "crypto/rand" && c.name == "Read" && c.recv == nil }},
	{"closing a body that was only read (an HTTP response's, a request's): nothing is lost",
		func(c call) bool { return c.name == "Close" && c.recv != nil && isReadCloser(c.recv) }},
	{"draining a body into io.Discard so its connection is reused: a failure only costs the connection",
		func(c call) bool {
			return c.pkg == "io" && c.name == "Copy" && c.recv == nil && c.argIs(0, "io", "Discard")
		}},
	{"json.Marshal of a type holding only strings, bools and integers (in structs, slices, maps, pointers; no float, interface, marshaler or cycle) cannot fail",
		func(c call) bool {
			return c.pkg == "encoding/json" && c.name == "Marshal" && c.recv == nil && len(c.args) == 1 && jsonSafe(c.args[0], map[types.Type]bool{})
		}},
	{"syscall.Madvise is advice: where the kernel refuses it the memory works as ordinary pages",
		func(c call) bool { return c.pkg == "syscall" && c.name == "Madvise" && c.recv == nil }},
	{"syscall.Munmap of a mapping the caller made and unmaps once fails only for an address that is not mapped",
		func(c call) bool { return c.pkg == "syscall" && c.name == "Munmap" && c.recv == nil }},
	{"a deadline on a connection fails only once it is closed, which the next read or write reports",
		func(c call) bool {
			return c.recv != nil && (c.name == "SetDeadline" || c.name == "SetReadDeadline" || c.name == "SetWriteDeadline")
		}},
}

// call is the callee of a call expression, as far as the allow-list
// needs it.
type call struct {
	pkg  string         // the callee's package path ("" for a func value)
	name string         // the function or method name
	recv types.Type     // the receiver expression's type; nil for a function
	args []types.Type   // the arguments' types
	objs []types.Object // the variables or constants the arguments name, if they name one
}

// argIs reports whether argument i is the package-level path.name.
func (c call) argIs(i int, path, name string) bool {
	if i >= len(c.objs) || c.objs[i] == nil || c.objs[i].Pkg() == nil {
		return false
	}
	return c.objs[i].Pkg().Path() == path && c.objs[i].Name() == name
}

func (c call) isWrite() bool {
	switch c.name {
	case "Write", "WriteString", "WriteByte", "WriteRune":
		return c.recv != nil
	}
	return false
}

// implements reports whether t implements the interface path.name, when
// the loaded packages import it.
func implements(t types.Type, path, name string) bool {
	iface := lookupInterface(path, name)
	return t != nil && iface != nil && types.Implements(t, iface)
}

// isInMemory: t is a strings.Builder or bytes.Buffer, or a pointer to
// one.
func isInMemory(t types.Type) bool {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	path, name := n.Obj().Pkg().Path(), n.Obj().Name()
	return (path == "strings" && name == "Builder") || (path == "bytes" && name == "Buffer")
}

// isReadCloser: the receiver's static type is io.ReadCloser itself (an
// http.Response's or http.Request's Body), not merely a type with Read
// and Close.
func isReadCloser(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "io" && n.Obj().Name() == "ReadCloser"
}

// jsonSafe reports whether encoding/json marshals every value of t
// without an error: its errors come from unsupported types (chan, func,
// complex), NaN and infinite floats, marshalers' own errors and cycles,
// and t holds none of those. seen holds the types being looked at: a type
// that contains itself could hold a cycle.
func jsonSafe(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	if implements(t, "encoding/json", "Marshaler") || implements(t, "encoding", "TextMarshaler") ||
		implements(types.NewPointer(t), "encoding/json", "Marshaler") || implements(types.NewPointer(t), "encoding", "TextMarshaler") {
		return false
	}
	seen[t] = true
	defer delete(seen, t)
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsString|types.IsBoolean|types.IsInteger) != 0 && u.Kind() != types.UnsafePointer && u.Kind() != types.Uintptr
	case *types.Pointer:
		return jsonSafe(u.Elem(), seen)
	case *types.Slice:
		return jsonSafe(u.Elem(), seen)
	case *types.Array:
		return jsonSafe(u.Elem(), seen)
	case *types.Map:
		k, ok := u.Key().Underlying().(*types.Basic)
		return ok && k.Info()&(types.IsString|types.IsInteger) != 0 && jsonSafe(u.Elem(), seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if f := u.Field(i); f.Exported() || f.Embedded() {
				if !jsonSafe(f.Type(), seen) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// interfaces are the named interfaces of the loaded packages' imports,
// for the allow-list.
var interfaces = map[string]*types.Interface{}

func lookupInterface(path, name string) *types.Interface { return interfaces[path+"."+name] }

func collectInterfaces(pkgs []*packages.Package) {
	seen := map[*types.Package]bool{}
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		for _, n := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(n).(*types.TypeName); ok {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok {
					interfaces[p.Path()+"."+n] = it
				}
			}
		}
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	for _, p := range pkgs {
		walk(p.Types)
	}
}

var errorType = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

func isError(t types.Type) bool { return t != nil && types.Implements(t, errorType) }

// finding is one discarded error.
type finding struct {
	pos  token.Position
	what string
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		fail(err)
	}
	found, err := run(abs)
	if err != nil {
		fail(err)
	}
	for _, f := range found {
		rel, err := filepath.Rel(abs, f.pos.Filename)
		if err != nil {
			rel = f.pos.Filename
		}
		fmt.Printf("%s:%d:%d: %s\n", rel, f.pos.Line, f.pos.Column, f.what)
	}
	if len(found) > 0 {
		fmt.Fprintf(os.Stderr, "errcheck: %d error(s) discarded with _; return, wrap or log them, or add the call to the allow-list in .ci/errcheck with its reason\n", len(found))
		os.Exit(1)
	}
}

// run type-checks the packages under dir and returns their discarded
// errors, in file and line order.
func run(dir string) ([]finding, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Dir:  dir,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("the packages under %s do not type-check", dir)
	}
	collectInterfaces(pkgs)
	var found []finding
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.Pos()).Name()
			if strings.HasSuffix(name, "_test.go") || ast.IsGenerated(f) {
				continue
			}
			found = append(found, check(p, f)...)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i].pos, found[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	return found, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "errcheck:", err)
	os.Exit(2)
}

// check returns the discarded errors of one file.
func check(p *packages.Package, f *ast.File) []finding {
	var out []finding
	blankErrors := func(lhs []*ast.Ident, rhs []ast.Expr) {
		// one call giving several values: x, _ := f()
		if len(rhs) == 1 && len(lhs) > 1 {
			c, ok := ast.Unparen(rhs[0]).(*ast.CallExpr)
			if !ok {
				return
			}
			tup, ok := p.TypesInfo.TypeOf(c).(*types.Tuple)
			if !ok || tup.Len() != len(lhs) {
				return
			}
			for i, id := range lhs {
				if id != nil && id.Name == "_" && isError(tup.At(i).Type()) {
					out = append(out, discard(p, c, id))
				}
			}
			return
		}
		// one value each: _ = f(), _, _ = f(), g()
		for i, id := range lhs {
			if id == nil || id.Name != "_" || i >= len(rhs) {
				continue
			}
			c, ok := ast.Unparen(rhs[i]).(*ast.CallExpr)
			if !ok || !isError(p.TypesInfo.TypeOf(c)) {
				continue
			}
			if _, conv := p.TypesInfo.Types[c.Fun]; conv && p.TypesInfo.Types[c.Fun].IsType() {
				continue // a conversion, not a call
			}
			out = append(out, discard(p, c, id))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			lhs := make([]*ast.Ident, len(s.Lhs))
			for i, e := range s.Lhs {
				lhs[i], _ = e.(*ast.Ident)
			}
			blankErrors(lhs, s.Rhs)
		case *ast.ValueSpec:
			blankErrors(s.Names, s.Values)
		}
		return true
	})
	// allowed calls are dropped
	kept := out[:0]
	for _, f := range out {
		if f.what != "" {
			kept = append(kept, f)
		}
	}
	return kept
}

// discard describes the discarded error of c, or returns a finding with
// no text when the allow-list covers c.
func discard(p *packages.Package, c *ast.CallExpr, blank *ast.Ident) finding {
	cl := describe(p, c)
	for _, a := range allowed {
		if a.match(cl) {
			return finding{}
		}
	}
	name := cl.name
	if cl.pkg != "" && cl.recv == nil {
		name = cl.pkg + "." + name
	}
	if name == "" {
		name = "a function value"
	}
	return finding{pos: p.Fset.Position(blank.Pos()), what: "the error of " + name + " is discarded"}
}

// describe finds the callee of c.
func describe(p *packages.Package, c *ast.CallExpr) call {
	var cl call
	for _, a := range c.Args {
		cl.args = append(cl.args, p.TypesInfo.TypeOf(a))
		var obj types.Object
		switch e := ast.Unparen(a).(type) {
		case *ast.Ident:
			obj = p.TypesInfo.Uses[e]
		case *ast.SelectorExpr:
			obj = p.TypesInfo.Uses[e.Sel]
		}
		cl.objs = append(cl.objs, obj)
	}
	fn := ast.Unparen(c.Fun)
	switch ix := fn.(type) { // an instantiated generic function: f[T](...)
	case *ast.IndexExpr:
		fn = ix.X
	case *ast.IndexListExpr:
		fn = ix.X
	}
	switch fun := fn.(type) {
	case *ast.Ident:
		if fn, ok := p.TypesInfo.Uses[fun].(*types.Func); ok {
			cl.name = fn.Name()
			if fn.Pkg() != nil {
				cl.pkg = fn.Pkg().Path()
			}
		} else {
			cl.name = fun.Name // a func value
		}
	case *ast.SelectorExpr:
		cl.name = fun.Sel.Name
		if sel, ok := p.TypesInfo.Selections[fun]; ok {
			cl.recv = sel.Recv()
			if fn, ok := sel.Obj().(*types.Func); ok && fn.Pkg() != nil {
				cl.pkg = fn.Pkg().Path()
			}
		} else if fn, ok := p.TypesInfo.Uses[fun.Sel].(*types.Func); ok && fn.Pkg() != nil {
			cl.pkg = fn.Pkg().Path() // a package-qualified function
		}
	}
	return cl
}
