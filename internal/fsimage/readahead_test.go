package fsimage

import (
	"bytes"
	"crypto/md5"
	"io"
	"math/rand/v2"
	"testing"
)

// TestHashAhead: the bytes come through in order whatever the read sizes,
// finish hashes the whole input (also what the reader left unread), and a
// reader closed early stops its goroutine.
func TestHashAhead(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 1, aheadChunk, 3*aheadChunk + 12345} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		a := newHashAhead(bytes.NewReader(data))
		var got []byte
		buf := make([]byte, 70000)
		for len(got) < size/2 {
			n, err := a.Read(buf[:1+rnd.IntN(len(buf))])
			if err != nil {
				t.Fatalf("size %d: read after %d bytes: %v", size, len(got), err)
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("size %d: the first %d bytes differ", size, len(got))
		}
		sum, err := a.finish()
		if err != nil || sum != md5.Sum(data) {
			t.Fatalf("size %d: finish = %x, %v; want %x", size, sum, err, md5.Sum(data))
		}
		a.close()
	}
	a := newHashAhead(bytes.NewReader(make([]byte, 20*aheadChunk)))
	if _, err := io.ReadFull(a, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	a.close()
}
