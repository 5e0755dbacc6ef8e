package namespace

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPureCoreImports keeps the package a pure core: no I/O, clock,
// goroutine machinery or randomness in non-test files; unsafe only in
// inode.go, for the inode's one pointer to a directory's or a file's data.
func TestPureCoreImports(t *testing.T) {
	forbidden := []string{"os", "net", "time", "sync", "syscall", "unsafe", "log", "math/rand", "crypto/rand", "runtime"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if bad == "unsafe" && name == "inode.go" {
					continue
				}
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s imports %q", name, p)
				}
			}
		}
	}
}
