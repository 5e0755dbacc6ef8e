package storage

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
)

// Config configures a Dataset.
type Config struct {
	// SyncOnClose is dfs.datanode.synconclose (default false): fdatasync a
	// replica's files when it is finalized, not only on hsync.
	SyncOnClose bool
	// OnDeleted, if set, is called from a volume's deleter goroutine once an
	// invalidated replica's files are gone (the DataNode then reports
	// DELETED_BLOCK). It must not block for long.
	OnDeleted func(poolID string, b Block)
	// NewPolicy makes the policy that chooses the volume of each new
	// replica (dfs.datanode.fsdataset.volume.choosing.policy), one per
	// storage type; nil is round robin.
	NewPolicy func() VolumeChoosingPolicy
	// Rollback is the DataNode's -rollback start-up option: a block pool
	// added with AddBlockPool whose storage keeps a previous state
	// (previous/, an upgrade not finalized) is rolled back to it (see
	// upgrade.go). AddVolume never rolls back.
	Rollback bool
	// Failpoint is called after each step of an upgrade, rollback or
	// finalize (package failpoint); nil in production.
	Failpoint failpoint.Func
}

// Dataset is all the replicas of a DataNode: its volumes and, per block pool,
// a ReplicaMap. It owns the volumes given to NewDataset or AddVolume and
// closes them in Close (or RemoveVolume). Safe for concurrent use.
//
// Lock order: a ReplicaMap's mutex, then the Dataset's, then a Volume's. A
// ReplicaWriter's own mutex is taken before any of them.
type Dataset struct {
	cfg Config

	mu struct {
		sync.Mutex
		vols     []*Volume // in service, in configuration order
		policies map[StorageType]VolumeChoosingPolicy
		pools    map[string]*BlockPool
		closed   bool
		// scratch for chooseVolume
		cands []*Volume
		avail []int64
	}
}

// NewDataset returns a dataset over the given open, formatted volumes.
func NewDataset(cfg Config, vols []*Volume) (*Dataset, error) {
	if len(vols) == 0 {
		return nil, fmt.Errorf("%w: no volumes", ErrBadVolume)
	}
	for _, v := range vols {
		if v.Version() == nil {
			return nil, fmt.Errorf("%w: %s is not formatted", ErrBadVolume, v.Dir())
		}
	}
	d := &Dataset{cfg: cfg}
	d.mu.vols = append([]*Volume(nil), vols...)
	d.mu.pools = make(map[string]*BlockPool)
	d.mu.policies = make(map[StorageType]VolumeChoosingPolicy)
	if d.cfg.NewPolicy == nil {
		d.cfg.NewPolicy = func() VolumeChoosingPolicy { return &RoundRobinPolicy{} }
	}
	return d, nil
}

// Volumes returns the volumes in service.
func (d *Dataset) Volumes() []*Volume {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Volume(nil), d.mu.vols...)
}

// Volume returns the volume in service whose root is dir.
func (d *Dataset) Volume(dir string) (*Volume, bool) {
	for _, v := range d.Volumes() {
		if v.Dir() == dir {
			return v, true
		}
	}
	return nil, false
}

// Pools returns the block pools added so far.
func (d *Dataset) Pools() []*BlockPool {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*BlockPool, 0, len(d.mu.pools))
	for _, bp := range d.mu.pools {
		out = append(out, bp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Reports returns every volume's space report. A volume whose file system
// cannot be asked is left out and its error returned, with the others'.
func (d *Dataset) Reports() ([]VolumeReport, error) {
	vols := d.Volumes()
	out := make([]VolumeReport, 0, len(vols))
	var errs []error
	for _, v := range vols {
		r, err := v.Report()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// BlockPool returns an added block pool.
func (d *Dataset) BlockPool(id string) (*BlockPool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	bp, ok := d.mu.pools[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownPool, id)
	}
	return bp, nil
}

// ScanResult tells what a block pool's startup scan found.
type ScanResult struct {
	Replicas int      // replicas in the map after the scan
	Removed  []string // files deleted: losers of duplicate resolution, stale meta files
	Problems []string // files left alone that do not form a replica (block without meta, …)
	// Transitions are what the pool's start did to its storage: an
	// interrupted upgrade, rollback or finalize repaired, a rollback, an
	// upgrade (see upgrade.go).
	Transitions []Transition
}

// AddBlockPool creates (or checks) the block pool's directories and VERSION
// on every volume, rebuilds its ReplicaMap from disk and returns the pool. ver
// is the block-pool VERSION (storage type "", namespaceID, cTime, blockpoolID,
// layoutVersion); a volume that already has one must have the same pool and
// namespace id.
func (d *Dataset) AddBlockPool(ver *hstorage.Version, now time.Time) (*BlockPool, ScanResult, error) {
	var res ScanResult
	if ver.StorageType != hstorage.StorageTypeBlockPool {
		return nil, res, fmt.Errorf("%w: block-pool VERSION with storageType %q", ErrBadVolume, ver.StorageType)
	}
	poolID := ver.BlockPoolID
	if poolID == "" || strings.ContainsAny(poolID, "/\\") || poolID == "." || poolID == ".." {
		return nil, res, fmt.Errorf("%w: block pool id %q", ErrBadVolume, poolID)
	}
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return nil, res, ErrClosed
	}
	if _, ok := d.mu.pools[poolID]; ok {
		d.mu.Unlock()
		return nil, res, fmt.Errorf("%w: block pool %s added twice", ErrBadVolume, poolID)
	}
	d.mu.Unlock()

	bp := &BlockPool{ID: poolID, ds: d, ver: ver, replicas: newReplicaMap()}
	vols := d.Volumes()
	for _, v := range vols {
		if err := d.preparePool(v, ver, now, d.cfg.Rollback, &res); err != nil {
			return nil, res, err
		}
	}
	for _, v := range vols {
		if err := bp.scanVolume(v, &res); err != nil {
			return nil, res, err
		}
	}
	res.Replicas = bp.replicas.Len()

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, res, ErrClosed
	}
	d.mu.pools[poolID] = bp
	return bp, res, nil
}

// AddVolume puts a new, open and formatted volume into service (a hot-swap
// of dfs.datanode.data.dir): every block pool's directories are prepared on
// it and its replicas are added to the pools' maps, then new replicas may be
// placed on it. It returns what each pool's scan found.
func (d *Dataset) AddVolume(v *Volume, now time.Time) (map[string]ScanResult, error) {
	if v.Version() == nil {
		return nil, fmt.Errorf("%w: %s is not formatted", ErrBadVolume, v.Dir())
	}
	d.mu.Lock()
	for _, o := range d.mu.vols {
		if o.Dir() == v.Dir() || o.StorageID() == v.StorageID() {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w: %s (storage %s) is already in service", ErrBadVolume, v.Dir(), v.StorageID())
		}
	}
	d.mu.Unlock()
	out := map[string]ScanResult{}
	for _, bp := range d.Pools() {
		var res ScanResult
		if err := d.preparePool(v, bp.ver, now, false, &res); err != nil {
			return out, err
		}
		if err := bp.scanVolume(v, &res); err != nil {
			return out, err
		}
		res.Replicas = bp.replicas.countOn(v)
		out[bp.ID] = res
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return out, ErrClosed
	}
	d.mu.vols = append(d.mu.vols, v)
	return out, nil
}

// LostReplica is a replica that left the dataset with its volume.
type LostReplica struct {
	PoolID  string
	Replica Replica
	// Invalidated: the replica had already been invalidated and was
	// waiting for the volume's deleter.
	Invalidated bool
}

// RemoveVolume takes a volume out of service: because it failed, or
// because the operator removed it from dfs.datanode.data.dir. No new
// replica is placed on it; every writer of a replica on it is stopped (its
// pipeline stage drops its connections, and the client goes on without this
// node); its replicas leave the pools' maps and are returned, for the
// NameNode to hear they are gone; and the volume is closed (its lock
// released). The files stay where they are. Removing a volume not in
// service is ErrBadVolume.
func (d *Dataset) RemoveVolume(v *Volume) ([]LostReplica, error) {
	d.mu.Lock()
	idx := -1
	for i, o := range d.mu.vols {
		if o == v {
			idx = i
		}
	}
	if idx < 0 {
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: %s is not in service", ErrBadVolume, v.Dir())
	}
	d.mu.vols = append(d.mu.vols[:idx:idx], d.mu.vols[idx+1:]...)
	d.mu.Unlock()
	var lost []LostReplica
	for _, bp := range d.Pools() {
		for _, r := range bp.removeVolume(v) {
			lost = append(lost, LostReplica{PoolID: bp.ID, Replica: r})
		}
	}
	for _, t := range v.drain() {
		lost = append(lost, LostReplica{PoolID: t.poolID, Replica: Replica{Block: t.block, StorageID: v.StorageID(), VolumeDir: v.Dir()}, Invalidated: true})
	}
	return lost, v.Close()
}

// chooseVolume picks a volume with need bytes remaining, by the policy,
// among the volumes of storage type st (every volume when st is AnyStorage
// or no volume has that type), and reserves the bytes there.
func (d *Dataset) chooseVolume(need int64, st StorageType) (*Volume, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	policy := d.mu.policies[st]
	if policy == nil {
		policy = d.cfg.NewPolicy()
		d.mu.policies[st] = policy
	}
	cands := d.mu.cands[:0]
	for _, v := range d.mu.vols {
		if st == AnyStorage || v.StorageType() == st {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		// A writer that names no type asks for DISK (the protocol's
		// default), whatever the NameNode chose: a node without the type
		// asked for takes the replica on another rather than refusing it,
		// and reports where it went.
		cands = append(cands, d.mu.vols...)
	}
	d.mu.cands = cands
	var problems []string
	// A volume that fails to reserve (statfs error, a race with another
	// writer) leaves the candidates and the policy chooses again.
	for len(cands) > 0 {
		avail := d.mu.avail[:0]
		for _, v := range cands {
			rep, err := v.Report()
			if err != nil {
				rep.Remaining = -1
			}
			avail = append(avail, rep.Remaining)
		}
		d.mu.avail = avail
		i := policy.Choose(avail, need)
		if i < 0 {
			break
		}
		v := cands[i]
		ok, err := v.reserve(need)
		if err == nil && ok {
			return v, nil
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (%v)", v.Dir(), err))
		} else {
			problems = append(problems, fmt.Sprintf("%s (%d bytes remaining)", v.Dir(), avail[i]))
		}
		cands = append(cands[:i:i], cands[i+1:]...)
	}
	for i, v := range cands {
		problems = append(problems, fmt.Sprintf("%s (%d bytes remaining)", v.Dir(), d.mu.avail[i]))
	}
	return nil, fmt.Errorf("%w: need %d bytes; %s", ErrOutOfSpace, need, strings.Join(problems, ", "))
}

// Close closes the volumes. Writers still open see ErrWriterStopped
// afterwards at the latest when they touch the replica map.
func (d *Dataset) Close() error {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		return nil
	}
	d.mu.closed = true
	pools := make([]*BlockPool, 0, len(d.mu.pools))
	for _, bp := range d.mu.pools {
		pools = append(pools, bp)
	}
	d.mu.Unlock()
	for _, bp := range pools {
		bp.stopWriters()
	}
	var first error
	d.mu.Lock()
	vols := d.mu.vols
	d.mu.Unlock()
	for _, v := range vols {
		if err := v.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// checkChecksum validates a checksum a writer asks for.
func checkChecksum(c datatransfer.DataChecksum) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("datanode/storage: %w", err)
	}
	return nil
}
