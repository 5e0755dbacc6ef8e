package namespace

import (
	"testing"
	"unsafe"
)

// TestInodeSize keeps the per-file struct within its 64-byte size class.
func TestInodeSize(t *testing.T) {
	if s := unsafe.Sizeof(inode{}); s > 64 {
		t.Fatalf("inode is %d bytes", s)
	}
}
