package namespace

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
)

// TestFSImageEncoding saves a tree with the fsimage encoder and loads it back
// through the fsimage reader.
func TestFSImageEncoding(t *testing.T) {
	tr := runModelOn(t, fixture(t), rand.New(rand.NewSource(7)), 300)
	var buf bytes.Buffer
	w, err := fsimage.NewWriter(&buf, tr.ImageHeader(9))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Export(w.Write); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, h, err := fsimage.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewFromImage(tr.Config(), h, r.Next)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, tr), dump(t, got); a != b {
		t.Fatalf("differs:\n%s\n---\n%s", a, b)
	}
}
