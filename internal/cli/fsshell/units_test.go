package fsshell

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestHumanSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{1023, "1023"},
		{1024, "1 K"},
		{1536, "1.5 K"},
		{1280, "1.3 K"}, // 1.25 rounds half up
		{2047, "2.0 K"},
		{1048575, "1.0 M"}, // 1023.999 K rounds to 1024.0 K: next prefix
		{128 << 20, "128 M"},
		{71536, "69.9 K"},
		{1<<30 - 214608, "1023.8 M"},
		{-1536, "-1.5 K"},
		{1 << 60, "1 E"},
		{math.MaxInt64, "8.0 E"},
		{math.MinInt64, "-8 E"},
	}
	for _, tt := range tests {
		if got := humanSize(tt.n); got != tt.want {
			t.Errorf("humanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestPermString(t *testing.T) {
	tests := []struct {
		p          uint16
		sym, octal string
	}{
		{0o755, "rwxr-xr-x", "755"},
		{0o644, "rw-r--r--", "644"},
		{0o1777, "rwxrwxrwt", "1777"},
		{0o1776, "rwxrwxrwT", "1776"},
		{0, "---------", "0"},
		{0o007, "------rwx", "7"},
	}
	for _, tt := range tests {
		if got := permString(tt.p); got != tt.sym {
			t.Errorf("permString(%o) = %q, want %q", tt.p, got, tt.sym)
		}
		if got := octalPerm(tt.p); got != tt.octal {
			t.Errorf("octalPerm(%o) = %q, want %q", tt.p, got, tt.octal)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{{0, "0%"}, {0.1, "10%"}, {0.015, "2%"}, {0.0149, "1%"}, {1, "100%"}, {math.NaN(), "NaN%"}} {
		if got := formatPercent(tt.f); got != tt.want {
			t.Errorf("formatPercent(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		mode  string
		old   uint16
		isDir bool
		want  uint16
	}{
		{"755", 0o644, false, 0o755},
		{"0755", 0o1777, true, 0o755},
		{"1755", 0o644, false, 0o1755},
		{"644", 0o1777, true, 0o1644}, // 3 digits keep the sticky bit
		{"+755", 0o000, false, 0o755},
		{"u+x", 0o644, false, 0o744},
		{"u-w,g+w", 0o644, false, 0o464},
		{"a=r", 0o777, false, 0o444},
		{"=rw", 0o000, false, 0o666},
		{"go-rwx", 0o777, true, 0o700},
		{"o+t", 0o777, true, 0o1777},
		{"+t", 0o755, true, 0o1755},
		{"-t", 0o1777, true, 0o777},
		{"u=rwx,g=rx,o=x", 0o000, false, 0o751},
		{"a+X", 0o644, false, 0o644},     // not executable: X adds nothing
		{"a+X", 0o744, false, 0o755},     // executable by someone
		{"a+X", 0o644, true, 0o755},      // directories always
		{"u+r,u+w", 0o000, false, 0o200}, // a later clause for u replaces the earlier
		{"ug+rw", 0o000, false, 0o660},
		{" u+x ", 0o600, false, 0o700},
	}
	for _, tt := range tests {
		m, err := parseMode(tt.mode)
		if err != nil {
			t.Errorf("parseMode(%q): %v", tt.mode, err)
			continue
		}
		if got := m.apply(tt.old, tt.isDir); got != tt.want {
			t.Errorf("%q on %o (dir %v) = %o, want %o", tt.mode, tt.old, tt.isDir, got, tt.want)
		}
	}
	for _, bad := range []string{"", "999", "75", "17555", "u+q", "x", "u+x;g+w", "u+x g+w", "2755", "rwx", "o="} {
		if _, err := parseMode(bad); err == nil {
			t.Errorf("parseMode(%q) accepted", bad)
		}
	}
}

func TestCompileGlob(t *testing.T) {
	tests := []struct {
		pat  string
		yes  []string
		no   []string
		fail bool
	}{
		{pat: "*", yes: []string{"", "a", ".hidden"}},
		{pat: "a?c", yes: []string{"abc", "a.c"}, no: []string{"ac", "abbc"}},
		{pat: "[ab]x", yes: []string{"ax", "bx"}, no: []string{"cx"}},
		{pat: "[a-c]", yes: []string{"b"}, no: []string{"d"}},
		{pat: "[!a]", yes: []string{"b"}, no: []string{"a", "bb"}},
		{pat: "[^a]", yes: []string{"b"}, no: []string{"a"}},
		{pat: "{foo,ba*}", yes: []string{"foo", "bar", "ba"}, no: []string{"fo", "xbar"}},
		{pat: "{a,{b,c}d}", yes: []string{"a", "bd", "cd"}, no: []string{"b"}},
		{pat: `\*`, yes: []string{"*"}, no: []string{"a"}},
		{pat: "a.b+c", yes: []string{"a.b+c"}, no: []string{"aXb+c", "abbc"}},
		{pat: "x,y", yes: []string{"x,y"}},
		{pat: "é?ß*", yes: []string{"éaß", "ééßxyz"}, no: []string{"eaß"}},
		{pat: "[äö]", yes: []string{"ä", "ö"}, no: []string{"a"}},
		{pat: "[ab", fail: true},
		{pat: "{a,b", fail: true},
		{pat: `a\`, fail: true},
	}
	for _, tt := range tests {
		re, err := compileGlob(tt.pat)
		if tt.fail {
			if err == nil {
				t.Errorf("compileGlob(%q) accepted", tt.pat)
			}
			continue
		}
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.pat, err)
			continue
		}
		for _, s := range tt.yes {
			if !re.MatchString(s) {
				t.Errorf("%q does not match %q", tt.pat, s)
			}
		}
		for _, s := range tt.no {
			if re.MatchString(s) {
				t.Errorf("%q matches %q", tt.pat, s)
			}
		}
	}
}

func TestRelativize(t *testing.T) {
	for _, tt := range []struct{ wd, abs, want string }{
		{"/user/alice", "/user/alice", "."},
		{"/user/alice", "/user/alice/x/y", "x/y"},
		{"/user/alice", "/user/bob/x", "../bob/x"},
		{"/user/alice", "/d/a", "../../d/a"},
		{"/user/alice", "/", "../.."},
		{"/user/alice", "/user/alicex", "../alicex"},
	} {
		if got := relativize(tt.wd, tt.abs); got != tt.want {
			t.Errorf("relativize(%q, %q) = %q, want %q", tt.wd, tt.abs, got, tt.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args   []string
		min    int
		max    int
		unk    bool
		set    string
		rest   string
		errMsg string
	}{
		{args: []string{"-R", "-h", "/a"}, max: unlimited, set: "R h", rest: "[/a]"},
		{args: []string{"-R", "--", "-h"}, max: unlimited, set: "R", rest: "[-h]"},
		{args: []string{"-", "-R"}, max: unlimited, rest: "[- -R]"},
		{args: []string{"/a", "-R"}, max: unlimited, rest: "[/a -R]"},
		{args: []string{"-Rh"}, max: unlimited, errMsg: "Illegal option -Rh"},
		{args: []string{"-x", "-R", "m"}, max: unlimited, unk: true, set: "R", rest: "[-x m]"},
		{args: []string{}, min: 1, max: unlimited, errMsg: "Not enough arguments: expected 1 but got 0"},
		{args: []string{"a", "b"}, min: 1, max: 1, errMsg: "Too many arguments: expected 1 but got 2"},
	}
	for _, tt := range tests {
		f, rest, err := parseFlags(tt.args, tt.min, tt.max, []string{"R", "h"}, tt.unk)
		if tt.errMsg != "" {
			if err == nil || err.Error() != tt.errMsg {
				t.Errorf("parseFlags(%q) err = %v, want %q", tt.args, err, tt.errMsg)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFlags(%q): %v", tt.args, err)
			continue
		}
		var set []string
		for _, o := range []string{"R", "h"} {
			if f.on(o) {
				set = append(set, o)
			}
		}
		if strings.Join(set, " ") != tt.set || fmt.Sprint(rest) != tt.rest {
			t.Errorf("parseFlags(%q) = %v %v", tt.args, set, rest)
		}
	}
}

func TestDialFromConf(t *testing.T) {
	tests := []struct {
		name    string
		kv      []conf.KeyValue
		uri     string
		wantErr bool
	}{
		{name: "host", kv: []conf.KeyValue{{Key: conf.FSDefaultFS, Value: "hdfs://nn1.example.com:9000"}}, uri: "hdfs://nn1.example.com:9000"},
		{name: "host without port", kv: []conf.KeyValue{{Key: conf.FSDefaultFS, Value: "hdfs://nn1.example.com"}}, uri: "hdfs://nn1.example.com"},
		{name: "nameservice", kv: []conf.KeyValue{
			{Key: conf.FSDefaultFS, Value: "hdfs://mycluster"},
			{Key: "dfs.nameservices", Value: "mycluster"},
			{Key: "dfs.ha.namenodes.mycluster", Value: "nn1,nn2"},
			{Key: "dfs.namenode.rpc-address.mycluster.nn1", Value: "h1:8020"},
			{Key: "dfs.namenode.rpc-address.mycluster.nn2", Value: "h2:8020"},
		}, uri: "hdfs://mycluster"},
		{name: "rpc address only", kv: []conf.KeyValue{{Key: "dfs.namenode.rpc-address", Value: "h3:8021"}}, uri: "hdfs://h3:8021"},
		{name: "nothing", wantErr: true},
		{name: "bad umask", kv: []conf.KeyValue{{Key: conf.FSDefaultFS, Value: "hdfs://h:1"}, {Key: conf.FSPermissionsUmaskMode, Value: "u=rwx"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := conf.Defaults().With(tt.kv...)
			fsys, err := DialFromConf(c, "carol", nil)
			if tt.wantErr {
				if err == nil {
					fsys.Close()
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			if fsys.URI() != tt.uri || fsys.User() != "carol" {
				t.Errorf("URI %q user %q", fsys.URI(), fsys.User())
			}
		})
	}
}

func TestDialFromConfUserFromEnv(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "dave")
	fsys, err := DialFromConf(conf.Defaults().With(conf.KeyValue{Key: conf.FSDefaultFS, Value: "hdfs://h:1"}), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if fsys.User() != "dave" || fsys.WorkingDir() != "/user/dave" {
		t.Errorf("user %q wd %q", fsys.User(), fsys.WorkingDir())
	}
}

// FuzzParseMode: any MODE either fails to parse or yields a permission
// within 01777.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"755", "1777", "u+x,g-w", "a=rX", "+t", "ugo-rwxXt", ",", "u+x,,"} {
		f.Add(s, uint16(0o644), false)
	}
	f.Fuzz(func(t *testing.T, s string, old uint16, isDir bool) {
		m, err := parseMode(s)
		if err != nil {
			return
		}
		if p := m.apply(old&0o1777, isDir); p&^0o1777 != 0 {
			t.Fatalf("%q on %o = %o", s, old, p)
		}
	})
}

// FuzzCompileGlob: any pattern either fails or compiles to an anchored
// expression that matches its own unescaped literal text when it has no
// special characters.
func FuzzCompileGlob(f *testing.F) {
	for _, s := range []string{"*", "a?b", "[a-z]*", "{a,b}", `\{x`, "[!", "{{}}", "a]b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		re, err := compileGlob(s)
		if err != nil {
			return
		}
		if !strings.ContainsAny(s, `*?[]{},\`) && !re.MatchString(s) {
			t.Fatalf("%q does not match itself", s)
		}
	})
}

// FuzzHumanSize: the output always parses back to within 5% of n.
func FuzzHumanSize(f *testing.F) {
	for _, n := range []int64{0, 1023, 1024, 1536, 1 << 40, math.MaxInt64, -5000} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		s := humanSize(n)
		if n == math.MinInt64 {
			return
		}
		var v float64
		var unit string
		if k, _ := fmt.Sscanf(s, "%g %s", &v, &unit); k == 0 {
			t.Fatalf("humanSize(%d) = %q", n, s)
		}
		mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50, "E": 1 << 60}[unit]
		if got := v * mult; math.Abs(got-float64(n)) > math.Abs(float64(n))*0.05+1 {
			t.Fatalf("humanSize(%d) = %q", n, s)
		}
	})
}
