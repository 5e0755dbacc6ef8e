package namenode

import (
	"context"
	"encoding/binary"
	"math"
	"runtime/debug"
	"slices"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/namenode/retrycache"
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
	if len(ci.ClientID) > retrycache.IDLen {
		var zero R
		return zero, remoteerr.New(remoteerr.ClassIllegalArgument, "Invalid clientId - length is %d expected length %d", len(ci.ClientID), retrycache.IDLen)
	}
	e, retry := cache.Begin(ci.ClientID, ci.CallID)
	if retry {
		out, err := e.Result()
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
		return answerFrom[R](c, ctx, out)
	}
	id := op.RPCID{ClientID: slices.Clone(ci.ClientID), CallID: ci.CallID}
	resp, err := f(context.WithValue(ctx, rpcKey{}, id))
	var out []byte
	if err == nil {
		out = encodeAnswer(resp)
	}
	cache.End(e, out, err)
	return resp, err
}

// What the retry cache keeps of a call that succeeded: its answer encoded,
// behind a tag byte.
const (
	// outcomeAnswer: the 4-byte FNV-1a hash of the answer's message name,
	// then the message.
	outcomeAnswer = 1
	// outcomeLogged: a loggedCall (encodeLogged).
	outcomeLogged = 2
)

var partial = proto.MarshalOptions{AllowPartial: true}

func encodeAnswer(m proto.Message) []byte {
	out := binary.BigEndian.AppendUint32([]byte{outcomeAnswer}, messageHash(m))
	out, err := partial.MarshalAppend(out, m)
	if err != nil {
		// Only a message the RPC layer could not send either: a retry
		// then gets an empty answer of the call's type.
		return out[:5]
	}
	return out
}

// messageHash is the 32-bit FNV-1a hash of m's message name, computed
// without allocating: every create, delete and rename takes one.
func messageHash(m proto.Message) uint32 {
	h := uint32(2166136261)
	for _, c := range []byte(m.ProtoReflect().Descriptor().FullName()) {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// answerFrom decodes the answer the retry cache kept for a call. A retry
// of a call id used by a call of another kind gets an error.
func answerFrom[R proto.Message](c *clientRPC, ctx context.Context, out []byte) (R, error) {
	var zero R
	if len(out) > 0 && out[0] == outcomeLogged {
		lc, err := decodeLogged(out)
		if err != nil {
			return zero, err
		}
		return answerFromLog[R](c, ctx, lc)
	}
	r := zero.ProtoReflect().Type().New().Interface().(R)
	if len(out) < 5 || out[0] != outcomeAnswer || binary.BigEndian.Uint32(out[1:]) != messageHash(r) {
		return zero, remoteerr.New(remoteerr.ClassIOException, "this call id was already used by a call of another kind")
	}
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(out[5:], r); err != nil {
		return zero, remoteerr.New(remoteerr.ClassIOException, "retry cache: %v", err)
	}
	return r, nil
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

// encodeLogged is lc as the retry cache keeps it: the tag, the op code,
// whether truncated, the path and, if any, the create's answer.
func encodeLogged(lc loggedCall) []byte {
	out := []byte{outcomeLogged}
	out = binary.AppendUvarint(out, uint64(lc.code))
	truncated := byte(0)
	if lc.truncated {
		truncated = 1
	}
	out = append(out, truncated)
	out = binary.AppendUvarint(out, uint64(len(lc.path)))
	out = append(out, lc.path...)
	if lc.created == nil {
		return append(out, 0)
	}
	out = append(out, 1)
	out, err := partial.MarshalAppend(out, lc.created)
	if err != nil {
		out[len(out)-1] = 0 // the file's answer could not be kept: none
	}
	return out
}

// decodeLogged reverses encodeLogged.
func decodeLogged(out []byte) (loggedCall, error) {
	bad := remoteerr.New(remoteerr.ClassIOException, "retry cache: a damaged record of a logged call")
	var lc loggedCall
	p := out[1:]
	code, k := binary.Uvarint(p)
	if k <= 0 || len(p) < k+1 {
		return lc, bad
	}
	lc.code, lc.truncated, p = op.Code(code), p[k] == 1, p[k+1:]
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n+1 {
		return lc, bad
	}
	lc.path, p = string(p[k:k+int(n)]), p[k+int(n):]
	if p[0] == 1 {
		lc.created = &hdfs.CreateResponseProto{}
		if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(p[1:], lc.created); err != nil {
			return lc, bad
		}
	}
	return lc, nil
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
	n.retry.Put(id.ClientID, id.CallID, encodeLogged(lc))
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

// retryCacheCapacity is how many completed calls the retry cache keeps, as
// Hadoop sizes its table: percent of the memory the NameNode may use, 4
// bytes a call (a reference in Hadoop's table; "about 4,096 entries for
// every 64 MB of heap" at the default 0.03 %), rounded down to a power of
// two, between 2^10 and 2^30. Each call kept here takes about 232 bytes
// (BenchmarkRetryCacheHeap), none of them scanned by the collector.
func retryCacheCapacity(memory int64, percent float64) int {
	n := float64(memory) * percent / 100 / 4
	capacity := 1 << 10
	for capacity < 1<<30 && float64(capacity)*2 <= n {
		capacity *= 2
	}
	return capacity
}

// memoryLimit is the memory the NameNode may use: Go's memory limit when
// one is set (GOMEMLIMIT), else the machine's memory (else 4 GiB when that
// cannot be read).
func memoryLimit() int64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(si.Unit)
	}
	return 4 << 30
}
