package namenode

import (
	"context"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
)

// blockTokens issues block access tokens (dfs.block.access.token.enable)
// and keeps the DataNodes' keys current: every key goes out with a
// registration answer, and a heartbeat after a roll carries a
// KeyUpdateCommand (DNA_ACCESSKEYUPDATE). The keys are soft state, made
// afresh at every start, as in Hadoop.
type blockTokens struct {
	m     *blocktoken.Manager
	clock clock.Clock
	mu    sync.Mutex
	sent  map[string]int64 // DataNode UUID -> the key serial it last got
}

func newBlockTokens(cfg Config, clk clock.Clock) *blockTokens {
	if !cfg.BlockTokens {
		return nil
	}
	return &blockTokens{m: blocktoken.NewManager(cfg.BlockKeyUpdateInterval, cfg.BlockTokenLifetime, clk.Now()),
		clock: clk, sent: map[string]int64{}}
}

// registered returns the keys for a DataNode's registration answer.
func (bt *blockTokens) registered(uuid string) *hdfs.ExportedBlockKeysProto {
	bt.m.Roll(bt.clock.Now())
	bt.note(uuid, bt.m.Serial())
	return bt.m.Export()
}

// note records that the DataNode got the keys of serial and returns the
// serial it had before.
func (bt *blockTokens) note(uuid string, serial int64) (old int64, ok bool) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	old, ok = bt.sent[uuid]
	bt.sent[uuid] = serial
	return old, ok
}

// heartbeat rolls the key when its interval has passed and returns a key
// update for a DataNode that has not had the current keys, else nil.
func (bt *blockTokens) heartbeat(uuid string) *datanode.DatanodeCommandProto {
	bt.m.Roll(bt.clock.Now())
	serial := bt.m.Serial()
	if old, ok := bt.note(uuid, serial); ok && old == serial {
		return nil
	}
	return &datanode.DatanodeCommandProto{CmdType: datanode.DatanodeCommandProto_KeyUpdateCommand.Enum(),
		KeyUpdateCmd: &datanode.KeyUpdateCommandProto{Keys: bt.m.Export()}}
}

// tokenModes is what the located blocks of each answer grant, as in
// Hadoop: reads READ, pipelines WRITE, a replacement DataNode COPY.
var tokenModes = map[string]blocktoken.Mode{
	"getBlockLocations":      blocktoken.Read,
	"getListing":             blocktoken.Read,
	"getLocatedFileInfo":     blocktoken.Read,
	"addBlock":               blocktoken.Write,
	"append":                 blocktoken.Write,
	"updateBlockForPipeline": blocktoken.Write,
	"getAdditionalDatanode":  blocktoken.Copy,
}

// sign puts a token for the caller on every located block of resp.
func (bt *blockTokens) sign(ctx context.Context, method string, resp proto.Message) {
	mode, ok := tokenModes[method]
	if !ok {
		return
	}
	user := ""
	if c, ok := ipc.CallerFromContext(ctx); ok {
		user = c.User
	}
	now := bt.clock.Now()
	one := func(lb *hdfs.LocatedBlockProto) {
		if lb == nil || lb.GetB() == nil {
			return
		}
		lb.BlockToken = bt.m.Generate(user, lb.GetB().GetPoolId(), int64(lb.GetB().GetBlockId()), mode, now)
	}
	blocks := func(lbs *hdfs.LocatedBlocksProto) {
		for _, lb := range lbs.GetBlocks() {
			one(lb)
		}
		one(lbs.GetLastBlock())
	}
	switch r := resp.(type) {
	case *hdfs.GetBlockLocationsResponseProto:
		blocks(r.GetLocations())
	case *hdfs.GetListingResponseProto:
		for _, st := range r.GetDirList().GetPartialListing() {
			blocks(st.GetLocations())
		}
	case *hdfs.GetLocatedFileInfoResponseProto:
		blocks(r.GetFs().GetLocations())
	case *hdfs.AddBlockResponseProto:
		one(r.GetBlock())
	case *hdfs.AppendResponseProto:
		one(r.GetBlock())
	case *hdfs.UpdateBlockForPipelineResponseProto:
		one(r.GetBlock())
	case *hdfs.GetAdditionalDatanodeResponseProto:
		one(r.GetBlock())
	}
}
