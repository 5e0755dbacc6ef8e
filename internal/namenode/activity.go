package namenode

import (
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/web"
)

// activity holds the counters of Hadoop's NameNodeActivity bean that client
// calls move, over RPC and WebHDFS alike (precheck's callers count them).
// The *Ops counters count calls, answered or refused, as Hadoop counts
// them on entry; Files* count calls that succeeded. Safe for concurrent
// use; the zero value is ready.
type activity struct {
	createFileOps, filesCreated, filesAppended, getBlockLocations atomic.Int64
	filesRenamed, filesTruncated, getListingOps, deleteFileOps    atomic.Int64
	filesDeleted, fileInfoOps, addBlockOps, getAdditionalDatanode atomic.Int64
}

// record counts one call of method; ok is whether it succeeded.
func (a *activity) record(method string, ok bool) {
	add := func(c *atomic.Int64, when bool) {
		if when {
			c.Add(1)
		}
	}
	switch method {
	case "create":
		a.createFileOps.Add(1)
		add(&a.filesCreated, ok)
	case "mkdirs":
		add(&a.filesCreated, ok)
	case "append":
		add(&a.filesAppended, ok)
	case "getBlockLocations":
		a.getBlockLocations.Add(1)
	case "rename", "rename2":
		add(&a.filesRenamed, ok)
	case "truncate":
		add(&a.filesTruncated, ok)
	case "getListing":
		a.getListingOps.Add(1)
	case "delete":
		a.deleteFileOps.Add(1)
		add(&a.filesDeleted, ok)
	case "getFileInfo":
		a.fileInfoOps.Add(1)
	case "addBlock":
		a.addBlockOps.Add(1)
	case "getAdditionalDatanode":
		a.getAdditionalDatanode.Add(1)
	}
}

// logTimes are the edit log's figures of the NameNodeActivity bean, kept by
// the namesystem: Transactions (appending a batch of ops to the log's
// buffer; NumOps counts ops) and Syncs (a logged call waiting until its ops
// are durable).
type logTimes struct {
	txns, txnNanos, syncs, syncNanos atomic.Int64
}

// avgMillis is a mean in milliseconds, 0 without samples.
func avgMillis(nanos, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(nanos) / float64(n) / float64(time.Millisecond)
}

// activityAttrs is the NameNodeActivity bean. The AvgTime figures are
// means over the NameNode's life (Hadoop's are over its last metrics
// period).
func (nn *NameNode) activityAttrs() []web.Attr {
	a, lt := &nn.activity, &nn.ns.logTimes
	return []web.Attr{
		{Name: "tag.ProcessName", Value: "NameNode"},
		{Name: "tag.SessionId", Value: nil},
		{Name: "tag.Context", Value: "dfs"},
		{Name: "tag.Hostname", Value: hostname()},
		{Name: "CreateFileOps", Value: a.createFileOps.Load()},
		{Name: "FilesCreated", Value: a.filesCreated.Load()},
		{Name: "FilesAppended", Value: a.filesAppended.Load()},
		{Name: "GetBlockLocations", Value: a.getBlockLocations.Load()},
		{Name: "FilesRenamed", Value: a.filesRenamed.Load()},
		{Name: "FilesTruncated", Value: a.filesTruncated.Load()},
		{Name: "GetListingOps", Value: a.getListingOps.Load()},
		{Name: "DeleteFileOps", Value: a.deleteFileOps.Load()},
		{Name: "FilesDeleted", Value: a.filesDeleted.Load()},
		{Name: "FileInfoOps", Value: a.fileInfoOps.Load()},
		{Name: "AddBlockOps", Value: a.addBlockOps.Load()},
		{Name: "GetAdditionalDatanodeOps", Value: a.getAdditionalDatanode.Load()},
		{Name: "TransactionsNumOps", Value: lt.txns.Load()},
		{Name: "TransactionsAvgTime", Value: avgMillis(lt.txnNanos.Load(), lt.txns.Load())},
		{Name: "SyncsNumOps", Value: lt.syncs.Load()},
		{Name: "SyncsAvgTime", Value: avgMillis(lt.syncNanos.Load(), lt.syncs.Load())},
		{Name: "WriteLockHoldNumOps", Value: nn.ns.lockHold.n.Load()},
		{Name: "WriteLockHoldMaxTime", Value: float64(nn.ns.lockHold.maxNanos.Load()) / float64(time.Millisecond)},
		{Name: "SlicePauseNumOps", Value: nn.ns.pauses.Load()},
		{Name: "SlicePauseTotalTime", Value: float64(nn.ns.pauseNanos.Load()) / float64(time.Millisecond)},
	}
}

// SlicePauses returns how many times a long operation paused between two
// of its slices to leave the CPU to other calls, and for how long in all.
func (nn *NameNode) SlicePauses() (int64, time.Duration) {
	return nn.ns.pauses.Load(), time.Duration(nn.ns.pauseNanos.Load())
}

// WriteLockHoldMax returns the longest hold of the namesystem write lock
// (by a call, a slice of a full block report, ...) since the last call with
// reset true, and how many holds there were in all.
func (nn *NameNode) WriteLockHoldMax(reset bool) (time.Duration, int64) {
	h := &nn.ns.lockHold
	m := h.maxNanos.Load()
	if reset {
		h.maxNanos.Store(0)
	}
	return time.Duration(m), h.n.Load()
}
