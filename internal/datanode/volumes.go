package datanode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"google.golang.org/protobuf/proto"
)

// Volume failures and hot swap.
//
// A volume fails when the disk checker finds it unusable: on an I/O error of
// the write or read path or of the block scanner (at most once per
// dfs.datanode.disk.check.min.gap per volume), and periodically, every
// volume once per gap. Taking it out of service (failVolume) stops the
// writers on it (their pipelines go on without this node), removes its
// replicas from the map and reports them DELETED to the NameNodes, which
// re-replicate them from the other copies; the next heartbeats report the
// storage failed and a full block report follows. When more volumes have
// failed than dfs.datanode.failed.volumes.tolerated allows (or none is
// left), the DataNode stops, naming the volumes.
//
//	in service ──I/O error──▶ check requested ──(min gap)──▶ Check ──ok──▶ in service
//	     │                                                      │
//	     └──────────── periodic check (every min gap) ──────────┤ failed, or no answer
//	                                                            ▼ within the timeout
//	                                        failVolume: RemoveVolume, DELETED reports,
//	                                        failed storage in heartbeats ──▶ too many? stop

// failedVolume is a volume out of service after a failure.
type failedVolume struct {
	Dir         string
	StorageID   string
	StorageType storage.StorageType
	At          time.Time
	Err         string
	Capacity    int64
}

// openVolumes opens (and locks) every configured volume. A volume that
// cannot be opened counts as failed; more failures than tolerated, a
// volume locked by another process or one of another layout stop the
// start.
func (dn *DataNode) openVolumes(deps Deps) error {
	var failed []failedVolume
	for _, e := range dn.cfg.DataDirs {
		dir, st, err := parseDataDir(e)
		if err != nil {
			return err
		}
		v, err := storage.OpenVolume(storage.VolumeConfig{Dir: dir, StorageType: st, Reserved: dn.cfg.reservedFor(st), Testing: deps.VolumeTesting})
		if err != nil {
			var locked *hstorage.LockedError
			if errors.As(err, &locked) || errors.Is(err, storage.ErrBadVolume) {
				return fmt.Errorf("datanode: volume %s: %w", dir, err)
			}
			dn.log.Error("volume failed to open", "volume", dir, "err", err)
			failed = append(failed, failedVolume{Dir: dir, StorageType: st, At: dn.clk.Now(), Err: err.Error()})
			continue
		}
		dn.vols = append(dn.vols, v)
	}
	dn.mu.failed = failed
	if err := dn.checkTolerance(len(dn.vols)); err != nil {
		return err
	}
	return nil
}

// checkTolerance returns the error that stops the DataNode when more
// volumes failed than tolerated, or none is left.
func (dn *DataNode) checkTolerance(left int) error {
	dn.mu.Lock()
	failed := append([]failedVolume(nil), dn.mu.failed...)
	dn.mu.Unlock()
	tol := dn.cfg.FailedVolumesTolerated
	if left > 0 && (tol < 0 || len(failed) <= tol) {
		return nil
	}
	var names []string
	for _, f := range failed {
		names = append(names, f.Dir+" ("+f.Err+")")
	}
	return fmt.Errorf("datanode: too many failed volumes: %d failed [%s], %d in service, volumes configured: %d, %s: %d",
		len(failed), strings.Join(names, "; "), left, len(dn.cfg.DataDirs), "dfs.datanode.failed.volumes.tolerated", tol)
}

// volumes are the volumes in service.
func (dn *DataNode) volumes() []*storage.Volume {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds != nil {
		return ds.Volumes()
	}
	return dn.vols
}

// volumeByDir returns the volume in service at dir.
func (dn *DataNode) volumeByDir(dir string) *storage.Volume {
	for _, v := range dn.volumes() {
		if v.Dir() == dir {
			return v
		}
	}
	return nil
}

// failedVolumes returns the volumes out of service after a failure.
func (dn *DataNode) failedVolumes() []failedVolume {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	return append([]failedVolume(nil), dn.mu.failed...)
}

// storageTypeOf is the storage type of a storage id (DISK if unknown).
func (dn *DataNode) storageTypeOf(sid string) storage.StorageType {
	for _, v := range dn.volumes() {
		if v.StorageID() == sid {
			return v.StorageType()
		}
	}
	for _, f := range dn.failedVolumes() {
		if f.StorageID == sid {
			return f.StorageType
		}
	}
	return storage.Disk
}

// failVolume takes a failed volume out of service (see the top of the
// file). It is safe to call more than once for a volume.
func (dn *DataNode) failVolume(v *storage.Volume, cause error) {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds == nil {
		return
	}
	rep, _ := v.Report()
	dn.blockScan.RemoveVolume(v)
	lost, err := ds.RemoveVolume(v)
	if errors.Is(err, storage.ErrBadVolume) {
		return // already out of service
	}
	if err != nil {
		dn.log.Warn("closing failed volume", "volume", v.Dir(), "err", err)
	}
	dn.mu.Lock()
	dn.mu.failed = append(dn.mu.failed, failedVolume{Dir: v.Dir(), StorageID: v.StorageID(), StorageType: v.StorageType(),
		At: dn.clk.Now(), Err: cause.Error(), Capacity: rep.Capacity})
	dn.mu.Unlock()
	dn.act.volumeFailures.Add(1)
	dn.log.Error("volume failed and was taken out of service; its replicas are reported lost", "volume", v.Dir(),
		"storageID", v.StorageID(), "replicas", len(lost), "err", cause)
	dn.reportLost(v.StorageID(), lost)
	if err := dn.checkTolerance(len(ds.Volumes())); err != nil {
		dn.fail(err)
		return
	}
	dn.requestFullReports()
}

// reportLost tells the NameNodes that replicas left with their volume.
func (dn *DataNode) reportLost(sid string, lost []storage.LostReplica) {
	for _, l := range lost {
		if l.Invalidated {
			dn.mu.Lock()
			delete(dn.mu.deletes, deleteKey{l.PoolID, l.Replica.ID})
			dn.mu.Unlock()
		}
		for _, a := range dn.actorsOf(l.PoolID) {
			a.queueIBR(ibrEntry{storageID: sid, block: l.Replica.Block, status: ibrDeleted})
		}
	}
}

// requestFullReports makes every actor send a full block report soon.
func (dn *DataNode) requestFullReports() {
	for _, a := range dn.actors {
		select {
		case a.reportNow <- struct{}{}:
		default:
		}
	}
}

// errPath is the file an error is about, "" when it names none.
func errPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Old
	}
	return ""
}

// volumeOfPath is the volume in service whose directory holds path.
func (dn *DataNode) volumeOfPath(path string) *storage.Volume {
	if path == "" {
		return nil
	}
	for _, v := range dn.volumes() {
		if rel, err := filepath.Rel(v.Dir(), path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return v
		}
	}
	return nil
}

// noteIOError asks for a check of the volume an I/O error happened on
// (errors that name no file of a volume are not the disks' fault).
func (dn *DataNode) noteIOError(err error) {
	c := dn.checker.Load()
	if err == nil || c == nil {
		return
	}
	if v := dn.volumeOfPath(errPath(err)); v != nil {
		dn.log.Warn("I/O error on a volume; checking it", "volume", v.Dir(), "err", err)
		c.request(v)
	}
}

// noteReadFailure handles a failed read of a replica: when the error is the
// disk's (it names a file of a volume, or the meta file is bad) or always
// is set (a failed copy or transfer), the scanner verifies the replica
// before anything else; a disk error also has the volume checked.
func (dn *DataNode) noteReadFailure(pool string, r storage.Replica, err error, always bool) {
	if err == nil {
		return
	}
	disk := dn.volumeOfPath(errPath(err)) != nil || errors.Is(err, storage.ErrBadMeta)
	if disk || always {
		if v := dn.volumeByDir(r.VolumeDir); v != nil {
			dn.blockScan.MarkSuspect(pool, v, r.ID)
		}
	}
	dn.noteIOError(err)
}

// diskChecker checks volumes on request and periodically (Hadoop's
// DatasetVolumeChecker): at most once per min gap per volume on request,
// every volume once per min gap; a check that does not answer within the
// timeout fails the volume. Its goroutine is owned by the DataNode.
type diskChecker struct {
	dn      *DataNode
	gap     time.Duration
	timeout time.Duration
	// waitClock times a check against the timeout: the disk's own time,
	// the real clock, even when tests drive the schedule with a manual
	// one.
	waitClock clock.Clock
	req       chan *storage.Volume

	mu struct {
		sync.Mutex
		last map[string]time.Time // by volume directory
	}
}

func newDiskChecker(dn *DataNode) *diskChecker {
	c := &diskChecker{dn: dn, gap: dn.cfg.DiskCheckMinGap, timeout: dn.cfg.DiskCheckTimeout, waitClock: clock.Real{}, req: make(chan *storage.Volume, 64)}
	if c.gap <= 0 {
		c.gap = 15 * time.Minute
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Minute
	}
	c.mu.last = map[string]time.Time{}
	return c
}

// request asks for a check of v (dropped when too many are queued: the
// volume is checked by the periodic round anyway).
func (c *diskChecker) request(v *storage.Volume) {
	select {
	case c.req <- v:
	default:
	}
}

func (c *diskChecker) run(done <-chan struct{}) {
	t := c.dn.scanClock.NewTicker(c.gap)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case v := <-c.req:
			c.check(done, v, false)
		case <-t.C():
			for _, v := range c.dn.volumes() {
				c.check(done, v, true)
			}
		}
	}
}

// check checks one volume unless it was checked within the gap (an
// on-request check) and fails it when the check fails or times out.
func (c *diskChecker) check(done <-chan struct{}, v *storage.Volume, periodic bool) {
	now := c.dn.scanClock.Now()
	c.mu.Lock()
	last, seen := c.mu.last[v.Dir()]
	if !periodic && seen && now.Sub(last) < c.gap {
		c.mu.Unlock()
		c.dn.log.Debug("volume checked recently; not again", "volume", v.Dir(), "last", last)
		return
	}
	c.mu.last[v.Dir()] = now
	c.mu.Unlock()
	var pools []string
	for _, bp := range c.dn.poolList() {
		pools = append(pools, bp.ID)
	}
	result := make(chan error, 1)
	c.dn.wg.Add(1)
	go func() {
		defer c.dn.wg.Done()
		result <- v.Check(pools)
	}()
	timer := c.waitClock.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case err := <-result:
		if err != nil {
			c.dn.failVolume(v, err)
		} else {
			c.dn.log.Debug("volume check passed", "volume", v.Dir())
		}
	case <-timer.C():
		c.dn.failVolume(v, fmt.Errorf("%w: %s: the check did not finish within %v (dfs.datanode.disk.check.timeout)", storage.ErrVolumeFailed, v.Dir(), c.timeout))
	case <-done:
	}
}

// poolList returns the joined block pools.
func (dn *DataNode) poolList() []*storage.BlockPool {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	out := make([]*storage.BlockPool, 0, len(dn.mu.pools))
	for _, bp := range dn.mu.pools {
		out = append(out, bp)
	}
	return out
}

// formatVolume writes the VERSION of a new volume of cluster cid.
func (dn *DataNode) formatVolume(v *storage.Volume, cid string) error {
	sid, err := hstorage.NewStorageID(dn.rnd)
	if err != nil {
		return err
	}
	nv := &hstorage.Version{LayoutVersion: hstorage.DataNodeLayoutVersion, ClusterID: cid,
		CTime: 0, StorageType: hstorage.StorageTypeDataNode, StorageID: sid, DatanodeUUID: dn.uuid}
	if err := v.Format(nv, dn.clk.Now()); err != nil {
		return fmt.Errorf("datanode: formatting volume %s: %w", v.Dir(), err)
	}
	dn.log.Info("formatted volume", "dir", v.Dir(), "storageID", sid, "clusterID", cid, "storageType", v.StorageType().String())
	return nil
}

// addVolume opens, formats if new, and puts into service the volume at
// dir (hot swap).
func (dn *DataNode) addVolume(dir string, st storage.StorageType, deps storage.VolumeTesting) error {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds == nil {
		return fmt.Errorf("%w: the DataNode has not joined a block pool yet", ErrPoolNotReady)
	}
	cid := dn.clusterID()
	v, err := storage.OpenVolume(storage.VolumeConfig{Dir: dir, StorageType: st, Reserved: dn.cfg.reservedFor(st), Testing: deps})
	if err != nil {
		return err
	}
	ver := v.Version()
	switch {
	case ver == nil:
		if err := dn.formatVolume(v, cid); err != nil {
			v.Close()
			return err
		}
	case ver.ClusterID != cid:
		v.Close()
		return fmt.Errorf("%w: %s has clusterID %s, the DataNode's is %s", ErrClusterMismatch, dir, ver.ClusterID, cid)
	case ver.DatanodeUUID != "" && ver.DatanodeUUID != dn.uuid:
		v.Close()
		return fmt.Errorf("%w: %s belongs to DataNode %s, this is %s", storage.ErrBadVolume, dir, ver.DatanodeUUID, dn.uuid)
	}
	res, err := ds.AddVolume(v, dn.clk.Now())
	if err != nil {
		v.Close()
		return err
	}
	for pool, r := range res {
		for _, p := range r.Problems {
			dn.log.Warn("volume scan", "volume", dir, "pool", pool, "problem", p)
		}
		dn.log.Info("volume added", "volume", dir, "storageID", v.StorageID(), "pool", pool, "replicas", r.Replicas)
	}
	dn.mu.Lock()
	kept := dn.mu.failed[:0]
	for _, f := range dn.mu.failed {
		if f.Dir != dir {
			kept = append(kept, f)
		}
	}
	dn.mu.failed = kept
	dn.mu.Unlock()
	dn.blockScan.AddVolume(v)
	return nil
}

// removeVolume takes a volume out of service because it is no longer
// configured (hot swap); its replicas are reported lost.
func (dn *DataNode) removeVolume(v *storage.Volume) error {
	dn.mu.Lock()
	ds := dn.mu.ds
	dn.mu.Unlock()
	if ds == nil {
		return ErrPoolNotReady
	}
	dn.blockScan.RemoveVolume(v)
	lost, err := ds.RemoveVolume(v)
	if errors.Is(err, storage.ErrBadVolume) {
		return err
	}
	dn.log.Info("volume removed from service", "volume", v.Dir(), "storageID", v.StorageID(), "replicasReportedLost", len(lost))
	dn.reportLost(v.StorageID(), lost)
	return err
}

// storageProto describes a storage to the NameNode.
func (dn *DataNode) storageProto(id string) *hdfs.DatanodeStorageProto {
	return &hdfs.DatanodeStorageProto{StorageUuid: proto.String(id),
		State: hdfs.DatanodeStorageProto_NORMAL.Enum(), StorageType: hdfs.StorageTypeProto(dn.storageTypeOf(id)).Enum()}
}
