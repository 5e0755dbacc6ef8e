package recovery

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Script tests: each file in testdata is a sequence of cases
//
//	# comment
//	command key=value ...
//	optional input lines
//	----
//	expected output lines
//	<blank line>
//
// Run with -rewrite to regenerate the expected outputs (then read the diff).

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of script tests")

type scriptCase struct {
	line  int
	cmd   string
	args  map[string]string
	order []string // keys in the order given
	input []string
}

func (c *scriptCase) has(k string) bool { _, ok := c.args[k]; return ok }

func (c *scriptCase) str(t *testing.T, k string) string {
	t.Helper()
	v, ok := c.args[k]
	if !ok {
		t.Fatalf("line %d: %s: missing %s=", c.line, c.cmd, k)
	}
	return v
}

func (c *scriptCase) int(t *testing.T, k string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(c.str(t, k), 10, 64)
	if err != nil {
		t.Fatalf("line %d: %s=%q: %v", c.line, k, c.args[k], err)
	}
	return n
}

func (c *scriptCase) intOr(t *testing.T, k string, def int64) int64 {
	t.Helper()
	if !c.has(k) {
		return def
	}
	return c.int(t, k)
}

func (c *scriptCase) boolOr(t *testing.T, k string, def bool) bool {
	t.Helper()
	if !c.has(k) {
		return def
	}
	b, err := strconv.ParseBool(c.args[k])
	if err != nil {
		t.Fatalf("line %d: %s=%q: %v", c.line, k, c.args[k], err)
	}
	return b
}

// runScript runs every case of testdata/name through do and compares (or
// rewrites) the outputs.
func runScript(t *testing.T, name string, do func(t *testing.T, c *scriptCase) string) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		c := &scriptCase{line: i + 1, args: map[string]string{}}
		fields := strings.Fields(l)
		c.cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.args[k] = v
			c.order = append(c.order, k)
		}
		out.WriteString(l + "\n")
		i++
		for i < len(lines) && lines[i] != "----" {
			c.input = append(c.input, lines[i])
			out.WriteString(lines[i] + "\n")
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: missing ----", path, c.line)
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
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, c.line, l, got, strings.Join(want, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
