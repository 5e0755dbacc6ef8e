package storage

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// seeded returns a deterministic randomness source.
func seeded(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	s[0] = byte(seed)
	return rand.NewChaCha8(s)
}

var testNow = time.Date(2026, 12, 1, 20, 50, 25, 0, time.UTC)

func TestVersionRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		v    Version
		want string
	}{
		{
			name: "namenode",
			v: Version{LayoutVersion: NameNodeLayoutVersion, NamespaceID: 1472413353, ClusterID: "CID-4e2a6ebd-0c8c-4b8e-9f3a-1b2c3d4e5f60",
				StorageType: StorageTypeNameNode, BlockPoolID: "BP-1010101010-127.0.0.1-1764622225000"},
			want: "#Tue Dec 01 20:50:25 UTC 2026\nnamespaceID=1472413353\nclusterID=CID-4e2a6ebd-0c8c-4b8e-9f3a-1b2c3d4e5f60\ncTime=0\nstorageType=NAME_NODE\nblockpoolID=BP-1010101010-127.0.0.1-1764622225000\nlayoutVersion=-1001\n",
		},
		{
			name: "journalnode",
			v:    Version{LayoutVersion: NameNodeLayoutVersion, NamespaceID: 7, ClusterID: "CID-x", CTime: 5, StorageType: StorageTypeJournalNode},
			want: "#Tue Dec 01 20:50:25 UTC 2026\nnamespaceID=7\nclusterID=CID-x\ncTime=5\nstorageType=JOURNAL_NODE\nlayoutVersion=-1001\n",
		},
		{
			name: "datanode",
			v: Version{LayoutVersion: DataNodeLayoutVersion, ClusterID: "CID-x", StorageType: StorageTypeDataNode,
				StorageID: "DS-1", DatanodeUUID: "u-1"},
			want: "#Tue Dec 01 20:50:25 UTC 2026\nstorageID=DS-1\nclusterID=CID-x\ncTime=0\ndatanodeUuid=u-1\nstorageType=DATA_NODE\nlayoutVersion=-57\n",
		},
		{
			name: "block pool with extra keys",
			v: Version{LayoutVersion: DataNodeLayoutVersion, NamespaceID: -3, BlockPoolID: "BP-1-127.0.0.1-2",
				Extra: []Property{{"zeta", "a=b: #c"}, {"key with space", " lead\tü😀"}}},
			want: "#Tue Dec 01 20:50:25 UTC 2026\nnamespaceID=-3\ncTime=0\nblockpoolID=BP-1-127.0.0.1-2\nlayoutVersion=-57\nzeta=a\\=b\\: \\#c\nkey\\ with\\ space=\\ lead\\t\\u00FC\\uD83D\\uDE00\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := vfs.NewMem()
			p := "/d/VERSION"
			if err := m.MkdirAll("/d", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := WriteVersion(m, p, &tt.v, testNow); err != nil {
				t.Fatal(err)
			}
			data, err := ReadFile(m, p)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != tt.want {
				t.Errorf("file text:\n%s\nwant:\n%s", data, tt.want)
			}
			got, err := ReadVersion(m, p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.v) {
				t.Errorf("read back %+v, want %+v", *got, tt.v)
			}
		})
	}
}

// TestParseHadoopVersion reads VERSION files as Hadoop 3.x writes them
// (hash-table key order, Java date comment).
func TestParseHadoopVersion(t *testing.T) {
	nn := "#Thu Jan 11 10:18:36 UTC 2018\nnamespaceID=1472413353\nclusterID=CID-4e2a6ebd-2c70-4c1a-9b7c-5f7f2b0f0e11\ncTime=1515665916345\nstorageType=NAME_NODE\nblockpoolID=BP-2065372430-172.17.0.2-1515665916345\nlayoutVersion=-66\n"
	v, err := ParseVersion("nn/VERSION", []byte(nn))
	if err != nil {
		t.Fatal(err)
	}
	want := Version{LayoutVersion: -66, NamespaceID: 1472413353, ClusterID: "CID-4e2a6ebd-2c70-4c1a-9b7c-5f7f2b0f0e11",
		CTime: 1515665916345, StorageType: StorageTypeNameNode, BlockPoolID: "BP-2065372430-172.17.0.2-1515665916345"}
	if !reflect.DeepEqual(*v, want) {
		t.Errorf("got %+v, want %+v", *v, want)
	}
	dn := "#Wed Jan 17 13:17:49 UTC 2018\r\nstorageID = DS-9f1c\r\nclusterID:CID-a\r\ncTime 0\r\n! comment\r\ndatanodeUuid=11-22\\\r\n    -33\r\nstorageType=DATA_NODE\r\nlayoutVersion=-57\r\n"
	v, err = ParseVersion("dn/VERSION", []byte(dn))
	if err != nil {
		t.Fatal(err)
	}
	want = Version{LayoutVersion: -57, ClusterID: "CID-a", StorageType: StorageTypeDataNode, StorageID: "DS-9f1c", DatanodeUUID: "11-22-33"}
	if !reflect.DeepEqual(*v, want) {
		t.Errorf("got %+v, want %+v", *v, want)
	}
}

func TestParseVersionErrors(t *testing.T) {
	base := map[string]string{
		"namespaceID": "1", "clusterID": "CID-a", "cTime": "0", "storageType": "NAME_NODE",
		"blockpoolID": "BP-1", "layoutVersion": "-1001",
	}
	tests := []struct {
		name    string
		edit    func(m map[string]string)
		wantSub string
	}{
		{"missing layoutVersion", func(m map[string]string) { delete(m, "layoutVersion") }, "field layoutVersion: missing"},
		{"bad namespaceID", func(m map[string]string) { m["namespaceID"] = "x1" }, `field namespaceID: "x1"`},
		{"namespaceID overflow", func(m map[string]string) { m["namespaceID"] = "4294967296" }, "field namespaceID"},
		{"zero namespaceID", func(m map[string]string) { m["namespaceID"] = "0" }, "field namespaceID: namespace id is 0"},
		{"positive layout", func(m map[string]string) { m["layoutVersion"] = "3" }, "field layoutVersion: layout version 3 is not negative"},
		{"unknown storage type", func(m map[string]string) { m["storageType"] = "SECONDARY" }, "field storageType"},
		{"empty cluster", func(m map[string]string) { m["clusterID"] = "" }, "field clusterID: empty"},
		{"bad cTime", func(m map[string]string) { m["cTime"] = "soon" }, "field cTime"},
		{"bad escape", func(m map[string]string) { m["clusterID"] = `C\u12` }, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := make(map[string]string)
			for k, v := range base {
				m[k] = v
			}
			tt.edit(m)
			var b strings.Builder
			for k, v := range m {
				b.WriteString(k + "=" + v + "\n")
			}
			_, err := ParseVersion("/nn/current/VERSION", []byte(b.String()))
			if !errors.Is(err, ErrInvalidVersion) {
				t.Fatalf("err = %v, want ErrInvalidVersion", err)
			}
			if !strings.Contains(err.Error(), "/nn/current/VERSION") || !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("err = %q, want it to name the file and contain %q", err, tt.wantSub)
			}
		})
	}
}

func FuzzParseVersion(f *testing.F) {
	f.Add([]byte("#c\nnamespaceID=1\nclusterID=CID-a\ncTime=0\nstorageType=NAME_NODE\nblockpoolID=BP-1\nlayoutVersion=-1001\nx\\ y=\\u00fc\\\n z\n"))
	f.Add([]byte("storageID=DS-1\nclusterID=c\ncTime=0\ndatanodeUuid=u\nstorageType=DATA_NODE\nlayoutVersion=-57\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVersion("VERSION", data)
		if err != nil {
			return
		}
		// Whatever parses must survive a write/read round trip.
		text, err := v.Marshal(testNow)
		if err != nil {
			t.Fatalf("marshal of parsed version: %v", err)
		}
		v2, err := ParseVersion("VERSION", text)
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, text)
		}
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("round trip changed %+v to %+v", v, v2)
		}
	})
}

func TestAtomicWriteFileCrash(t *testing.T) {
	m := vfs.NewMem()
	if err := m.MkdirAll("/d", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	if err := AtomicWriteFile(m, "/d/f", []byte("old")); err != nil {
		t.Fatal(err)
	}
	// A failing rename leaves the old contents and no tmp file.
	failing := vfs.WithErrors(m, func(op vfs.Op, path string) error {
		if op == vfs.OpRename {
			return errors.New("injected")
		}
		return nil
	})
	if err := AtomicWriteFile(failing, "/d/f", []byte("new")); err == nil {
		t.Fatal("want an error from the failed rename")
	}
	if names, _ := m.List("/d"); !reflect.DeepEqual(names, []string{"f"}) {
		t.Errorf("after failed write: %v", names)
	}
	if err := AtomicWriteFile(m, "/d/f", []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(m.CrashClone(), "/d/f")
	if err != nil || string(got) != "new" {
		t.Fatalf("after crash: %q, %v", got, err)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	m := vfs.NewMem()
	f, err := m.Create("/big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, MaxSmallFile+1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(m, "/big"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if _, err := ReadFile(m, "/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestLock(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (vfs.FS, string)
	}{
		{"mem", func(t *testing.T) (vfs.FS, string) {
			m := vfs.NewMem()
			return m, "/nn"
		}},
		{"os", func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
			if err := fsys.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if _, err := LockAs(fsys, filepath.Join(dir, "missing"), "x"); err == nil || errors.Is(err, ErrLocked) {
				t.Errorf("lock of a missing dir: %v, want a plain error", err)
			}
			lk, err := LockAs(fsys, dir, "4711@hostA")
			if err != nil {
				t.Fatal(err)
			}
			_, err = LockAs(fsys, dir, "4712@hostB")
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("second lock: %v, want ErrLocked", err)
			}
			want := "storage: directory " + dir + " is already locked by 4711@hostA"
			if err.Error() != want {
				t.Errorf("second lock error %q, want %q", err, want)
			}
			// The second attempt must not have clobbered the holder.
			if data, _ := ReadFile(fsys, filepath.Join(dir, LockFileName)); string(data) != "4711@hostA" {
				t.Errorf("lock file holds %q", data)
			}
			if err := lk.Close(); err != nil {
				t.Fatal(err)
			}
			lk, err = Lock(fsys, dir)
			if err != nil {
				t.Fatalf("relock after release: %v", err)
			}
			defer lk.Close()
			data, _ := ReadFile(fsys, filepath.Join(dir, LockFileName))
			if !regexp.MustCompile(`^[0-9]+@`).Match(data) {
				t.Errorf("lock file holds %q, want pid@hostname", data)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	r := seeded(1)
	uuidRE := `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`
	cid, err := NewClusterID(r)
	if err != nil || !regexp.MustCompile(`^CID-`+uuidRE+`$`).MatchString(cid) {
		t.Errorf("cluster id %q, %v", cid, err)
	}
	sid, err := NewStorageID(r)
	if err != nil || !regexp.MustCompile(`^DS-`+uuidRE+`$`).MatchString(sid) {
		t.Errorf("storage id %q, %v", sid, err)
	}
	du, err := NewDatanodeUUID(r)
	if err != nil || !regexp.MustCompile(`^`+uuidRE+`$`).MatchString(du) {
		t.Errorf("datanode uuid %q, %v", du, err)
	}
	bp, err := NewBlockPoolID(r, "127.0.0.1", testNow)
	if err != nil || !regexp.MustCompile(`^BP-[1-9][0-9]*-127\.0\.0\.1-1796158225000$`).MatchString(bp) {
		t.Errorf("block pool id %q, %v", bp, err)
	}
	for i := 0; i < 1000; i++ {
		ns, err := NewNamespaceID(r)
		if err != nil || ns <= 0 {
			t.Fatalf("namespace id %d, %v", ns, err)
		}
	}
	// Same seed, same ids; a short reader is an error, not a weak id.
	a, _ := NewClusterID(seeded(7))
	b, _ := NewClusterID(seeded(7))
	if a != b {
		t.Errorf("ids from the same seed differ: %s %s", a, b)
	}
	if _, err := NewClusterID(bytes.NewReader(make([]byte, 5))); err == nil {
		t.Error("want an error from a short randomness source")
	}
	// A source that yields 0 first: the namespace id skips it.
	ns, err := NewNamespaceID(bytes.NewReader([]byte{0, 0, 0, 0, 0x80, 0, 0, 9}))
	if err != nil || ns != 9 {
		t.Errorf("namespace id %d, %v; want 9", ns, err)
	}
}

func TestNameDirPaths(t *testing.T) {
	d := NewNameDir("/data/nn")
	checks := []struct{ got, want string }{
		{d.Current(), "/data/nn/current"},
		{d.VersionPath(), "/data/nn/current/VERSION"},
		{d.LockPath(), "/data/nn/in_use.lock"},
		{d.SeenTxIDPath(), "/data/nn/current/seen_txid"},
		{d.ImagePath(42), "/data/nn/current/fsimage_0000000000000000042"},
		{d.ImageMD5Path(42), "/data/nn/current/fsimage_0000000000000000042.md5"},
		{d.CheckpointPath(42), "/data/nn/current/fsimage.ckpt_0000000000000000042"},
		{d.CheckpointMD5Path(42), "/data/nn/current/fsimage.ckpt_0000000000000000042.md5"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestParseImageName(t *testing.T) {
	tests := []struct {
		name string
		kind FileKind
		txid int64
		ok   bool
	}{
		{"fsimage_0000000000000000042", KindImage, 42, true},
		{"fsimage_0000000000000000042.md5", KindImageMD5, 42, true},
		{"fsimage.ckpt_0000000000000000000", KindCheckpoint, 0, true},
		{"fsimage.ckpt_9223372036854775807.md5", KindCheckpointMD5, 1<<63 - 1, true},
		{"fsimage_9999999999999999999", 0, 0, false}, // overflows int64
		{"fsimage_42", 0, 0, false},
		{"fsimage_rollback_0000000000000000042", 0, 0, false},
		{"fsimage_000000000000000004x", 0, 0, false},
		{"fsimage_0000000000000000042.tmp", 0, 0, false},
		{"edits_0000000000000000001-0000000000000000002", 0, 0, false},
		{"VERSION", 0, 0, false},
	}
	for _, tt := range tests {
		kind, txid, ok := ParseImageName(tt.name)
		if kind != tt.kind || txid != tt.txid || ok != tt.ok {
			t.Errorf("ParseImageName(%q) = %v %d %v, want %v %d %v", tt.name, kind, txid, ok, tt.kind, tt.txid, tt.ok)
		}
	}
}

func TestSeenTxID(t *testing.T) {
	m := vfs.NewMem()
	d := NewNameDir("/nn")
	if err := m.MkdirAll(d.Current(), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadSeenTxID(m); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing seen_txid: %v", err)
	}
	if err := d.WriteSeenTxID(m, 12345); err != nil {
		t.Fatal(err)
	}
	if data, _ := ReadFile(m, d.SeenTxIDPath()); string(data) != "12345\n" {
		t.Errorf("seen_txid holds %q", data)
	}
	if n, err := d.ReadSeenTxID(m); err != nil || n != 12345 {
		t.Errorf("read %d, %v", n, err)
	}
	if err := d.WriteSeenTxID(m, -1); !errors.Is(err, ErrInvalidSeenTxID) {
		t.Errorf("negative: %v", err)
	}
	for _, bad := range []string{"", "abc\n", "-5\n", "1 2\n"} {
		if err := AtomicWriteFile(m, d.SeenTxIDPath(), []byte(bad)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ReadSeenTxID(m); !errors.Is(err, ErrInvalidSeenTxID) || !strings.Contains(err.Error(), d.SeenTxIDPath()) {
			t.Errorf("seen_txid %q: %v", bad, err)
		}
	}
}

func TestFormatAndAnalyze(t *testing.T) {
	m := vfs.NewMem()
	d := NewNameDir("/data/nn")
	v := &Version{LayoutVersion: NameNodeLayoutVersion, NamespaceID: 9, ClusterID: "CID-a", StorageType: StorageTypeNameNode, BlockPoolID: "BP-1"}

	a, err := d.Analyze(m)
	if err != nil || a.State != StateNonExistent {
		t.Fatalf("fresh: %+v %v", a, err)
	}
	if err := m.MkdirAll(d.Root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	lk, err := d.Lock(m)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	if a, _ := d.Analyze(m); a.State != StateNotFormatted {
		t.Fatalf("empty dir: %+v", a)
	}
	// Only the lock file: formatting an empty dir needs no force.
	if err := d.Format(m, v, testNow, false); err != nil {
		t.Fatal(err)
	}
	if a, _ := d.Analyze(m); a.State != StateFormatted || len(a.Leftovers) != 0 {
		t.Fatalf("after format: %+v", a)
	}
	// Formatting survives a crash.
	c := m.CrashClone()
	got, err := d.ReadVersion(c)
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("after crash: %+v %v", got, err)
	}

	// Leftovers of interrupted operations are reported.
	for _, p := range []string{d.CheckpointPath(5), d.CheckpointMD5Path(5), d.SeenTxIDPath() + TmpSuffix, d.ImagePath(3)} {
		if err := AtomicWriteFile(m, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.MkdirAll(filepath.Join(d.Root, "previous.tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	a, err = d.Analyze(m)
	if err != nil {
		t.Fatal(err)
	}
	wantLeft := []string{
		"/data/nn/previous.tmp",
		d.CheckpointPath(5), d.CheckpointMD5Path(5), d.SeenTxIDPath() + TmpSuffix,
	}
	if a.State != StateFormatted || !reflect.DeepEqual(a.Leftovers, wantLeft) {
		t.Errorf("analysis %+v, want leftovers %v", a, wantLeft)
	}
	if err := d.RemoveTmpFiles(m); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat(d.SeenTxIDPath() + TmpSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("tmp file not removed: %v", err)
	}

	// A formatted dir is refused without force and wiped with it.
	err = d.Format(m, v, testNow, false)
	if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "/data/nn") {
		t.Fatalf("reformat without force: %v", err)
	}
	v2 := *v
	v2.NamespaceID = 10
	if err := d.Format(m, &v2, testNow, true); err != nil {
		t.Fatal(err)
	}
	names, _ := m.List(d.Current())
	if !reflect.DeepEqual(names, []string{VersionFileName}) {
		t.Errorf("after forced format current/ holds %v", names)
	}
	if names, _ := m.List(d.Root); !reflect.DeepEqual(names, []string{CurrentDirName, LockFileName}) {
		t.Errorf("after forced format root holds %v", names)
	}
	if got, _ := d.ReadVersion(m); got.NamespaceID != 10 {
		t.Errorf("namespace id %d after reformat", got.NamespaceID)
	}
	// An invalid version is refused before anything is touched.
	bad := *v
	bad.ClusterID = ""
	if err := d.Format(m, &bad, testNow, true); !errors.Is(err, ErrInvalidVersion) {
		t.Errorf("invalid version: %v", err)
	}
}

func TestCheckType(t *testing.T) {
	bp := "namespaceID=1\ncTime=0\nblockpoolID=BP-1\nlayoutVersion=-57\nclusterID=CID-1\n"
	v, err := ParseVersion("/nn/current/VERSION", []byte(bp))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Extra, []Property{{"clusterID", "CID-1"}}) {
		t.Errorf("extra %+v", v.Extra)
	}
	err = v.CheckType("/nn/current/VERSION", StorageTypeNameNode)
	if !errors.Is(err, ErrInvalidVersion) || !strings.Contains(err.Error(), "field storageType") {
		t.Errorf("CheckType: %v", err)
	}
	if err := v.CheckType("x", StorageTypeBlockPool); err != nil {
		t.Errorf("CheckType of the right type: %v", err)
	}
}
