package namenode

import (
	"context"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// The retry cache (package retrycache) makes the calls Hadoop marks
// @AtMostOnce — create, append, delete, rename, rename2, concat,
// updatePipeline, setXAttr, removeXAttr, createSnapshot, deleteSnapshot,
// renameSnapshot — run once per (clientId, callId). The ops such a call
// logs carry its ids (op.RPCID), so that whoever replays the edits — a
// restarted NameNode, a standby that becomes active — rebuilds the cache
// from them: a client that retries after a failover gets the answer of the
// call that was carried out, built from the state the edits produced,
// instead of a second execution.

// rpcKey is the ctx key under which atMostOnce leaves the call's ids for
// the write path to stamp on the ops it logs.
type rpcKey struct{}

// atMostOnce runs f once per (clientId, callId): a retried call gets the first
// call's outcome from the retry cache instead of running again. f gets a ctx
// that makes the write path record the call's ids in the ops it logs.
func atMostOnce[R proto.Message](c *clientRPC, ctx context.Context, f func(ctx context.Context) (R, error)) (R, error) {
	ci, ok := ipc.CallerFromContext(ctx)
	cache := c.ns.retry
	if cache == nil || !ok || len(ci.ClientID) == 0 || ci.CallID < 0 {
		return f(ctx)
	}
	e, retry := cache.Begin(ci.ClientID, ci.CallID)
	if retry {
		resp, err := e.Result()
		// The first call may still wait for its ops' fsync (asynchronous
		// logging): the retry is not answered before they are durable.
		if serr := c.ns.syncAppended(ctx); serr != nil {
			var zero R
			return zero, serr
		}
		if err != nil {
			var zero R
			return zero, err
		}
		if lc, ok := resp.(loggedCall); ok {
			return answerFromLog[R](c, ctx, lc)
		}
		return resp.(R), nil
	}
	id := op.RPCID{ClientID: slices.Clone(ci.ClientID), CallID: ci.CallID}
	resp, err := f(context.WithValue(ctx, rpcKey{}, id))
	cache.End(e, resp, err)
	return resp, err
}

// stampCall records the ids of the call in ctx, if it is an at-most-once
// one, on the ops of a batch that carry them.
func stampCall(ctx context.Context, ops []op.Op) {
	id, ok := ctx.Value(rpcKey{}).(op.RPCID)
	if !ok {
		return
	}
	for _, o := range ops {
		if w, ok := o.(op.WithRPC); ok && !w.RPCIDPtr().Valid() {
			*w.RPCIDPtr() = id
		}
	}
}

// loggedCall is a retry-cache entry rebuilt from the edit log: the call was
// carried out by the op it names.
type loggedCall struct {
	code op.Code
	path string
	// created is a create's answer, built when its op was replayed (the
	// file's status then is the one the first answer carried).
	created *hdfs.CreateResponseProto
	// truncated: an OP_TRUNCATE that needed no block recovery.
	truncated bool
}

// rememberCallLocked enters the call an op read from the edits carries into
// the retry cache, as a completed call.
func (n *namesystem) rememberCallLocked(o op.Op) {
	w, ok := o.(op.WithRPC)
	if !ok || n.retry == nil || !w.RPCIDPtr().Valid() {
		return
	}
	lc := loggedCall{code: o.Code()}
	switch o := o.(type) {
	case *op.Add:
		if fi, _, ok := n.mu.tree.File(o.Path); ok {
			lc.created = &hdfs.CreateResponseProto{Fs: fileStatus(fi, nil)}
		}
	case *op.Append:
		lc.path = o.Path
	case *op.Truncate:
		lc.truncated = o.TruncateBlock == nil
	case *op.CreateSnapshot:
		lc.path = namespace.SnapshotPath(o.Root, o.Name)
	}
	id := w.RPCIDPtr()
	n.retry.Put(id.ClientID, id.CallID, lc)
}

// answerFromLog builds the answer of a call that was carried out by a
// logged op, from the current state. A retried call of another kind than
// the op (a client reusing a call id) gets an error.
func answerFromLog[R proto.Message](c *clientRPC, ctx context.Context, lc loggedCall) (R, error) {
	var zero R
	var m proto.Message
	switch lc.code {
	case op.CodeAdd:
		if lc.created != nil {
			m = lc.created
		}
	case op.CodeAppend:
		m = c.appendAnswer(ctx, lc.path)
	case op.CodeDelete:
		m = &hdfs.DeleteResponseProto{Result: proto.Bool(true)}
	case op.CodeRenameOld:
		m = &hdfs.RenameResponseProto{Result: proto.Bool(true)}
	case op.CodeRename:
		m = &hdfs.Rename2ResponseProto{}
	case op.CodeConcat:
		m = &hdfs.ConcatResponseProto{}
	case op.CodeUpdateBlocks:
		m = &hdfs.UpdatePipelineResponseProto{}
	case op.CodeTruncate:
		m = &hdfs.TruncateResponseProto{Result: proto.Bool(lc.truncated)}
	case op.CodeSetXAttr:
		m = &hdfs.SetXAttrResponseProto{}
	case op.CodeRemoveXAttr:
		m = &hdfs.RemoveXAttrResponseProto{}
	case op.CodeCreateSnapshot:
		m = &hdfs.CreateSnapshotResponseProto{SnapshotPath: proto.String(lc.path)}
	case op.CodeDeleteSnapshot:
		m = &hdfs.DeleteSnapshotResponseProto{}
	case op.CodeRenameSnapshot:
		m = &hdfs.RenameSnapshotResponseProto{}
	}
	r, ok := m.(R)
	if !ok {
		return zero, retriedOtherCall(lc.code)
	}
	return r, nil
}

// appendAnswer is append's answer for path as it stands: its status and,
// when its last block is being written again, that block with its holders.
func (c *clientRPC) appendAnswer(ctx context.Context, path string) *hdfs.AppendResponseProto {
	var resp *hdfs.AppendResponseProto
	c.ns.readLocked(func() { resp = c.appendAnswerLocked(clientMachine(ctx), path) })
	return resp
}

func (c *clientRPC) appendAnswerLocked(machine, path string) *hdfs.AppendResponseProto {
	resp := &hdfs.AppendResponseProto{}
	t, bm := c.ns.mu.tree, c.ns.mu.bm
	fi, blocks, ok := t.File(path)
	if !ok {
		return resp
	}
	resp.Stat = fileStatus(fi, nil)
	k := len(blocks)
	if k == 0 {
		return resp
	}
	if info, ok := bm.BlockInfo(blocks[k-1].ID); !ok || info.State == blockmgmt.Complete {
		return resp
	}
	if locs, err := bm.GetBlockLocations([]int64{blocks[k-1].ID}, machine, c.ns.clock.Now()); err == nil && len(locs) == 1 {
		resp.Block = locatedBlock(c.pool(), locs[0], lengthBefore(blocks, k-1))
	}
	return resp
}
func retriedOtherCall(code op.Code) error {
	return remoteerr.New(remoteerr.ClassIOException, "this call id was already used by a call carried out as %v", code)
}
