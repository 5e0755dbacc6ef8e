package fsimage

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

const rootID = 16385

// genTree returns a pre-order list of n inodes: directories, closed files
// with blocks, files under construction, quotas, unicode and binary names.
func genTree(seed uint64, n int) []Inode {
	rng := rand.New(rand.NewPCG(seed, 1))
	users := []string{"hdfs", "alice", "bob", "ünïcødé", ""}
	groups := []string{"supergroup", "staff", "数据"}
	out := []Inode{{ID: rootID, IsDir: true, Perm: op.Perm{User: "hdfs", Group: "supergroup", Mode: 0o755},
		Mtime: 1764622225000, NsQuota: 1 << 62, DsQuota: -1}}
	dirs := []uint64{rootID}
	nextID := uint64(rootID + 1)
	blockID := int64(1 << 30)
	gs := int64(1001)
	// Emit in pre-order: build parent/child lists, then walk.
	children := map[uint64][]int{}
	for len(out) < n {
		parent := dirs[rng.IntN(len(dirs))]
		in := Inode{ID: nextID, ParentID: parent, NsQuota: -1, DsQuota: -1,
			Perm:  op.Perm{User: users[rng.IntN(len(users))], Group: groups[rng.IntN(len(groups))], Mode: uint16(rng.IntN(0o10000))},
			Mtime: 1764622225000 + rng.Int64N(1e9), Atime: 1764622225000 + rng.Int64N(1e9)}
		nextID += 1 + uint64(rng.IntN(3))
		if rng.IntN(20) == 0 {
			in.StoragePolicy = uint8(rng.IntN(16))
			for range rng.IntN(3) {
				x := op.XAttr{NS: uint8(rng.IntN(5)), Name: fmt.Sprintf("x%d", rng.IntN(4))}
				if rng.IntN(3) > 0 {
					x.Value = []byte(fmt.Sprintf("v%d", rng.IntN(100)))
				}
				in.XAttrs = append(in.XAttrs, x)
			}
			for range rng.IntN(3) {
				in.ACL = append(in.ACL, op.ACLEntry{Scope: uint8(rng.IntN(2)), Type: uint8(rng.IntN(4)), Perm: uint8(rng.IntN(8)), Name: users[rng.IntN(len(users))]})
			}
		}
		switch k := rng.IntN(10); {
		case k < 2:
			in.IsDir = true
			in.Atime = 0
			in.Name = []byte(fmt.Sprintf("dir%d", in.ID))
			in.Snapshottable = rng.IntN(8) == 0
			if k == 0 {
				in.NsQuota, in.DsQuota = rng.Int64N(1e6), -1
				if rng.IntN(2) == 0 {
					in.DsQuota = rng.Int64N(1 << 40)
				}
			}
			dirs = append(dirs, in.ID)
		default:
			in.Replication = uint16(1 + rng.IntN(3))
			in.BlockSize = 128 << 20
			if rng.IntN(5) == 0 {
				in.BlockSize = int64(1+rng.IntN(64)) << 20
			}
			nb := rng.IntN(4)
			for b := 0; b < nb; b++ {
				blockID++
				gs += int64(rng.IntN(3))
				in.Blocks = append(in.Blocks, op.Block{ID: blockID, NumBytes: rng.Int64N(in.BlockSize + 1), GenStamp: gs})
			}
			if rng.IntN(8) == 0 {
				in.UC = &UnderConstruction{ClientName: fmt.Sprintf("DFSClient_NONMAPREDUCE_%d_1", rng.IntN(5)), ClientMachine: "127.0.0.1"}
			}
			switch rng.IntN(4) {
			case 0:
				in.Name = []byte(fmt.Sprintf("файл-%d-😀", in.ID))
			case 1:
				in.Name = []byte{0xff, 0x00, byte(in.ID), byte(in.ID >> 8), 0x80}
			default:
				in.Name = []byte(fmt.Sprintf("part-%05d", in.ID))
			}
		}
		children[parent] = append(children[parent], len(out))
		out = append(out, in)
	}
	var pre []Inode
	var walk func(i int)
	walk = func(i int) {
		pre = append(pre, out[i])
		for _, c := range children[out[i].ID] {
			walk(c)
		}
	}
	walk(0)
	return pre
}

func header(txid int64, n int) Header {
	return Header{LayoutVersion: storage.NameNodeLayoutVersion, NamespaceID: 4711, TxID: txid,
		LastInodeID: rootID + 50000, GenStamp: 5000, LastBlockID: 1<<30 + 40000, NumInodes: uint64(n)}
}

func encodeImage(t testing.TB, h Header, inodes []Inode) ([]byte, [16]byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range inodes {
		if err := w.Write(&inodes[i]); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum
}

// cloneInode copies what Reader.Next lends.
func cloneInode(in *Inode) Inode {
	c := *in
	c.Name = slices.Clone(in.Name)
	c.Blocks = slices.Clone(in.Blocks)
	c.XAttrs = slices.Clone(in.XAttrs)
	c.ACL = slices.Clone(in.ACL)
	if in.UC != nil {
		uc := *in.UC
		c.UC = &uc
	}
	return c
}

func readAll(r *Reader) ([]Inode, error) {
	var out []Inode
	for {
		in, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cloneInode(in))
	}
}

// normalize makes empty slices nil so reflect.DeepEqual compares contents.
func normalize(ins []Inode) []Inode {
	for i := range ins {
		if len(ins[i].Blocks) == 0 {
			ins[i].Blocks = nil
		}
		if len(ins[i].Name) == 0 {
			ins[i].Name = nil
		}
		if len(ins[i].XAttrs) == 0 {
			ins[i].XAttrs = nil
		}
		if len(ins[i].ACL) == 0 {
			ins[i].ACL = nil
		}
	}
	return ins
}

func TestRoundTrip(t *testing.T) {
	inodes := genTree(1, 10000)
	h := header(123456, len(inodes))
	data, sum := encodeImage(t, h, inodes)
	if sum != md5.Sum(data) {
		t.Fatalf("Close returned md5 %x, the bytes hash to %x", sum, md5.Sum(data))
	}
	t.Logf("%d inodes in %d bytes (%.1f bytes/inode)", len(inodes), len(data), float64(len(data))/float64(len(inodes)))
	r, gotH, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotH, h) {
		t.Errorf("header %+v, want %+v", gotH, h)
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(slices.Clone(inodes))) {
		for i := range inodes {
			if i >= len(got) || !reflect.DeepEqual(got[i], inodes[i]) {
				t.Fatalf("inode %d: got %+v, want %+v", i, got[min(i, len(got)-1)], inodes[i])
			}
		}
		t.Fatalf("got %d inodes, want %d", len(got), len(inodes))
	}
	// Next keeps returning io.EOF.
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the end: %v", err)
	}
}

func TestExtremeValues(t *testing.T) {
	inodes := []Inode{
		{ID: rootID, IsDir: true, NsQuota: -1, DsQuota: -1},
		{ID: 1<<64 - 1, ParentID: rootID, Name: []byte("max"), Mtime: -1 << 63, Atime: 1<<63 - 1,
			NsQuota: 0, DsQuota: 0, Replication: 0xffff, BlockSize: -1 << 63,
			Blocks: []op.Block{{ID: 1<<63 - 1, NumBytes: -1 << 63, GenStamp: -1 << 63}, {ID: -1 << 63, NumBytes: 1<<63 - 1, GenStamp: 1<<63 - 1}},
			Perm:   op.Perm{User: strings.Repeat("u", MaxStringLen), Mode: 0xffff},
			UC:     &UnderConstruction{}},
		{ID: 0, ParentID: 1<<64 - 1, Name: bytes.Repeat([]byte{'/'}, MaxNameLen), IsDir: true, NsQuota: 1<<63 - 1, DsQuota: -1 << 63},
	}
	h := Header{LayoutVersion: -1 << 31, NamespaceID: 1<<31 - 1, TxID: -1, LastInodeID: 1<<64 - 1, GenStamp: -1 << 63, LastBlockID: 1<<63 - 1, NumInodes: 3, Delegation: []byte{1, 2, 3}, Snapshots: []byte{4, 5}}
	data, _ := encodeImage(t, h, inodes)
	r, gotH, err := NewReader(bytes.NewReader(data))
	if err != nil || !reflect.DeepEqual(gotH, h) {
		t.Fatalf("header %+v %v", gotH, err)
	}
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(inodes)) {
		t.Errorf("got %+v\nwant %+v", got, inodes)
	}
}

func TestWriterRejects(t *testing.T) {
	root := Inode{ID: rootID, IsDir: true, NsQuota: -1, DsQuota: -1}
	tests := []struct {
		name  string
		first Inode
		next  *Inode
		want  error
	}{
		{"root with a name", Inode{ID: rootID, IsDir: true, Name: []byte("x")}, nil, ErrInvalidInode},
		{"root is a file", Inode{ID: rootID}, nil, ErrInvalidInode},
		{"root with a parent", Inode{ID: rootID, IsDir: true, ParentID: 1}, nil, ErrInvalidInode},
		{"empty child name", root, &Inode{ID: 2, ParentID: rootID}, ErrInvalidInode},
		{"dir with blocks", root, &Inode{ID: 2, ParentID: rootID, Name: []byte("d"), IsDir: true, Blocks: []op.Block{{ID: 1}}}, ErrInvalidInode},
		{"dir under construction", root, &Inode{ID: 2, ParentID: rootID, Name: []byte("d"), IsDir: true, UC: &UnderConstruction{}}, ErrInvalidInode},
		{"name too long", root, &Inode{ID: 2, ParentID: rootID, Name: make([]byte, MaxNameLen+1)}, ErrInvalidInode},
		{"user too long", root, &Inode{ID: 2, ParentID: rootID, Name: []byte("f"), Perm: op.Perm{User: strings.Repeat("x", MaxStringLen+1)}}, ErrInvalidInode},
		{"too many blocks", root, &Inode{ID: 2, ParentID: rootID, Name: []byte("f"), Blocks: make([]op.Block, MaxBlocksPerFile+1)}, ErrInvalidInode},
		{"more than the header says", root, &Inode{ID: 2, ParentID: rootID, Name: []byte("f")}, ErrCountMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 2
			if tt.want == ErrCountMismatch {
				n = 1
			}
			w, err := NewWriter(io.Discard, header(1, n))
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(&tt.first)
			if tt.next != nil {
				if err != nil {
					t.Fatalf("first: %v", err)
				}
				err = w.Write(tt.next)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	// Too few inodes: Close refuses.
	w, _ := NewWriter(io.Discard, header(1, 2))
	if err := w.Write(&root); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); !errors.Is(err, ErrCountMismatch) {
		t.Errorf("Close with too few: %v", err)
	}
}

func readImage(data []byte) error {
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	_, err = readAll(r)
	return err
}

// TestCorruptionDetected flips bytes and cuts the file everywhere in a small
// image: every damage must be reported as a CorruptError at or before the
// damaged byte.
func TestCorruptionDetected(t *testing.T) {
	inodes := genTree(2, 300)
	data, _ := encodeImage(t, header(7, len(inodes)), inodes)
	rng := rand.New(rand.NewPCG(3, 3))
	for pos := 0; pos < len(data); pos++ {
		bad := slices.Clone(data)
		bad[pos] ^= byte(1 + rng.IntN(255))
		err := readImage(bad)
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: err = %v, want a CorruptError", pos, err)
		}
		if ce.Offset > int64(pos) {
			t.Fatalf("flip at %d reported at offset %d: %v", pos, ce.Offset, err)
		}
	}
	for n := 0; n < len(data); n++ {
		err := readImage(data[:n])
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: err = %v, want ErrCorrupt", n, err)
		}
	}
	if err := readImage(append(slices.Clone(data), 0)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "after the trailer") {
		t.Errorf("trailing byte: %v", err)
	}
}

func FuzzReadImage(f *testing.F) {
	inodes := genTree(4, 40)
	data, _ := encodeImage(f, header(9, len(inodes)), inodes)
	f.Add(data)
	f.Add(data[:100])
	f.Add([]byte(Magic + "\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("NewReader error not ErrCorrupt: %v", err)
			}
			return
		}
		for i := 0; ; i++ {
			_, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Next error not ErrCorrupt: %v", err)
				}
				return
			}
		}
	})
}

func md5Sum(b []byte) [16]byte { return md5.Sum(b) }

// frameBytes builds one well-formed frame around payload.
func frameBytes(kind byte, payload []byte) []byte {
	b := []byte{kind}
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// FuzzReadInodeFrame feeds arbitrary record bytes inside a frame whose CRC is
// right, so the fuzzer exercises the record decoder rather than the CRC.
func FuzzReadInodeFrame(f *testing.F) {
	inodes := genTree(14, 30)
	data, _ := encodeImage(f, header(9, len(inodes)), inodes)
	// Seed with the real inode frame's payload: after the preamble and the
	// header frame.
	r, _, err := NewReader(bytes.NewReader(data))
	if err != nil {
		f.Fatal(err)
	}
	p := data[r.off:]
	n, k := binary.Uvarint(p[1:])
	f.Add(slices.Clone(p[1+k : 1+k+int(n)]))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		img := []byte(Magic + "\x00\x00\x00\x01")
		var h []byte
		for _, v := range []uint64{1, 1, 1, 1, 1, 1} {
			h = binary.AppendUvarint(h, v)
		}
		h = binary.AppendUvarint(h, 1<<20) // NumInodes
		img = append(img, frameBytes(frameHeader, h)...)
		img = append(img, frameBytes(frameInodes, payload)...)
		err := readImage(img)
		if err == nil || !errors.Is(err, ErrCorrupt) {
			// The trailer is missing, so a clean read is impossible.
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})
}

func TestReadIOError(t *testing.T) {
	inodes := genTree(15, 5000)
	data, _ := encodeImage(t, header(1, len(inodes)), inodes)
	eio := errors.New("EIO")
	err := readImage(append([]byte(nil), data[:len(data)/2]...)) // cut: corrupt
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("cut file: %v", err)
	}
	r := io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(eio))
	ir, _, err := NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(ir)
	if !errors.Is(err, eio) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "offset") {
		t.Errorf("read error: %v, want the I/O error with an offset, not ErrCorrupt", err)
	}
}
