package datanode

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
)

// activity counts what the DataNode did since it started; the web server
// prints it as the DataNodeActivity bean under Hadoop's metric names. Every
// field is updated without locks.
type activity struct {
	bytesWritten, bytesRead             atomic.Int64
	blocksWritten, blocksRead           atomic.Int64
	blocksReplicated, blocksRemoved     atomic.Int64
	blocksVerified, verificationFailure atomic.Int64
	readsLocal, readsRemote             atomic.Int64
	writesLocal, writesRemote           atomic.Int64
	heartbeats, blockReports, ibrs      atomic.Int64
	// scannerCorrupt counts replicas the block scanner reported corrupt;
	// volumeFailures the volumes taken out of service after a failure.
	scannerCorrupt, volumeFailures atomic.Int64
	// ops times the data-transfer ops by kind.
	ops [numTimedOps]opTimer
}

// The timed data-transfer ops, in the order the bean lists them.
const (
	timedWriteBlock = iota
	timedReadBlock
	timedBlockChecksum
	timedCopyBlock
	timedReplaceBlock
	timedTransferBlock
	numTimedOps
)

// timedOpNames are the metric prefixes of the timed ops (Hadoop's names;
// TRANSFER_BLOCK has none there, ours follows the same pattern).
var timedOpNames = [numTimedOps]string{"WriteBlockOp", "ReadBlockOp", "BlockChecksumOp", "CopyBlockOp",
	"ReplaceBlockOp", "TransferBlockOp"}

// timedOp maps an op to its timer, or -1.
func timedOp(op datatransfer.Op) int {
	switch op {
	case datatransfer.OpWriteBlock:
		return timedWriteBlock
	case datatransfer.OpReadBlock:
		return timedReadBlock
	case datatransfer.OpBlockChecksum:
		return timedBlockChecksum
	case datatransfer.OpCopyBlock:
		return timedCopyBlock
	case datatransfer.OpReplaceBlock:
		return timedReplaceBlock
	case datatransfer.OpTransferBlock:
		return timedTransferBlock
	}
	return -1
}

// opTimer is a count of ops and their total time.
type opTimer struct {
	n     atomic.Int64
	nanos atomic.Int64
}

func (t *opTimer) add(d time.Duration) {
	t.n.Add(1)
	t.nanos.Add(int64(d))
}

// avgMillis is the mean op time in milliseconds (0 before the first op).
func (t *opTimer) avgMillis() float64 {
	n := t.n.Load()
	if n == 0 {
		return 0
	}
	return float64(t.nanos.Load()) / float64(n) / 1e6
}

// countClient adds a client read or write to the local or remote counter.
func (a *activity) countClient(c net.Conn, local, remote *atomic.Int64) {
	if isLocalPeer(c) {
		local.Add(1)
	} else {
		remote.Add(1)
	}
}

// isLocalPeer reports whether c's peer runs on this host: a domain-socket
// peer, or a TCP peer on a loopback address or on the address c was
// accepted on.
func isLocalPeer(c net.Conn) bool {
	if _, ok := c.(*net.UnixConn); ok {
		return true
	}
	ra, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	if ra.IP.IsLoopback() {
		return true
	}
	la, ok := c.LocalAddr().(*net.TCPAddr)
	return ok && la.IP.Equal(ra.IP)
}
