package writable

import (
	"errors"
	"testing"
)

var errBad = errors.New("bad")

func TestVLong(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, 128, -112, -113, 255, 256, 1 << 20, -1 << 20, 1<<63 - 1, -1 << 63, 1796279510586} {
		b := AppendVLong(nil, v)
		r := NewReader(b, 0, errBad)
		if got := r.VLong(); got != v || r.Err != nil || r.Off != len(b) {
			t.Errorf("vlong %d: got %d, %v", v, got, r.Err)
		}
	}
	// Hadoop's encoding of 1000: 0x8E (-114: two bytes follow), 0x03 0xE8.
	if b := AppendVLong(nil, 1000); string(b) != "\x8e\x03\xe8" {
		t.Errorf("1000 encodes as % x", b)
	}
}

func TestTextAndMalformed(t *testing.T) {
	b := AppendText(AppendText(nil, "hdfs"), "")
	r := NewReader(b, 0, errBad)
	if a, e := r.Text(), r.Text(); a != "hdfs" || e != "" || r.Err != nil {
		t.Fatalf("texts %q %q, %v", a, e, r.Err)
	}
	// A length beyond the bytes at hand.
	r = NewReader(append(AppendVLong(nil, 10), 'x'), 0, errBad)
	if r.Text(); r.Err != errBad {
		t.Errorf("text longer than its bytes: %v", r.Err)
	}
	// A vlong cut short, and a vint out of range.
	for _, in := range [][]byte{{0x8e, 0x03}, AppendVLong(nil, 1<<40)} {
		r := NewReader(in, 0, errBad)
		if r.VInt(); r.Err != errBad {
			t.Errorf("% x: %v, want the malformed error", in, r.Err)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add(AppendText(AppendVLong(nil, -7), "x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b, 0, errBad)
		for r.Err == nil && r.Off < len(b) {
			before := r.Off
			r.Text()
			if r.Err == nil && r.Off <= before {
				t.Fatal("no progress")
			}
		}
	})
}
