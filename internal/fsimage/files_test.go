package fsimage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// newNameDirs returns a MemFS holding durable, empty current/ dirs for names.
func newNameDirs(t *testing.T, names ...string) (*vfs.MemFS, []string) {
	t.Helper()
	m := vfs.NewMem()
	var dirs []string
	for _, n := range names {
		d := "/" + n
		if err := m.MkdirAll(path.Join(d, "current"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := m.SyncDir(d); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return m, dirs
}

func exportOf(inodes []Inode) func(fn func(*Inode) error) error {
	return func(fn func(*Inode) error) error {
		for i := range inodes {
			if err := fn(&inodes[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// loadTree loads from dirs and returns the txid and the inodes read.
func loadTree(fsys vfs.FS, dirs []string) (int64, []Inode, error) {
	var got []Inode
	txid, err := Load(fsys, dirs, func(h Header, r *Reader) error {
		got = nil // a fresh structure per attempt
		var err error
		got, err = readAll(r)
		return err
	})
	return txid, got, err
}

func TestSaveListLoad(t *testing.T) {
	m, dirs := newNameDirs(t, "nn1", "nn2")
	old := genTree(5, 500)
	cur := genTree(6, 2000)
	if err := Save(m, dirs, header(10, len(old)), exportOf(old)); err != nil {
		t.Fatal(err)
	}
	if err := Save(m, dirs, header(20, len(cur)), exportOf(cur)); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		imgs, err := List(m, d)
		if err != nil {
			t.Fatal(err)
		}
		if len(imgs) != 2 || imgs[0].TxID != 10 || imgs[1].TxID != 20 || imgs[1].Path != d+"/current/fsimage_0000000000000000020" {
			t.Fatalf("List(%s) = %+v", d, imgs)
		}
		names, _ := m.List(d + "/current")
		if !reflect.DeepEqual(names, []string{
			"fsimage_0000000000000000010", "fsimage_0000000000000000010.md5",
			"fsimage_0000000000000000020", "fsimage_0000000000000000020.md5"}) {
			t.Errorf("%s/current holds %v", d, names)
		}
		data, _ := storage.ReadFile(m, d+"/current/fsimage_0000000000000000020.md5")
		if !strings.HasSuffix(string(data), " *fsimage_0000000000000000020\n") || len(data) != 32+2+27+1 {
			t.Errorf("md5 file %q", data)
		}
	}
	// Everything survives a crash right after Save returned.
	txid, got, err := loadTree(m.CrashClone(), dirs)
	if err != nil || txid != 20 {
		t.Fatalf("Load = %d, %v", txid, err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(slices.Clone(cur))) {
		t.Fatal("loaded tree differs from the saved one")
	}

	// A bad md5 in the first dir: the second dir's copy of 20 loads.
	if err := storage.AtomicWriteFile(m, dirs[0]+"/current/fsimage_0000000000000000020.md5",
		MD5Line([16]byte{1}, "fsimage_0000000000000000020")); err != nil {
		t.Fatal(err)
	}
	if txid, _, err := loadTree(m, dirs); err != nil || txid != 20 {
		t.Fatalf("with one bad md5: Load = %d, %v", txid, err)
	}
	// Corrupt 20 in the second dir too (a flipped byte with the CRC still
	// right cannot happen by accident; a stale md5 can): falls back to 10.
	if err := storage.AtomicWriteFile(m, dirs[1]+"/current/fsimage_0000000000000000020.md5",
		MD5Line([16]byte{2}, "fsimage_0000000000000000020")); err != nil {
		t.Fatal(err)
	}
	txid, got, err = loadTree(m, dirs)
	if err != nil || txid != 10 {
		t.Fatalf("with both md5s bad: Load = %d, %v", txid, err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(slices.Clone(old))) {
		t.Fatal("fallback tree differs from image 10")
	}
	// Corrupt image 10 in both dirs: nothing loads; the error names the files.
	for _, d := range dirs {
		p := d + "/current/fsimage_0000000000000000010"
		data, _ := readWhole(m, p)
		data[len(data)/2] ^= 0x40
		writeWhole(t, m, p, data)
	}
	_, _, err = loadTree(m, dirs)
	if !errors.Is(err, ErrMD5Mismatch) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("all bad: %v", err)
	}
	for _, want := range []string{"/nn1/current/fsimage_0000000000000000020", "/nn2/current/fsimage_0000000000000000010", "offset"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func readWhole(fsys vfs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func writeWhole(t *testing.T, fsys vfs.FS, p string, data []byte) {
	t.Helper()
	f, err := fsys.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	m, dirs := newNameDirs(t, "nn")
	if _, _, err := loadTree(m, dirs); !errors.Is(err, ErrNoImage) {
		t.Errorf("empty dir: %v", err)
	}
	inodes := genTree(7, 50)
	if err := Save(m, dirs, header(5, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	// A loader that stops early fails the load.
	_, err := Load(m, dirs, func(h Header, r *Reader) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "stopped before the last inode") {
		t.Errorf("early stop: %v", err)
	}
	// A loader error is reported with the file name.
	boom := errors.New("boom")
	_, err = Load(m, dirs, func(h Header, r *Reader) error { return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "fsimage_0000000000000000005") {
		t.Errorf("loader error: %v", err)
	}
	// An md5 file naming another image is refused.
	if err := storage.AtomicWriteFile(m, "/nn/current/fsimage_0000000000000000005.md5", MD5Line([16]byte{}, "fsimage_0000000000000000004")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadTree(m, dirs); !errors.Is(err, ErrBadMD5File) {
		t.Errorf("wrong md5 reference: %v", err)
	}
	// An image renamed to another txid is refused.
	m2, dirs2 := newNameDirs(t, "nn")
	if err := Save(m2, dirs2, header(5, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	data, _ := readWhole(m2, "/nn/current/fsimage_0000000000000000005")
	writeWhole(t, m2, "/nn/current/fsimage_0000000000000000006", data)
	writeWhole(t, m2, "/nn/current/fsimage_0000000000000000006.md5", MD5Line(md5Sum(data), "fsimage_0000000000000000006"))
	if err := m2.Remove("/nn/current/fsimage_0000000000000000005.md5"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadTree(m2, dirs2); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "does not match the file name") {
		t.Errorf("renamed image: %v", err)
	}
}

func TestParseMD5Line(t *testing.T) {
	name := "fsimage_0000000000000000005"
	sum := [16]byte{0xde, 0xad, 0xbe, 0xef}
	good := string(MD5Line(sum, name))
	if good != "deadbeef000000000000000000000000 *fsimage_0000000000000000005\n" {
		t.Errorf("MD5Line = %q", good)
	}
	tests := []struct {
		text string
		ok   bool
	}{
		{good, true},
		{strings.ToUpper(good[:32]) + good[32:], true},
		{"deadbeef000000000000000000000000  fsimage_0000000000000000005", true}, // text mode marker
		{"deadbeef00000000000000000000000 *fsimage_0000000000000000005\n", false},
		{"deadbeef00000000000000000000000z *fsimage_0000000000000000005\n", false},
		{"deadbeef000000000000000000000000 *fsimage_0000000000000000004\n", false},
		{"deadbeef000000000000000000000000\n", false},
		{"", false},
	}
	for _, tt := range tests {
		got, err := ParseMD5Line([]byte(tt.text), name)
		if (err == nil) != tt.ok || (tt.ok && got != sum) {
			t.Errorf("ParseMD5Line(%q) = %x, %v", tt.text, got, err)
		}
		if err != nil && !errors.Is(err, ErrBadMD5File) {
			t.Errorf("ParseMD5Line(%q) error %v is not ErrBadMD5File", tt.text, err)
		}
	}
}

func TestSaveDirFailure(t *testing.T) {
	m, dirs := newNameDirs(t, "nn1", "nn2", "nn3")
	inodes := genTree(8, 3000)
	failing := vfs.WithErrors(m, func(op vfs.Op, p string) error {
		if strings.HasPrefix(p, "/nn2/") && op == vfs.OpWrite {
			return errors.New("injected EIO")
		}
		if strings.HasPrefix(p, "/nn3/") && op == vfs.OpRename {
			return errors.New("injected rename failure")
		}
		return nil
	})
	err := Save(failing, dirs, header(30, len(inodes)), exportOf(inodes))
	var se *SaveError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a SaveError", err)
	}
	if !reflect.DeepEqual(se.Succeeded, []string{"/nn1"}) || len(se.Failed) != 2 ||
		se.Failed[0].Dir != "/nn2" || se.Failed[1].Dir != "/nn3" {
		t.Fatalf("SaveError %+v", se)
	}
	if !strings.Contains(err.Error(), "injected EIO") || !strings.Contains(err.Error(), "injected rename failure") {
		t.Errorf("error text %q", err)
	}
	for _, d := range dirs[1:] {
		if names, _ := m.List(d + "/current"); len(names) != 0 {
			t.Errorf("%s/current holds %v after a failed save", d, names)
		}
	}
	if imgs, _ := List(m, "/nn1"); len(imgs) != 1 || imgs[0].TxID != 30 {
		t.Errorf("nn1 images %+v", imgs)
	}
	// Every dir failing: a SaveError with no success.
	allBad := vfs.WithErrors(m, func(op vfs.Op, p string) error {
		if op == vfs.OpWrite {
			return errors.New("disk gone")
		}
		return nil
	})
	err = Save(allBad, dirs, header(31, len(inodes)), exportOf(inodes))
	if !errors.As(err, &se) || len(se.Succeeded) != 0 || len(se.Failed) != 3 {
		t.Fatalf("all dirs failing: %v", err)
	}
	// An export error: no dir gets an image, no leftovers.
	boom := errors.New("walk failed")
	err = Save(m, dirs, header(32, len(inodes)), func(fn func(*Inode) error) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("export error: %v", err)
	}
	for _, d := range dirs {
		names, _ := m.List(d + "/current")
		for _, n := range names {
			if strings.Contains(n, "ckpt") || strings.Contains(n, "0032") {
				t.Errorf("%s: leftover %s", d, n)
			}
		}
	}
}

// TestSaveCrash crashes the file system at every step of Save (the k-th
// file-system call fails and the durable state at that instant is kept) and
// checks that after CleanCheckpoints only complete images remain, that the
// newest loads, and that it is either the old image or the new one.
func TestSaveCrash(t *testing.T) {
	oldTree := genTree(9, 200)
	newTree := genTree(10, 30000) // more than one 1 MiB chunk
	for k := 0; ; k++ {
		m, dirs := newNameDirs(t, "nn1", "nn2")
		if err := Save(m, dirs, header(10, len(oldTree)), exportOf(oldTree)); err != nil {
			t.Fatal(err)
		}
		var (
			mu      sync.Mutex
			calls   int
			crashed *vfs.MemFS
		)
		failing := vfs.WithErrors(m, func(op vfs.Op, p string) error {
			mu.Lock()
			defer mu.Unlock()
			if crashed != nil {
				return errors.New("crashed")
			}
			calls++
			if calls > k {
				crashed = m.CrashClone()
				return errors.New("crashed")
			}
			return nil
		})
		err := Save(failing, dirs, header(20, len(newTree)), exportOf(newTree))
		if crashed == nil {
			if err != nil {
				t.Fatalf("k=%d: no crash but %v", k, err)
			}
			if k < 10 {
				t.Fatalf("Save finished in %d calls: the crash points were not exercised", k)
			}
			t.Logf("crashed at each of %d points", k)
			return
		}
		for _, d := range dirs {
			if err := CleanCheckpoints(crashed, d); err != nil {
				t.Fatalf("k=%d: %v", k, err)
			}
			names, _ := crashed.List(d + "/current")
			for _, n := range names {
				kind, _, ok := storage.ParseImageName(n)
				if !ok || kind == storage.KindCheckpoint || kind == storage.KindCheckpointMD5 {
					t.Fatalf("k=%d: %s left after CleanCheckpoints: %v", k, d, names)
				}
			}
			if len(names)%2 != 0 {
				t.Fatalf("k=%d: %s holds an image without its md5: %v", k, d, names)
			}
		}
		txid, got, err := loadTree(crashed, dirs)
		if err != nil {
			t.Fatalf("k=%d: load after crash: %v", k, err)
		}
		want := oldTree
		if txid == 20 {
			want = newTree
		} else if txid != 10 {
			t.Fatalf("k=%d: loaded txid %d", k, txid)
		}
		if !reflect.DeepEqual(normalize(got), normalize(slices.Clone(want))) {
			t.Fatalf("k=%d: image %d loaded wrong contents", k, txid)
		}
	}
}

func TestCleanCheckpoints(t *testing.T) {
	m, dirs := newNameDirs(t, "nn")
	inodes := genTree(11, 20)
	if err := Save(m, dirs, header(3, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	cur := "/nn/current/"
	for _, n := range []string{
		"fsimage.ckpt_0000000000000000009", "fsimage.ckpt_0000000000000000009.md5",
		"fsimage_0000000000000000008",     // image without md5: unfinished save
		"fsimage_0000000000000000007.md5", // md5 without image
		"edits_0000000000000000001-0000000000000000003", "VERSION", "seen_txid",
	} {
		writeWhole(t, m, cur+n, []byte("x"))
	}
	imgs, err := List(m, "/nn")
	if err != nil || len(imgs) != 1 || imgs[0].TxID != 3 {
		t.Fatalf("List = %+v, %v", imgs, err)
	}
	if err := CleanCheckpoints(m, "/nn"); err != nil {
		t.Fatal(err)
	}
	names, _ := m.List("/nn/current")
	want := []string{"VERSION", "edits_0000000000000000001-0000000000000000003",
		"fsimage_0000000000000000003", "fsimage_0000000000000000003.md5", "seen_txid"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("after CleanCheckpoints: %v, want %v", names, want)
	}
}

func TestPurge(t *testing.T) {
	m, dirs := newNameDirs(t, "nn1", "nn2")
	inodes := genTree(12, 10)
	for _, txid := range []int64{10, 20, 30, 40} {
		if err := Save(m, dirs, header(txid, len(inodes)), exportOf(inodes)); err != nil {
			t.Fatal(err)
		}
	}
	// nn2 also has an image nn1 lacks: retention counts over all dirs.
	if err := Save(m, dirs[1:], header(50, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		keep       int
		wantOldest int64
		want1      []int64
		want2      []int64
	}{
		{keep: 3, wantOldest: 30, want1: []int64{30, 40}, want2: []int64{30, 40, 50}},
		{keep: 2, wantOldest: 40, want1: []int64{40}, want2: []int64{40, 50}},
		{keep: 5, wantOldest: 40, want1: []int64{40}, want2: []int64{40, 50}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("keep", tt.keep), func(t *testing.T) {
			oldest, err := Purge(m, dirs, tt.keep)
			if err != nil || oldest != tt.wantOldest {
				t.Fatalf("Purge = %d, %v; want %d", oldest, err, tt.wantOldest)
			}
			for i, want := range [][]int64{tt.want1, tt.want2} {
				imgs, _ := List(m, dirs[i])
				var got []int64
				for _, img := range imgs {
					got = append(got, img.TxID)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s keeps %v, want %v", dirs[i], got, want)
				}
				names, _ := m.List(dirs[i] + "/current")
				if len(names) != 2*len(want) {
					t.Errorf("%s holds %v", dirs[i], names)
				}
			}
		})
	}
	if _, err := Purge(m, dirs, 0); err == nil {
		t.Error("keep 0 accepted")
	}
	m2, dirs2 := newNameDirs(t, "empty")
	if _, err := Purge(m2, dirs2, 2); !errors.Is(err, ErrNoImage) {
		t.Errorf("no images: %v", err)
	}
}

func TestSaveOnDisk(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := vfs.Default.MkdirAll(d+"/current", 0o700); err != nil {
			t.Fatal(err)
		}
	}
	inodes := genTree(13, 1000)
	if err := Save(vfs.Default, dirs, header(77, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	txid, got, err := loadTree(vfs.Default, dirs)
	if err != nil || txid != 77 || !reflect.DeepEqual(normalize(got), normalize(slices.Clone(inodes))) {
		t.Fatalf("Load = %d, %v", txid, err)
	}
}

func TestSaveEncoded(t *testing.T) {
	m, dirs := newNameDirs(t, "nn1", "nn2")
	inodes := genTree(16, 3000)
	data, sum := encodeImage(t, header(40, len(inodes)), inodes)

	// A wrong MD5 from the sender: nothing is stored anywhere.
	bad := sum
	bad[0] ^= 1
	err := SaveEncoded(m, dirs, 40, bytes.NewReader(data), &bad)
	if !errors.Is(err, ErrMD5Mismatch) {
		t.Fatalf("wrong md5: %v", err)
	}
	for _, d := range dirs {
		if names, _ := m.List(d + "/current"); len(names) != 0 {
			t.Fatalf("%s holds %v after a refused upload", d, names)
		}
	}
	if err := SaveEncoded(m, dirs, 40, bytes.NewReader(data), &sum); err != nil {
		t.Fatal(err)
	}
	txid, got, err := loadTree(m, dirs)
	if err != nil || txid != 40 || !reflect.DeepEqual(normalize(got), normalize(slices.Clone(inodes))) {
		t.Fatalf("Load after SaveEncoded = %d, %v", txid, err)
	}
	// Saving the same txid again replaces the image and stays loadable.
	if err := Save(m, dirs, header(40, len(inodes)), exportOf(inodes)); err != nil {
		t.Fatal(err)
	}
	if txid, _, err := loadTree(m, dirs); err != nil || txid != 40 {
		t.Fatalf("Load after re-save = %d, %v", txid, err)
	}
}
