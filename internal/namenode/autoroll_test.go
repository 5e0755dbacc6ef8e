package namenode_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestEditLogAutoRoll: the open segment is rolled by itself once it holds
// multiplier × checkpoint.txns transactions.
func TestEditLogAutoRoll(t *testing.T) {
	nn := nntest.New(t,
		conf.KeyValue{Key: conf.DFSNameNodeCheckpointTxns, Value: "20"},
		conf.KeyValue{Key: conf.DFSNameNodeEditLogAutoRollMultiplier, Value: "0.5"},
	)
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.Addr}, User: nn.Config.SuperUser, Protocol: namenode.ClientProtocolName})
	defer c.Close()
	for i := 0; i < 35; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/d" + string(rune('a'+i%26)) + string(rune('a'+i/26))),
			Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	current := filepath.Join(nn.Config.NameDirs[0], "current")
	deadline := time.Now().Add(10 * time.Second)
	for {
		names, _ := os.ReadDir(current)
		finalized := 0
		for _, n := range names {
			if strings.HasPrefix(n.Name(), "edits_0") {
				finalized++
			}
		}
		if finalized >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no segment was rolled after 35 transactions with a threshold of 10: %v", names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
