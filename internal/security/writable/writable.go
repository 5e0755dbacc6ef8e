// Package writable encodes and decodes the parts of Hadoop's Writable
// serialization that tokens use: WritableUtils' zero-compressed vlong and
// vint, and Text (a vint length, then the bytes). Decoding never trusts a
// length beyond the bytes at hand.
package writable

// AppendVLong appends i as WritableUtils.writeVLong does: one byte for
// -112..127, else a length byte and the big-endian magnitude.
func AppendVLong(b []byte, i int64) []byte {
	if i >= -112 && i <= 127 {
		return append(b, byte(i))
	}
	l := -112
	if i < 0 {
		i = ^i
		l = -120
	}
	for t := i; t != 0; t >>= 8 {
		l--
	}
	b = append(b, byte(l))
	n := -(l + 112)
	if n > 8 {
		n = -(l + 120)
	}
	for idx := n; idx != 0; idx-- {
		b = append(b, byte(i>>((idx-1)*8)))
	}
	return b
}

// AppendText appends s as a Text: its length as a vlong, then its bytes.
func AppendText(b []byte, s string) []byte {
	b = AppendVLong(b, int64(len(s)))
	return append(b, s...)
}

// Reader decodes from B starting at Off. The first problem sets Err to
// the error given to NewReader; every read after it returns zero values.
type Reader struct {
	B         []byte
	Off       int
	Err       error
	malformed error
}

// NewReader reads b from offset off; malformed is the error a problem
// sets.
func NewReader(b []byte, off int, malformed error) *Reader {
	return &Reader{B: b, Off: off, malformed: malformed}
}

// Fail records a malformed input (the first failure stays).
func (r *Reader) Fail() {
	if r.Err == nil {
		r.Err = r.malformed
	}
}

// VLong reads what AppendVLong writes.
func (r *Reader) VLong() int64 {
	if r.Err != nil || r.Off >= len(r.B) {
		r.Fail()
		return 0
	}
	first := int8(r.B[r.Off])
	r.Off++
	if first >= -112 {
		return int64(first)
	}
	neg := first < -120
	n := int(-112 - int(first))
	if neg {
		n = int(-120 - int(first))
	}
	if n > 8 || r.Off+n > len(r.B) {
		r.Fail()
		return 0
	}
	var v int64
	for _, c := range r.B[r.Off : r.Off+n] {
		v = v<<8 | int64(c)
	}
	r.Off += n
	if neg {
		v = ^v
	}
	return v
}

// VInt reads a vlong that must fit in an int32.
func (r *Reader) VInt() int32 {
	v := r.VLong()
	if v < -1<<31 || v >= 1<<31 {
		r.Fail()
		return 0
	}
	return int32(v)
}

// Text reads what AppendText writes.
func (r *Reader) Text() string {
	n := r.VLong()
	if r.Err != nil || n < 0 || n > int64(len(r.B)-r.Off) {
		r.Fail()
		return ""
	}
	s := string(r.B[r.Off : r.Off+int(n)])
	r.Off += int(n)
	return s
}
