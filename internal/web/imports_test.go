package web

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var allowedImports = map[string]bool{
	"github.com/hdfsgo/hdfsgo/internal/conf":    true,
	"github.com/hdfsgo/hdfsgo/internal/ratelog": true,
	"github.com/hdfsgo/hdfsgo/internal/clock":   true,
}

// TestImports keeps the package free of role packages: it may use the
// standard library, internal/conf and internal/ratelog (with its clock)
// only.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && !allowedImports[p] {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
