package storage

import (
	"testing"
)

func FuzzParseMetaHeader(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 0, 2, 0})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseMetaHeader(b)
		if err != nil {
			return
		}
		h := EncodeMetaHeader(c)
		if string(h[:]) != string(b[:MetaHeaderLen]) {
			t.Fatalf("header % x re-encodes as % x", b[:MetaHeaderLen], h)
		}
	})
}

func FuzzParseFileNames(f *testing.F) {
	for _, s := range []string{"blk_1", "blk_-1_5.meta", "blk_1_2.meta.recovery", "subdir3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		// Only canonical spellings parse, so that names and ids map one to
		// one (the scan derives paths from ids).
		if id, ok := ParseBlockFileName(name); ok && BlockFileName(id) != name {
			t.Fatalf("%q parsed as block %d", name, id)
		}
		if id, gs, ok := ParseMetaFileName(name); ok && MetaFileName(id, gs) != name {
			t.Fatalf("%q parsed as meta of %d/%d", name, id, gs)
		}
		// The upgrade places every file that names a block by that block's
		// id: a canonical block or meta name must give its own id.
		rid, rok := replicaFileID(name)
		if id, ok := ParseBlockFileName(name); ok && (!rok || rid != id) {
			t.Fatalf("%q: block %d, but the upgrade reads %d, %v", name, id, rid, rok)
		}
		if id, _, ok := ParseMetaFileName(name); ok && (!rok || rid != id) {
			t.Fatalf("%q: meta of %d, but the upgrade reads %d, %v", name, id, rid, rok)
		}
	})
}
