package blocklist

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

func collect(t *testing.T, it *Iter) []Replica {
	t.Helper()
	var out []Replica
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		out = append(out, r)
	}
	if len(out) != it.Len() {
		t.Fatalf("iterator yielded %d replicas of %d", len(out), it.Len())
	}
	return out
}

func TestLongsLayout(t *testing.T) {
	reps := []Replica{
		{ID: 1, NumBytes: 10, GenStamp: 1001, State: Finalized},
		{ID: 2, NumBytes: 20, GenStamp: 1002, State: RBW},
		{ID: -4, NumBytes: 40, GenStamp: 1004, State: RWR},
		{ID: 5, NumBytes: 50, GenStamp: 1005, State: Finalized},
	}
	m1 := ^uint64(0)
	want := []uint64{2, 2, 1, 10, 1001, 5, 50, 1005, m1, m1, m1, 2, 20, 1002, 1, uint64(1<<64 - 4), 40, 1004, 2}
	got := EncodeLongs(reps)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EncodeLongs = %v\nwant %v", got, want)
	}
	it, err := NewLongs(got)
	if err != nil {
		t.Fatal(err)
	}
	dec := collect(t, it)
	wantDec := []Replica{reps[0], reps[3], reps[1], reps[2]}
	if !reflect.DeepEqual(dec, wantDec) {
		t.Fatalf("decoded %v, want %v", dec, wantDec)
	}
	if e := EncodeLongs(nil); !reflect.DeepEqual(e, []uint64{0, 0, m1, m1, m1}) {
		t.Fatalf("empty report = %v", e)
	}
	for _, bad := range [][]uint64{{1}, {1, 0, 1, 2, 3, 4}, {0, 1, m1, m1, m1}, {0, 1, 0, m1, m1, 1, 2, 3, 0}, {m1, m1}} {
		if _, err := NewLongs(bad); !errors.Is(err, ErrMalformed) {
			t.Fatalf("NewLongs(%v) = %v, want ErrMalformed", bad, err)
		}
	}
	// Without the delimiter when nothing follows it (older encoders).
	if it, err := NewLongs([]uint64{1, 0, 7, 8, 9}); err != nil || len(collect(t, it)) != 1 {
		t.Fatalf("NewLongs without delimiter: %v", err)
	}
}

// TestBuffersGolden pins the bytes of the buffers form.
func TestBuffersGolden(t *testing.T) {
	bufs, n := EncodeBuffers([]Replica{{ID: -1, NumBytes: 300, GenStamp: 1, State: RBW}, {ID: 1, State: Finalized}})
	want := []byte{0x01, 0xac, 0x02, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00}
	if n != 2 || len(bufs) != 1 || !reflect.DeepEqual(bufs[0], want) {
		t.Fatalf("EncodeBuffers = %x, %d; want %x, 2", bufs, n, want)
	}
	// Reserved high bits are masked off.
	raw := []byte{0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x05, 0x31}
	it, err := NewBuffers([][]byte{raw}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := it.Next(); r != (Replica{ID: 1, NumBytes: 0, GenStamp: 5, State: 1}) {
		t.Fatalf("masked replica = %+v", r)
	}
}

// TestBuffersStraddle: large reports are cut every 64 KiB wherever that
// falls, so varints straddle buffers.
func TestBuffersStraddle(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	reps := make([]Replica, 40_000)
	for i := range reps {
		reps[i] = Replica{ID: rnd.Int64() - 1<<62, NumBytes: rnd.Int64N(1 << 40), GenStamp: rnd.Int64N(1 << 50), State: uint8(rnd.IntN(4))}
	}
	bufs, n := EncodeBuffers(reps)
	if len(bufs) < 5 {
		t.Fatalf("%d buffers for %d replicas", len(bufs), n)
	}
	for _, b := range bufs {
		if len(b) > BufferSize {
			t.Fatalf("buffer of %d bytes", len(b))
		}
	}
	it, err := NewBuffers(bufs, n)
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, it); !reflect.DeepEqual(got, reps) {
		t.Fatal("buffers round trip differs")
	}
	// Re-cut at every size from 1 to 13 bytes.
	var all []byte
	for _, b := range bufs {
		all = append(all, b...)
	}
	for size := 1; size <= 13; size++ {
		var cut [][]byte
		for p := 0; p < len(all); p += size {
			cut = append(cut, all[p:min(p+size, len(all))])
		}
		it, err := NewBuffers(cut, n)
		if err != nil {
			t.Fatalf("cut every %d bytes: %v", size, err)
		}
		if got := collect(t, it); !reflect.DeepEqual(got, reps) {
			t.Fatalf("cut every %d bytes: replicas differ", size)
		}
	}
	for _, bad := range []struct {
		bufs [][]byte
		n    uint64
	}{
		{[][]byte{{1, 2, 3, 4}}, 2},      // more than the bytes can hold
		{[][]byte{{1, 2, 3}, {0x80}}, 1}, // cut inside a varint
		{[][]byte{{1, 2, 3, 4, 5}}, 1},   // bytes left over
		{[][]byte{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 1, 1}}, 1}, // overflow
	} {
		if _, err := NewBuffers(bad.bufs, bad.n); !errors.Is(err, ErrMalformed) {
			t.Fatalf("NewBuffers(%x, %d) = %v, want ErrMalformed", bad.bufs, bad.n, err)
		}
	}
}

// FuzzLongs decodes arbitrary long lists (a report comes from the
// network): no panic, and the replicas are what the header announces.
func FuzzLongs(f *testing.F) {
	f.Add([]byte{})
	f.Add(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 0), 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		var longs []uint64
		for len(b) >= 8 {
			longs = append(longs, binary.BigEndian.Uint64(b))
			b = b[8:]
		}
		if len(longs) >= 2 { // make small counts likely
			longs[0] %= 4
			longs[1] %= 4
		}
		it, err := NewLongs(longs)
		if err != nil {
			return
		}
		reps := collect(t, it)
		if len(longs) > 0 && uint64(len(reps)) != longs[0]+longs[1] {
			t.Fatalf("%d replicas from a report announcing %d + %d", len(reps), longs[0], longs[1])
		}
		if len(longs) == 0 {
			return
		}
		for i, r := range reps[:min(len(reps), int(longs[0]))] {
			if r.State != Finalized {
				t.Fatalf("replica %d of the finalized section has state %d", i, r.State)
			}
		}
	})
}

// FuzzBuffers decodes arbitrary buffers with a claimed count: no panic, no
// allocation beyond the input, and a report that decodes re-encodes to the
// same replicas.
func FuzzBuffers(f *testing.F) {
	bufs, _ := EncodeBuffers([]Replica{{ID: -5, NumBytes: 1 << 30, GenStamp: 1001, State: RBW}, {ID: 7, State: Finalized}})
	f.Add(bufs[0], uint8(3), uint64(2))
	f.Add([]byte{0x80, 0x80, 1, 1, 1, 1}, uint8(1), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8, n uint64) {
		var split [][]byte
		if cut == 0 {
			split = [][]byte{b}
		}
		for c := int(cut); c > 0 && len(b) > 0; {
			k := min(c, len(b))
			split, b = append(split, b[:k]), b[k:]
		}
		it, err := NewBuffers(split, n)
		if err != nil {
			return
		}
		reps := collect(t, it)
		bufs, m := EncodeBuffers(reps)
		it2, err := NewBuffers(bufs, m)
		if err != nil {
			t.Fatalf("re-encoded report refused: %v", err)
		}
		for i, r := range collect(t, it2) {
			if r != reps[i] {
				t.Fatalf("replica %d: %+v then %+v", i, reps[i], r)
			}
		}
	})
}
