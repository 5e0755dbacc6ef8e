package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// defaultOpenFilesBatch is dfs.namenode.list.openfiles.num.responses'
// default.
const defaultOpenFilesBatch = 1000

// listOpenFiles is ClientProtocol listOpenFiles (dfsadmin -listOpenFiles):
// superusers only; batches of at most
// dfs.namenode.list.openfiles.num.responses files open for write, after
// the inode id of the last one the caller saw, under the given path.
func (c *clientRPC) listOpenFiles(ctx context.Context, req *hdfs.ListOpenFilesRequestProto) (*hdfs.ListOpenFilesResponseProto, error) {
	if err := c.checkSuper(ctx); err != nil {
		return nil, err
	}
	types := req.GetTypes()
	for _, t := range types {
		if t == hdfs.OpenFilesTypeProto_BLOCKING_DECOMMISSION {
			return nil, remoteerr.New(remoteerr.ClassUnsupported, "listOpenFiles: the files blocking decommission are not supported yet")
		}
	}
	if len(types) == 0 {
		types = []hdfs.OpenFilesTypeProto{hdfs.OpenFilesTypeProto_ALL_OPEN_FILES}
	}
	batch := defaultOpenFilesBatch
	if c.nn.deps.Conf != nil {
		if n, err := c.nn.deps.Conf.Int(conf.DFSNameNodeListOpenFilesNumResponses); err == nil && n > 0 {
			batch = int(min(n, 1<<20))
		} else if err == nil {
			return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "%s must be a positive integer", conf.DFSNameNodeListOpenFilesNumResponses)
		}
	}
	path := req.GetPath()
	if path == "" {
		path = "/"
	}
	var files []namespace.OpenFile
	var more bool
	c.ns.read(func(t *namespace.Tree) {
		files, more = t.OpenFiles(uint64(max(req.GetId(), 0)), path, batch)
	})
	resp := &hdfs.ListOpenFilesResponseProto{HasMore: proto.Bool(more), Types: types}
	for _, f := range files {
		resp.Entries = append(resp.Entries, &hdfs.OpenFilesBatchResponseProto{
			Id: proto.Int64(int64(f.ID)), Path: proto.String(f.Path),
			ClientName: proto.String(f.ClientName), ClientMachine: proto.String(f.ClientMachine),
		})
	}
	return resp, nil
}
