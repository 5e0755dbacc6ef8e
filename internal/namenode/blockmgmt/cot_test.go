package blockmgmt

import (
	"errors"
	"testing"
)

// TestStartCopyRecovery: a copy-on-truncate's recovery is sent to the
// primary naming the snapshot's block, with the new block's id, stamp and
// length; the new block is UNDER_RECOVERY, the old one untouched; commit
// makes the copies the new block's replicas.
func TestStartCopyRecovery(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 14, "a1", "a2", "a3")
	old := Block{ID: 300, NumBytes: 1000, GenStamp: 2000}
	h.addComplete(1, old, 2, "a1", "a2")
	nb := Block{ID: 301, NumBytes: 400, GenStamp: 2001}
	if err := h.m.AddBlock(1, nb, 2, UnderConstruction, nil); err != nil {
		t.Fatal(err)
	}
	holders := []DatanodeID{h.id("a1"), h.id("a2")}
	for _, tc := range []struct {
		name    string
		src, gs int64
		length  int64
		wantErr error
		primary string
	}{
		{"unknown source", 999, 2001, 400, ErrUnknownBlock, "a1"},
		{"stamp not above the source's", 300, 2000, 400, ErrGenStamp, "a1"},
		{"longer than the source", 300, 2001, 1001, ErrBadState, "a1"},
	} {
		if err := h.m.StartCopyRecovery(nb.ID, tc.src, tc.gs, h.id(tc.primary).UUID, holders, tc.length); !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.wantErr)
		}
	}
	if err := h.m.StartCopyRecovery(nb.ID, old.ID, 2001, h.id("a2").UUID, holders, 400); err != nil {
		t.Fatal(err)
	}
	if info, _ := h.m.BlockInfo(nb.ID); info.State != UnderRecovery {
		t.Fatalf("new block %+v", info)
	}
	if info, _ := h.m.BlockInfo(old.ID); info.State != Complete || info.Live != 2 || info.NumBytes != 1000 {
		t.Fatalf("old block %+v", info)
	}
	var got []RecoverBlock
	for _, c := range h.heartbeat("a2") {
		if r, ok := c.(RecoverBlock); ok {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Block != old || got[0].NewBlockID != nb.ID || got[0].NewGenStamp != 2001 || got[0].NewLength != 400 || len(got[0].Holders) != 2 {
		t.Fatalf("recovery command %+v", got)
	}
	for _, n := range []string{"a1", "a2"} {
		h.ibr(n, ReceivedDeleted{Block: Block{ID: nb.ID, NumBytes: 400, GenStamp: 2001}, Status: Received})
	}
	if err := h.m.CommitRecovery(nb.ID, 2001, 400, holders, false); err != nil {
		t.Fatal(err)
	}
	if info, _ := h.m.BlockInfo(nb.ID); info.Live != 2 || info.State == UnderRecovery {
		t.Fatalf("new block after commit %+v", info)
	}
	if info, _ := h.m.BlockInfo(old.ID); info.State != Complete || info.Live != 2 {
		t.Fatalf("old block after commit %+v", info)
	}
}
