package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
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
}

// Dataset is all the replicas of a DataNode: its volumes and, per block pool,
// a ReplicaMap. It owns the volumes given to NewDataset and closes them in
// Close. Safe for concurrent use.
//
// Lock order: a ReplicaMap's mutex, then the Dataset's, then a Volume's. A
// ReplicaWriter's own mutex is taken before any of them.
type Dataset struct {
	cfg  Config
	vols []*Volume

	mu struct {
		sync.Mutex
		next   int // round-robin position
		pools  map[string]*BlockPool
		closed bool
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
	d := &Dataset{cfg: cfg, vols: vols}
	d.mu.pools = make(map[string]*BlockPool)
	return d, nil
}

// Volumes returns the dataset's volumes.
func (d *Dataset) Volumes() []*Volume { return append([]*Volume(nil), d.vols...) }

// Reports returns every volume's space report.
func (d *Dataset) Reports() ([]VolumeReport, error) {
	out := make([]VolumeReport, 0, len(d.vols))
	for _, v := range d.vols {
		r, err := v.Report()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
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

	bp := &BlockPool{ID: poolID, ds: d, replicas: newReplicaMap()}
	for _, v := range d.vols {
		if err := preparePool(v, ver, now); err != nil {
			return nil, res, err
		}
	}
	for _, v := range d.vols {
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

// preparePool makes <vol>/current/<bpid>/{current/{finalized,rbw},tmp} and the
// pool's VERSION.
func preparePool(v *Volume, ver *hstorage.Version, now time.Time) error {
	l := newPoolLayout(v.Dir(), ver.BlockPoolID)
	dir := hstorage.Dir{Root: l.root}
	old, err := dir.ReadVersion(vfs.Default)
	switch {
	case err == nil:
		if old.BlockPoolID != ver.BlockPoolID || old.NamespaceID != ver.NamespaceID {
			return fmt.Errorf("%w: %s holds block pool %s of namespace %d, want %s of %d",
				ErrBadVolume, dir.VersionPath(), old.BlockPoolID, old.NamespaceID, ver.BlockPoolID, ver.NamespaceID)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(l.current(), 0o700); err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
		if err := dir.WriteVersion(vfs.Default, ver, now); err != nil {
			return err
		}
	default:
		return err
	}
	for _, p := range []string{l.finalized(), l.rbw(), l.tmp()} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
	}
	for _, p := range []string{l.current(), l.root, filepath.Join(v.Dir(), CurrentDir)} {
		if err := syncDir(p); err != nil {
			return fmt.Errorf("datanode/storage: sync %s: %w", p, err)
		}
	}
	return nil
}

// chooseVolume picks the next volume, round robin, that has need bytes
// remaining, and reserves them there. A volume too full is skipped.
func (d *Dataset) chooseVolume(need int64) (*Volume, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	var full []string
	for i := 0; i < len(d.vols); i++ {
		v := d.vols[(d.mu.next+i)%len(d.vols)]
		ok, err := v.reserve(need)
		if err != nil {
			full = append(full, fmt.Sprintf("%s (%v)", v.Dir(), err))
			continue
		}
		if ok {
			d.mu.next = (d.mu.next + i + 1) % len(d.vols)
			return v, nil
		}
		rep, _ := v.Report()
		full = append(full, fmt.Sprintf("%s (%d bytes remaining)", v.Dir(), rep.Remaining))
	}
	return nil, fmt.Errorf("%w: need %d bytes; %s", ErrOutOfSpace, need, strings.Join(full, ", "))
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
	for _, v := range d.vols {
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
