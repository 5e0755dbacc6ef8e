package namenode

import (
	"context"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// registerSnapshotCalls serves the snapshottable-directory calls of
// ClientProtocol; taking snapshots is not implemented (those methods
// answer UnsupportedOperationException).
func registerSnapshotCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "allowSnapshot", c.allowSnapshot)
	handle(c.nn, s, "disallowSnapshot", c.disallowSnapshot)
	handle(c.nn, s, "getSnapshottableDirListing", c.getSnapshottableDirListing)
}

func (c *clientRPC) allowSnapshot(ctx context.Context, req *hdfs.AllowSnapshotRequestProto) (*hdfs.AllowSnapshotResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanAllowSnapshot(u, req.GetSnapshotRoot())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.AllowSnapshotResponseProto{}, nil
}

func (c *clientRPC) disallowSnapshot(ctx context.Context, req *hdfs.DisallowSnapshotRequestProto) (*hdfs.DisallowSnapshotResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanDisallowSnapshot(u, req.GetSnapshotRoot())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.DisallowSnapshotResponseProto{}, nil
}

func (c *clientRPC) getSnapshottableDirListing(ctx context.Context, _ *hdfs.GetSnapshottableDirListingRequestProto) (*hdfs.GetSnapshottableDirListingResponseProto, error) {
	u := c.caller(ctx)
	var dirs []namespace.SnapshottableDir
	c.ns.read(func(t *namespace.Tree) { dirs = t.SnapshottableDirs(u) })
	if len(dirs) == 0 {
		return &hdfs.GetSnapshottableDirListingResponseProto{}, nil
	}
	l := &hdfs.SnapshottableDirectoryListingProto{}
	for _, d := range dirs {
		parent, name := path.Split(d.Path)
		if d.Path == "/" {
			parent, name = "", ""
		} else if len(parent) > 1 {
			parent = parent[:len(parent)-1]
		}
		l.SnapshottableDirListing = append(l.SnapshottableDirListing, &hdfs.SnapshottableDirectoryStatusProto{
			DirStatus:      fileStatus(d.Info, []byte(name)),
			SnapshotQuota:  proto.Uint32(namespace.DefaultSnapshotQuota),
			SnapshotNumber: proto.Uint32(0),
			ParentFullpath: []byte(parent),
		})
	}
	return &hdfs.GetSnapshottableDirListingResponseProto{SnapshottableDirList: l}, nil
}
