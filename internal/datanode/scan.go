package datanode

import (
	"encoding/binary"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datanode/scanner"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

// fullReportThreshold is how many repairs of one directory scan are sent
// as incremental reports; more are left to a full block report.
const fullReportThreshold = 1000

// scanReporter is the block scanner's and the directory scanner's way to
// the NameNodes.
type scanReporter struct{ dn *DataNode }

// ReportBad queues reportBadBlocks for a replica the scanner found corrupt
// twice; the actors send it.
func (r scanReporter) ReportBad(pool string, v *storage.Volume, b storage.Block, err error) {
	r.dn.act.scannerCorrupt.Add(1)
	r.dn.queueBadReplica(pool, b, v.StorageID())
}

// VolumeError asks for a check of the volume.
func (r scanReporter) VolumeError(v *storage.Volume, err error) {
	if c := r.dn.checker.Load(); c != nil {
		r.dn.log.Warn("block scanner: I/O error; checking the volume", "volume", v.Dir(), "err", err)
		c.request(v)
	}
}

// Reconciled tells the NameNodes what a directory scan repaired: replicas
// gone are DELETED, replicas found or changed are RECEIVED, a replica whose
// length changed is reported corrupt. Many repairs make a full block
// report instead.
func (r scanReporter) Reconciled(pool string, fixes []storage.Fix, st storage.DiffStats) {
	dn := r.dn
	n := 0
	for _, f := range fixes {
		if f.Action != storage.FixNone {
			n++
		}
	}
	if n > fullReportThreshold {
		dn.log.Info("directory scan repaired many replicas; sending a full block report", "pool", pool, "repairs", n)
		dn.requestFullReports()
		for _, f := range fixes {
			if f.Action == storage.FixLength {
				dn.queueBadReplica(pool, f.Replica.Block, f.Replica.StorageID)
			}
		}
		return
	}
	for _, f := range fixes {
		switch f.Action {
		case storage.FixRemoved:
			for _, a := range dn.actorsOf(pool) {
				a.queueIBR(ibrEntry{storageID: f.Replica.StorageID, block: f.Replica.Block, status: ibrDeleted})
			}
		case storage.FixAdded, storage.FixUpdated:
			for _, a := range dn.actorsOf(pool) {
				a.queueIBR(ibrEntry{storageID: f.Replica.StorageID, block: f.Replica.Block, status: ibrReceived})
			}
		case storage.FixLength:
			dn.queueBadReplica(pool, f.Replica.Block, f.Replica.StorageID)
		}
	}
}

// queueBadReplica queues reportBadBlocks for this node's replica of b on
// storage sid to every NameNode of the pool.
func (dn *DataNode) queueBadReplica(pool string, b storage.Block, sid string) {
	for _, a := range dn.actorsOf(pool) {
		reg := a.registration()
		if reg == nil {
			continue
		}
		lb := &hdfs.LocatedBlockProto{B: extBlock(pool, b), Offset: proto.Uint64(0),
			Locs:       []*hdfs.DatanodeInfoProto{{Id: reg.GetDatanodeID()}},
			Corrupt:    proto.Bool(true),
			BlockToken: emptyToken(),
			StorageIDs: []string{sid}, StorageTypes: []hdfs.StorageTypeProto{hdfs.StorageTypeProto(dn.storageTypeOf(sid))}}
		a.queueBad(lb)
	}
}

// firstDirScanDelay spreads the first directory scan over the interval,
// as Hadoop does, so that DataNodes started together do not scan together.
func (dn *DataNode) firstDirScanDelay(interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	var b [8]byte
	if _, err := dn.rnd.Read(b[:]); err != nil {
		return interval
	}
	return time.Duration(binary.BigEndian.Uint64(b[:]) % uint64(interval))
}

// deletingReplica says whether an invalidated replica's files are still on
// their way out (not a difference for the directory scanner).
func (dn *DataNode) deletingReplica(pool string, id int64) bool {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	_, ok := dn.mu.deletes[deleteKey{pool, id}]
	return ok
}

var (
	_ scanner.Reporter    = scanReporter{}
	_ scanner.DirReporter = scanReporter{}
)

// ScannerStats is the block scanner's state on every volume (tools,
// benchmarks; the web page shows the same).
func (dn *DataNode) ScannerStats() []scanner.VolumeStats { return dn.blockScan.Stats() }
