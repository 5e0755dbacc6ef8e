package namespace

import (
	"testing"
	"unsafe"
)

// TestInodeSize keeps the per-file struct within its 96-byte size class.
func TestInodeSize(t *testing.T) {
	if s := unsafe.Sizeof(inode{}); s > 96 {
		t.Fatalf("inode is %d bytes", s)
	}
}
