package namenode

import (
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// TestRecoverCommandCopyOnTruncate: DNA_RECOVERBLOCK for a copy-on-truncate
// names the block to copy (with its holders) and carries the new block as
// truncateBlock (new id, the recovery's stamp, the new length), as
// RecoveringBlockProto does in Hadoop; an in-place truncate keeps the id.
func TestRecoverCommandCopyOnTruncate(t *testing.T) {
	d := &datanodeRPC{nn: &NameNode{version: &storage.Version{BlockPoolID: "BP-1"}}}
	holder := blockmgmt.DatanodeID{UUID: "u1", IPAddr: "127.0.0.1", XferPort: 9866}
	old := blockmgmt.Block{ID: 300, NumBytes: 1000, GenStamp: 2000}
	cmd := d.recoverCommand(blockmgmt.RecoverBlock{Block: old, NewGenStamp: 2001, Holders: []blockmgmt.DatanodeID{holder}, NewLength: 400, NewBlockID: 301})
	rbs := cmd.GetRecoveryCmd().GetBlocks()
	if len(rbs) != 1 {
		t.Fatalf("command %v", cmd)
	}
	rb := rbs[0]
	b := rb.GetBlock().GetB()
	if b.GetBlockId() != 300 || b.GetGenerationStamp() != 2000 || b.GetNumBytes() != 1000 || len(rb.GetBlock().GetLocs()) != 1 {
		t.Fatalf("recovered block %v", rb.GetBlock())
	}
	tb := rb.GetTruncateBlock()
	if tb.GetBlockId() != 301 || tb.GetGenStamp() != 2001 || tb.GetNumBytes() != 400 || rb.GetNewGenStamp() != 2001 {
		t.Fatalf("truncate block %v, new stamp %d", tb, rb.GetNewGenStamp())
	}
	inPlace := d.recoverCommand(blockmgmt.RecoverBlock{Block: old, NewGenStamp: 2001, Holders: []blockmgmt.DatanodeID{holder}, NewLength: 400})
	if tb := inPlace.GetRecoveryCmd().GetBlocks()[0].GetTruncateBlock(); tb.GetBlockId() != 300 || tb.GetNumBytes() != 400 {
		t.Fatalf("in-place truncate block %v", tb)
	}
}
