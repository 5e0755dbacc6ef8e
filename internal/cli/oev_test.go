package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// writeSegment writes ops through the edit log's own writer into a file
// journal in dir and returns the finalized segment's path.
func writeSegment(t *testing.T, dir string, ops ...op.Op) string {
	t.Helper()
	l, err := editlog.New(editlog.Config{MinJournals: 1}, nil, []editlog.Journal{editlog.NewFileJournal(vfs.Default, dir)})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.InitForWrite(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.StartSegment(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	last, err := l.Append(ops...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "edits_0*"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	return segs[0]
}

// hdfs oev turns a segment the edit log wrote into Hadoop-shaped XML, the
// XML back into the same bytes, and either into the stats table.
func TestOev(t *testing.T) {
	dir := t.TempDir()
	seg := writeSegment(t, dir,
		&op.Mkdir{InodeID: 16386, Path: "/d", Mtime: 5, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}},
		&op.Delete{Path: "/d", Mtime: 6})
	xmlOut := filepath.Join(dir, "e.xml")
	if _, errs, code := run(t, nil, "oev", "-i", seg, "-o", xmlOut); code != 0 {
		t.Fatalf("oev to XML: %d %s", code, errs)
	}
	x, _ := os.ReadFile(xmlOut)
	for _, want := range []string{"<EDITS_VERSION>", "<OPCODE>OP_START_LOG_SEGMENT</OPCODE>\n    <DATA>\n      <TXID>1</TXID>",
		"<OPCODE>OP_MKDIR</OPCODE>\n    <DATA>\n      <TXID>2</TXID>\n      <INODEID>16386</INODEID>\n      <PATH>/d</PATH>",
		"<OPCODE>OP_DELETE</OPCODE>", "<OPCODE>OP_END_LOG_SEGMENT</OPCODE>\n    <DATA>\n      <TXID>4</TXID>"} {
		if !strings.Contains(string(x), want) {
			t.Fatalf("XML lacks %q:\n%s", want, x)
		}
	}
	bin := filepath.Join(dir, "back")
	if _, errs, code := run(t, nil, "oev", "-p", "binary", "-i", xmlOut, "-o", bin); code != 0 {
		t.Fatalf("oev to binary: %d %s", code, errs)
	}
	a, _ := os.ReadFile(seg)
	b, _ := os.ReadFile(bin)
	if !bytes.Equal(a, b) {
		t.Fatal("XML -> binary is not the segment")
	}
	st := filepath.Join(dir, "stats")
	if _, errs, code := run(t, nil, "oev", "-p", "stats", "-i", seg, "-o", st); code != 0 {
		t.Fatalf("oev stats: %d %s", code, errs)
	}
	s, _ := os.ReadFile(st)
	if !strings.Contains(string(s), "    OP_MKDIR                       (  3): 1\n") {
		t.Fatalf("stats:\n%s", s)
	}
	if _, errs, code := run(t, nil, "oev", "-p", "xml", "-i", xmlOut, "-o", st); code == 0 || !strings.Contains(errs, "cannot be processed by the xml processor") {
		t.Fatalf("XML input to the xml processor: %d %s", code, errs)
	}
	// A torn last record (an in-progress segment cut mid-write): the
	// whole records are shown and the tear is reported.
	os.WriteFile(seg, a[:len(a)-3], 0o644)
	if _, errs, code := run(t, nil, "oev", "-i", seg, "-o", xmlOut+"2"); code != 0 || !strings.Contains(errs, "torn record") {
		t.Fatalf("a torn segment: %d %s", code, errs)
	}
	if x2, _ := os.ReadFile(xmlOut + "2"); !strings.Contains(string(x2), "<OPCODE>OP_DELETE</OPCODE>") || strings.Contains(string(x2), "OP_END_LOG_SEGMENT") || !strings.HasSuffix(string(x2), "</EDITS>\n") {
		t.Fatalf("XML of a torn segment:\n%s", x2)
	}
	// Zero fill after the records (a preallocated segment being written)
	// is reported as such, not as a torn record.
	os.WriteFile(seg, append(a[:len(a):len(a)], make([]byte, 4096)...), 0o644)
	if _, errs, code := run(t, nil, "oev", "-i", seg, "-o", xmlOut+"5"); code != 0 || !strings.Contains(errs, fmt.Sprintf("records end at offset %d, zero fill follows", len(a))) || strings.Contains(errs, "torn record") {
		t.Fatalf("a segment with zero fill: %d %s", code, errs)
	}
	if x5, _ := os.ReadFile(xmlOut + "5"); !strings.Contains(string(x5), "OP_END_LOG_SEGMENT") {
		t.Fatalf("XML of a segment with zero fill:\n%s", x5)
	}
	// Damage with records after it is an error, and leaves no output.
	bad := append([]byte(nil), a...)
	bad[editlog.SegmentHeaderSize+5] ^= 0xff
	os.WriteFile(seg, bad, 0o644)
	if _, errs, code := run(t, nil, "oev", "-i", seg, "-o", xmlOut+"3"); code == 0 || !strings.Contains(errs, "offset") {
		t.Fatalf("a corrupt segment: %d %s", code, errs)
	}
	if _, err := os.Stat(xmlOut + "3"); err == nil {
		t.Fatal("a failed run left an output file")
	}
	// Recovery mode skips the damage and shows the records after it.
	if _, errs, code := run(t, nil, "oev", "-r", "-i", seg, "-o", xmlOut+"4"); code != 0 || !strings.Contains(errs, "recovery skipped 1 damaged range(s)") {
		t.Fatalf("oev -r: %d %s", code, errs)
	}
	if x4, _ := os.ReadFile(xmlOut + "4"); !strings.Contains(string(x4), "<OPCODE>OP_MKDIR</OPCODE>") || strings.Contains(string(x4), "OP_START_LOG_SEGMENT") {
		t.Fatalf("oev -r output:\n%s", x4)
	}
}

// An output that is not a regular file is written in place, never
// replaced by a renamed temporary file.
func TestWriteFileAtomicSpecialFile(t *testing.T) {
	if err := writeFileAtomic(os.DevNull, func(w io.Writer) error {
		_, err := w.Write([]byte("discarded"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(os.DevNull)
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, st.Mode(), err)
	}
}

// TestOfflineViewersMissingValue: an option of hdfs oev or hdfs oiv given
// last without its value is refused as Hadoop's option parser does.
func TestOfflineViewersMissingValue(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"oev", "-i"}},
		{[]string{"oev", "-i", "edits", "--outputFile"}},
		{[]string{"oiv", "-i", "fsimage", "-p"}},
		{[]string{"oiv", "-i", "fsimage", "-maxSize"}},
	} {
		opt := strings.TrimLeft(tc.args[len(tc.args)-1], "-")
		_, errOut, code := run(t, nil, tc.args...)
		if want := "Error parsing command-line options: Missing argument for option: " + opt + "\n"; code != 1 || errOut != want {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", tc.args, code, errOut, want)
		}
	}
}
