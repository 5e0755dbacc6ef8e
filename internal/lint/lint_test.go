package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/hdfsgo/hdfsgo"

// pureCores may not do I/O or read the clock: they take inputs and return outputs.
var pureCores = []string{
	"internal/editlog/op",
	"internal/namenode/namespace",
	"internal/namenode/lease",
	"internal/namenode/blockmgmt",
	"internal/namenode/hosts",
	"internal/balancer/plan",
	"internal/namenode/ha",
	"internal/namenode/backup",
	"internal/zkfc/health",
	"internal/zkfc/elector",
	"internal/qjournal/quorum",
	"internal/datatransfer",
	"internal/ipc/wire",
	"internal/blocklist",
}

// forbiddenInCores are imports a pure core must not have.
var forbiddenInCores = map[string]bool{
	"net": true, "net/http": true, "os": true, "os/exec": true, "os/signal": true,
	"syscall": true, "io/ioutil": true, "github.com/hdfsgo/hdfsgo/internal/vfs": true,
}

// clockCalls are the time functions that read or wait on the wall clock.
var clockCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

// roles are the daemons; a role never imports another (they talk over RPC).
// The JournalNode is internal/qjournal/server; the rest of internal/qjournal
// is shared (the NameNode's quorum journal client, the pure rules, the
// protocol's names).
var roles = []string{"internal/namenode", "internal/datanode", "internal/qjournal/server", "internal/zkfc"}

// sharedParts are the building blocks the roles are made of (DESIGN.md §3:
// dependencies point downward); they never import a role, so any role can
// use them.
var sharedParts = []string{
	"internal/imagetransfer", "internal/fsimage", "internal/editlog",
	"internal/storage", "internal/vfs", "internal/clock", "internal/conf",
	"internal/haservice", "internal/failpoint", "internal/qjournal/client", "internal/qjournal/quorum",
	"internal/qjournal/protocol", "internal/blocklist",
}

// serverSide are packages the public client must never import.
var serverSide = []string{
	"internal/namenode", "internal/datanode", "internal/qjournal", "internal/zkfc",
	"internal/minicluster", "internal/cli", "internal/web",
}

type goFile struct {
	pkgDir  string // module-relative directory
	path    string
	test    bool
	imports []string
	ast     *ast.File
}

func loadFiles(t *testing.T) []goFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	var files []goFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		gf := goFile{pkgDir: filepath.ToSlash(rel), path: p, test: strings.HasSuffix(p, "_test.go")}
		for _, im := range f.Imports {
			s, _ := strconv.Unquote(im.Path.Value)
			gf.imports = append(gf.imports, s)
		}
		if !gf.test {
			full, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			gf.ast = full
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func under(dir, prefix string) bool { return dir == prefix || strings.HasPrefix(dir, prefix+"/") }

func internalPath(imp string) (string, bool) {
	if !strings.HasPrefix(imp, module+"/") {
		return "", false
	}
	return strings.TrimPrefix(imp, module+"/"), true
}

func TestPureCoresDoNoIO(t *testing.T) {
	var bad []string
	for _, f := range loadFiles(t) {
		if f.test {
			continue
		}
		core := false
		for _, c := range pureCores {
			if under(f.pkgDir, c) {
				core = true
			}
		}
		if !core {
			continue
		}
		for _, im := range f.imports {
			if forbiddenInCores[im] {
				bad = append(bad, f.path+": imports "+im)
			}
		}
		timeName := ""
		for _, im := range f.ast.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "time" {
				timeName = "time"
				if im.Name != nil {
					timeName = im.Name.Name
				}
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && clockCalls[sel.Sel.Name] {
				bad = append(bad, f.path+": calls time."+sel.Sel.Name+" (inject a clock instead)")
			}
			return true
		})
	}
	report(t, bad)
}

func TestRolesDoNotImportEachOther(t *testing.T) {
	var bad []string
	for _, f := range loadFiles(t) {
		for _, r := range roles {
			if !under(f.pkgDir, r) {
				continue
			}
			for _, im := range f.imports {
				p, ok := internalPath(im)
				if !ok {
					continue
				}
				for _, other := range roles {
					if other != r && under(p, other) {
						bad = append(bad, f.path+": role "+r+" imports "+im)
					}
				}
			}
		}
	}
	report(t, bad)
}

func TestSharedPartsImportNoRole(t *testing.T) {
	var bad []string
	for _, f := range loadFiles(t) {
		shared := false
		for _, p := range sharedParts {
			if under(f.pkgDir, p) {
				shared = true
			}
		}
		if !shared {
			continue
		}
		for _, im := range f.imports {
			p, ok := internalPath(im)
			if !ok {
				continue
			}
			for _, r := range append(roles, "internal/minicluster", "internal/cli") {
				if under(p, r) {
					bad = append(bad, f.path+": shared package imports "+im)
				}
			}
		}
	}
	report(t, bad)
}

// clientSide are the packages that run outside the servers and reach
// them only over their protocols: the public client and the balancer.
var clientSide = []string{"client", "internal/balancer"}

func TestClientImportsNoServerCode(t *testing.T) {
	var bad []string
	for _, f := range loadFiles(t) {
		side := false
		for _, c := range clientSide {
			side = side || under(f.pkgDir, c)
		}
		if !side || f.test {
			continue
		}
		for _, im := range f.imports {
			p, ok := internalPath(im)
			if !ok {
				continue
			}
			for _, s := range serverSide {
				if under(p, s) {
					bad = append(bad, f.path+": client-side package imports server package "+im)
				}
			}
		}
	}
	report(t, bad)
}

func TestOnlyCmdImportsCLI(t *testing.T) {
	var bad []string
	for _, f := range loadFiles(t) {
		if under(f.pkgDir, "cmd") || under(f.pkgDir, "internal/cli") {
			continue
		}
		for _, im := range f.imports {
			if p, ok := internalPath(im); ok && under(p, "internal/cli") {
				bad = append(bad, f.path+": imports "+im+" (only cmd/ may)")
			}
		}
	}
	report(t, bad)
}

func report(t *testing.T, bad []string) {
	t.Helper()
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// deferUnlockPackages are packages whose every lock is released by a defer
// in the statement right after it is taken, so that no path (an early
// return, a panic) can leave it held. The NameNode's namesystem lock is the
// one whose loss hangs every client.
var deferUnlockPackages = []string{"internal/namenode"}

func TestLocksAreReleasedByDefer(t *testing.T) {
	for _, f := range loadFiles(t) {
		if f.test || f.ast == nil || !slicesContains(deferUnlockPackages, f.pkgDir) {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			block, ok := n.(*ast.BlockStmt)
			if !ok {
				return true
			}
			for i, st := range block.List {
				recv, lock := lockCall(st)
				if lock == "" {
					continue
				}
				want := map[string]string{"Lock": "Unlock", "RLock": "RUnlock"}[lock]
				if i+1 < len(block.List) {
					if d, ok := block.List[i+1].(*ast.DeferStmt); ok {
						if r, m := callOn(d.Call); r == recv && m == want {
							continue
						}
					}
				}
				t.Errorf("%s: %s.%s() is not followed by defer %s.%s()", f.path, recv, lock, recv, want)
			}
			return true
		})
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// lockCall reports a statement X.Lock() or X.RLock() with X's source text.
func lockCall(st ast.Stmt) (recv, method string) {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return "", ""
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return "", ""
	}
	r, m := callOn(call)
	if m != "Lock" && m != "RLock" {
		return "", ""
	}
	return r, m
}

// callOn returns the receiver text and method name of a call X.M().
func callOn(call *ast.CallExpr) (recv, method string) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || len(call.Args) != 0 {
		return "", ""
	}
	return exprText(sel.X), sel.Sel.Name
}

func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	}
	return "?"
}
