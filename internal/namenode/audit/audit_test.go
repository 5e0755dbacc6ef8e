package audit

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Event
		want string
	}{
		{"create", Event{Allowed: true, UGI: UGI("joe", "SIMPLE", "", ""), IP: "127.0.0.1", Cmd: "create", Src: "/p",
			Perm: &Perm{"joe", "supergroup", 0o644}},
			"allowed=true\tugi=joe (auth:SIMPLE)\tip=/127.0.0.1\tcmd=create\tsrc=/p\tdst=null\tperm=joe:supergroup:rw-r--r--\tproto=rpc"},
		{"denied proxy", Event{Allowed: false, UGI: UGI("joe", "", "super@EXAMPLE.COM", "KERBEROS"), IP: "10.0.0.1", Cmd: "rename", Src: "/a", Dst: "/b", WebHDFS: true},
			"allowed=false\tugi=joe (auth:PROXY) via super@EXAMPLE.COM (auth:KERBEROS)\tip=/10.0.0.1\tcmd=rename\tsrc=/a\tdst=/b\tperm=null\tproto=webhdfs"},
		{"sticky", Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "mkdirs", Src: "/tmp", Perm: &Perm{"hdfs", "supergroup", 0o1777}},
			"allowed=true\tugi=u (auth:SIMPLE)\tip=null\tcmd=mkdirs\tsrc=/tmp\tdst=null\tperm=hdfs:supergroup:rwxrwxrwt\tproto=rpc"},
		{"sticky no x", Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "mkdirs", Src: "/t", Perm: &Perm{"a", "b", 0o1770}},
			"allowed=true\tugi=u (auth:SIMPLE)\tip=null\tcmd=mkdirs\tsrc=/t\tdst=null\tperm=a:b:rwxrwx--T\tproto=rpc"},
		// A path cannot forge fields or lines.
		{"escaped", Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "create", Src: "/a\tallowed=true\n\"x\\é😀\x01\x7f"},
			"allowed=true\tugi=u (auth:SIMPLE)\tip=null\tcmd=create\tsrc=/a\\tallowed=true\\n\\\"x\\\\\\u00E9\\uD83D\\uDE00\\u0001\x7f\tdst=null\tperm=null\tproto=rpc"},
	} {
		if got := string(AppendFields(nil, tc.e)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestLinePrefixAndCallerContext(t *testing.T) {
	l := &Logger{cfg: Config{CallerContext: true, CallerContextMax: 5, SignatureMax: 3}}
	tm := time.Date(2026, 12, 3, 10, 12, 7, 45e6, time.Local)
	e := Event{Time: tm, Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "delete", Src: "/x", CallerContext: "jobid_1234", Signature: []byte("sig")}
	got := string(l.Append(nil, e))
	want := "2026-12-03 10:12:07,045 INFO FSNamesystem.audit: allowed=true\tugi=u (auth:SIMPLE)\tip=null\tcmd=delete\tsrc=/x\tdst=null\tperm=null\tproto=rpc\tcallerContext=jobid:sig\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	e.Signature = []byte("long")
	if got := string(l.Append(nil, e)); !strings.HasSuffix(got, "\tcallerContext=jobid\n") {
		t.Errorf("a signature over the limit must be left out: %q", got)
	}
	l.cfg.CallerContext = false
	if got := string(l.Append(nil, e)); strings.Contains(got, "callerContext") {
		t.Errorf("caller context printed while disabled: %q", got)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestAsyncWritesEverything logs from many goroutines through a tiny
// blocking queue: every event reaches the file, none is lost.
func TestAsyncWritesEverything(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, Async: true, Blocking: true, BufferSize: 2, Debug: []string{"getfileinfo"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				l.Log(Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "mkdirs", Src: "/d" + string(rune('a'+g)) + "/" + string(rune('0'+i%10))})
				l.Log(Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "getfileinfo", Src: "/"})
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, filepath.Join(dir, FileName))
	if len(lines) != 1600 {
		t.Fatalf("%d lines, want 1600 (debug commands left out)", len(lines))
	}
	for _, ln := range lines {
		if !strings.Contains(ln, " INFO FSNamesystem.audit: allowed=true\tugi=u (auth:SIMPLE)\tip=null\tcmd=mkdirs\tsrc=/d") {
			t.Fatalf("bad line %q", ln)
		}
	}
	if s := l.Stats(); s.Written != 1600 || s.Dropped != 0 {
		t.Fatalf("stats %+v", s)
	}
	l.Log(Event{Cmd: "mkdirs"}) // after Close: ignored, no panic
}

// TestNonBlockingDropsAndSays fills a non-blocking queue whose writer is
// held: the events that did not fit are counted and a WARN line reports
// them before the next line.
func TestNonBlockingDropsAndSays(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, Async: true, Blocking: false, BufferSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock() // hold the writer
	for range 100 {
		l.Log(Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "delete", Src: "/x"})
	}
	l.mu.Unlock()
	l.Log(Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "delete", Src: "/last"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	if st.Dropped == 0 || st.Written+st.Dropped != 101 {
		t.Fatalf("stats %+v: want some dropped, written+dropped = 101", st)
	}
	text := strings.Join(readLines(t, filepath.Join(dir, FileName)), "\n")
	if !strings.Contains(text, "WARN FSNamesystem.audit: ") || !strings.Contains(text, "audit events were dropped") {
		t.Fatalf("no WARN line about the dropped events:\n%s", text)
	}
}

// TestSyncAndRoll writes synchronously into a small file: it rolls into
// .1 and .2, keeping MaxBackups files.
func TestSyncAndRoll(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, MaxFileSize: 1000, MaxBackups: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 60 {
		l.Log(Event{Allowed: true, UGI: "u (auth:SIMPLE)", Cmd: "delete", Src: "/x"})
		// Synchronous: the line is in the file when Log returns.
	}
	lines := readLines(t, filepath.Join(dir, FileName))
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "cmd=delete") {
		t.Fatalf("the last line is not in the file at once: %q", lines)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName, FileName + ".1", FileName + ".2"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1000 {
			t.Errorf("%s is %d bytes, over the 1000 limit", name, st.Size())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".3")); err == nil {
		t.Error(".3 kept past MaxBackups=2")
	}
}

// FuzzAppendEscaped: whatever a path holds, its field is printable ASCII
// without tab or newline, so it cannot forge a field or a line, and it
// grows at most 12 bytes per input byte (a \uXXXX pair per 4-byte rune).
func FuzzAppendEscaped(f *testing.F) {
	for _, s := range []string{"/a/b", "/a\tb\nc", "\"\\", "é😀", "\x00\x7f\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendEscaped(nil, s)
		if len(out) > 12*len(s) {
			t.Fatalf("%q escaped to %d bytes", s, len(out))
		}
		for _, c := range out {
			if c < 32 || c > 127 {
				t.Fatalf("%q escaped to %q: byte %#x", s, out, c)
			}
		}
	})
}

// BenchmarkLog is the whole cost of one audit line: queued by parallel
// callers, formatted and written to a file by the writer (drained before
// the clock stops).
func BenchmarkLog(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), Async: true, Blocking: true, BufferSize: 128})
	if err != nil {
		b.Fatal(err)
	}
	e := Event{Allowed: true, UGI: UGI("joe", "SIMPLE", "", ""), IP: "127.0.0.1", Cmd: "create",
		Src: "/bench/dir0001/file000123", Perm: &Perm{"joe", "supergroup", 0o644}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Log(e)
		}
	})
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}
