// Package scripttest runs script-style tests: a text file in testdata holds
// cases — a command line with key=value arguments, optional input lines, then
// "----" and the expected output — so that a reader sees every input and every
// output of a state machine in one place. `go test -rewrite` regenerates the
// expected outputs (then read the diff). Test-support only.
package scripttest

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The file format:
//
//	# comment
//	command key=value ...
//	optional input lines
//	----
//	expected output lines
//	<blank line>

// rewrite is the test binary's -rewrite flag.
var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of script tests")

// Case is one case of a script.
type Case struct {
	Line  int
	Cmd   string
	Args  map[string]string
	Order []string // keys in the order given
	Input []string
}

// Has reports whether the case sets k.
func (c *Case) Has(k string) bool { _, ok := c.Args[k]; return ok }

// Str is argument k; missing fails the test.
func (c *Case) Str(t *testing.T, k string) string {
	t.Helper()
	v, ok := c.Args[k]
	if !ok {
		t.Fatalf("line %d: %s: missing %s=", c.Line, c.Cmd, k)
	}
	return v
}

// Int is argument k as an integer.
func (c *Case) Int(t *testing.T, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(c.Str(t, k), 10, 64)
	if err != nil {
		t.Fatalf("line %d: %s=%q: %v", c.Line, k, c.Args[k], err)
	}
	return n
}

// IntOr is Int with a default.
func (c *Case) IntOr(t *testing.T, k string, def int64) int64 {
	t.Helper()
	if !c.Has(k) {
		return def
	}
	return c.Int(t, k)
}

// BoolOr is argument k as a bool, with a default.
func (c *Case) BoolOr(t *testing.T, k string, def bool) bool {
	t.Helper()
	if !c.Has(k) {
		return def
	}
	b, err := strconv.ParseBool(c.Args[k])
	if err != nil {
		t.Fatalf("line %d: %s=%q: %v", c.Line, k, c.Args[k], err)
	}
	return b
}

// Run runs every case of the script at path through do and compares (or, with
// -rewrite, rewrites) the outputs.
func Run(t *testing.T, path string, do func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			i++
			continue
		}
		c := &Case{Line: i + 1, Args: map[string]string{}}
		fields := strings.Fields(l)
		c.Cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.Args[k] = v
			c.Order = append(c.Order, k)
		}
		out.WriteString(l + "\n")
		i++
		for i < len(lines) && lines[i] != "----" {
			c.Input = append(c.Input, lines[i])
			out.WriteString(lines[i] + "\n")
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: missing ----", path, c.Line)
		}
		i++ // ----
		var want []string
		for i < len(lines) && lines[i] != "" {
			want = append(want, lines[i])
			i++
		}
		got := strings.TrimRight(do(t, c), "\n")
		out.WriteString("----\n" + got + "\n")
		if !*rewrite && got != strings.Join(want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, c.Line, l, got, strings.Join(want, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
