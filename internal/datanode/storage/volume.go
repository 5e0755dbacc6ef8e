package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// DiskStat is what the file system under a volume says about its space.
type DiskStat struct {
	Total     int64 // size of the file system
	Available int64 // bytes an unprivileged writer may still use
}

// VolumeConfig configures one volume (one entry of dfs.datanode.data.dir).
type VolumeConfig struct {
	// Dir is the volume's root directory; it is created if missing.
	Dir string
	// StorageType is the volume's medium, the tag of its
	// dfs.datanode.data.dir entry ([DISK] when untagged).
	StorageType StorageType
	// Reserved is dfs.datanode.du.reserved (default 0), or its variant for
	// the volume's storage type (dfs.datanode.du.reserved.ssd, ...): bytes
	// left for non-DFS use, subtracted from capacity and remaining.
	Reserved int64
	// Testing holds knobs that configuration files cannot set.
	Testing VolumeTesting
}

// VolumeTesting holds test-only volume knobs.
type VolumeTesting struct {
	// StatFS replaces statfs(2) of the volume's file system.
	StatFS func(dir string) (DiskStat, error)
	// LockHolder replaces the "pid@hostname" written into in_use.lock.
	LockHolder string
}

// VolumeReport is a volume's space as heartbeats report it.
type VolumeReport struct {
	Dir         string
	StorageID   string
	StorageType StorageType
	Capacity    int64 // file system size minus Reserved
	DfsUsed     int64 // bytes of block and meta files this volume holds
	NonDfsUsed  int64
	Remaining   int64 // bytes new replicas may still take
	Reserved    int64 // configured reserve
	// ReservedForReplicas is space promised to replicas being written.
	ReservedForReplicas int64
}

// deleteTask is one replica's files handed to a volume's deleter.
type deleteTask struct {
	poolID string
	block  Block
	paths  []string
	bytes  int64
	done   func(poolID string, b Block)
}

// Volume is one data directory: it holds the directory lock, the volume
// VERSION, the space accounting and the asynchronous deleter goroutine, which
// OpenVolume starts and Close stops. Safe for concurrent use.
type Volume struct {
	cfg  VolumeConfig
	lock io.Closer

	wake chan struct{} // signals the deleter; buffered, size 1
	stop chan struct{} // closed by Close
	done chan struct{} // closed when the deleter has returned

	mu struct {
		sync.Mutex
		version  *hstorage.Version // nil until formatted
		dfsUsed  int64
		reserved int64 // for replicas being written
		queue    []deleteTask
		closed   bool
		seq      int64 // names of invalidated files in tmp/
	}
}

// OpenVolume takes the volume's in_use.lock, reads current/VERSION if the
// volume is formatted, and starts its deleter.
func OpenVolume(cfg VolumeConfig) (*Volume, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: empty directory name", ErrBadVolume)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("datanode/storage: create volume %s: %w", cfg.Dir, err)
	}
	var lk io.Closer
	var err error
	if cfg.Testing.LockHolder != "" {
		lk, err = hstorage.LockAs(vfs.Default, cfg.Dir, cfg.Testing.LockHolder)
	} else {
		lk, err = hstorage.Lock(vfs.Default, cfg.Dir)
	}
	if err != nil {
		return nil, err
	}
	if cfg.StorageType == AnyStorage {
		cfg.StorageType = Disk
	}
	v := &Volume{cfg: cfg, lock: lk, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	root := hstorage.Dir{Root: cfg.Dir}
	// The volume's own current/ never changes in a transition of ours
	// (block pools do, below it), but a Hadoop release before federation
	// upgraded it; repair what such an upgrade left.
	if _, err := root.Recover(vfs.Default); err != nil {
		_ = lk.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrBadVolume, cfg.Dir, err)
	}
	ver, err := root.ReadVersion(vfs.Default)
	switch {
	case err == nil:
		if ver.StorageType != hstorage.StorageTypeDataNode {
			_ = lk.Close()
			return nil, fmt.Errorf("%w: %s: storageType %q, want %s", ErrBadVolume, cfg.Dir, ver.StorageType, hstorage.StorageTypeDataNode)
		}
		if err := upgradeVolumeVersion(root, ver); err != nil {
			_ = lk.Close()
			return nil, err
		}
		v.mu.version = ver
	case errors.Is(err, fs.ErrNotExist):
	default:
		_ = lk.Close()
		return nil, err
	}
	go v.deleter()
	return v, nil
}

// upgradeVolumeVersion checks the layout of a volume's VERSION and writes
// this DataNode's into it when it is older (Hadoop's DataStorage does the
// same: the volume level holds no replicas, its block pools are upgraded
// one by one with previous/ kept). ver is updated in place.
func upgradeVolumeVersion(root hstorage.Dir, ver *hstorage.Version) error {
	switch {
	case ver.LayoutVersion == hstorage.DataNodeLayoutVersion:
		return nil
	case ver.LayoutVersion < hstorage.DataNodeLayoutVersion:
		return fmt.Errorf("%w: %s has layout version %d, newer than this DataNode's %d: a newer release wrote it",
			ErrBadVolume, root.VersionPath(), ver.LayoutVersion, hstorage.DataNodeLayoutVersion)
	case ver.LayoutVersion > hstorage.OldestDataNodeLayoutVersion:
		return fmt.Errorf("%w: %s has layout version %d; this DataNode upgrades from %d and later only: upgrade with an older release first",
			ErrBadVolume, root.VersionPath(), ver.LayoutVersion, hstorage.OldestDataNodeLayoutVersion)
	}
	nv := *ver
	nv.LayoutVersion = hstorage.DataNodeLayoutVersion
	if err := root.WriteVersion(vfs.Default, &nv, time.Now()); err != nil {
		return err
	}
	*ver = nv
	return nil
}

// Dir returns the volume's root directory.
func (v *Volume) Dir() string { return v.cfg.Dir }

// StorageType returns the volume's medium.
func (v *Volume) StorageType() StorageType { return v.cfg.StorageType }

// Version returns the volume's VERSION, or nil if it is not formatted.
func (v *Volume) Version() *hstorage.Version {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mu.version
}

// StorageID returns the volume's storage id ("" if not formatted).
func (v *Volume) StorageID() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.version == nil {
		return ""
	}
	return v.mu.version.StorageID
}

// Format writes current/VERSION of a new volume (storage type DATA_NODE).
// The volume must be empty but for its lock.
func (v *Volume) Format(ver *hstorage.Version, now time.Time) error {
	if ver.StorageType != hstorage.StorageTypeDataNode {
		return fmt.Errorf("%w: %s: formatting with storageType %q", ErrBadVolume, v.cfg.Dir, ver.StorageType)
	}
	if err := (hstorage.Dir{Root: v.cfg.Dir}).Format(vfs.Default, ver, now, false); err != nil {
		return err
	}
	v.mu.Lock()
	v.mu.version = ver
	v.mu.Unlock()
	return nil
}

func (v *Volume) statfs() (DiskStat, error) {
	if v.cfg.Testing.StatFS != nil {
		return v.cfg.Testing.StatFS(v.cfg.Dir)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(v.cfg.Dir, &st); err != nil {
		return DiskStat{}, fmt.Errorf("datanode/storage: statfs %s: %w", v.cfg.Dir, err)
	}
	return DiskStat{Total: int64(st.Blocks) * int64(st.Bsize), Available: int64(st.Bavail) * int64(st.Bsize)}, nil
}

// Report returns the volume's space. Capacity is the file system size less
// the reserve; Remaining is the smaller of what capacity leaves after DFS use
// and what the file system has free once the part of the reserve that other
// data does not already occupy is set aside, less space promised to writers.
func (v *Volume) Report() (VolumeReport, error) {
	st, err := v.statfs()
	if err != nil {
		return VolumeReport{}, err
	}
	v.mu.Lock()
	used, forReplicas := v.mu.dfsUsed, v.mu.reserved
	id := ""
	if v.mu.version != nil {
		id = v.mu.version.StorageID
	}
	v.mu.Unlock()
	rep := computeReport(v.cfg.Dir, id, st, v.cfg.Reserved, used, forReplicas)
	rep.StorageType = v.cfg.StorageType
	return rep, nil
}

func computeReport(dir, id string, st DiskStat, reserved, used, forReplicas int64) VolumeReport {
	capacity := max(st.Total-reserved, 0)
	actualNonDfs := max(st.Total-st.Available-used, 0)
	remainingReserve := max(reserved-actualNonDfs, 0)
	remaining := min(capacity-used-forReplicas, st.Available-remainingReserve-forReplicas)
	return VolumeReport{
		Dir:                 dir,
		StorageID:           id,
		Capacity:            capacity,
		DfsUsed:             used,
		NonDfsUsed:          max(actualNonDfs-reserved, 0),
		Remaining:           max(remaining, 0),
		Reserved:            reserved,
		ReservedForReplicas: forReplicas,
	}
}

// reserve promises n bytes to a replica being written if the volume has
// them; it reports whether it did.
func (v *Volume) reserve(n int64) (bool, error) {
	st, err := v.statfs()
	if err != nil {
		return false, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mu.closed {
		return false, fmt.Errorf("%w: volume %s", ErrClosed, v.cfg.Dir)
	}
	id := ""
	if v.mu.version != nil {
		id = v.mu.version.StorageID
	}
	rep := computeReport(v.cfg.Dir, id, st, v.cfg.Reserved, v.mu.dfsUsed, v.mu.reserved)
	if rep.Remaining < n {
		return false, nil
	}
	v.mu.reserved += n
	return true, nil
}

// release returns space promised by reserve.
func (v *Volume) release(n int64) {
	if n == 0 {
		return
	}
	v.mu.Lock()
	v.mu.reserved = max(v.mu.reserved-n, 0)
	v.mu.Unlock()
}

// addUsed adjusts the bytes of block and meta files the volume holds.
func (v *Volume) addUsed(n int64) {
	v.mu.Lock()
	v.mu.dfsUsed += n
	v.mu.Unlock()
}

// nextSeq returns a number unique within this process's use of the volume.
func (v *Volume) nextSeq() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.mu.seq++
	return v.mu.seq
}

// enqueueDelete hands files to the deleter. After Close the files are left
// where they are; they sit in a block pool's tmp/, which the next start
// empties.
func (v *Volume) enqueueDelete(t deleteTask) {
	v.mu.Lock()
	if v.mu.closed {
		v.mu.Unlock()
		return
	}
	v.mu.queue = append(v.mu.queue, t)
	v.mu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// PendingDeletes returns the number of replicas waiting for the deleter.
func (v *Volume) PendingDeletes() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.mu.queue)
}

func (v *Volume) deleter() {
	defer close(v.done)
	for {
		select {
		case <-v.stop:
			return
		case <-v.wake:
		}
		for {
			v.mu.Lock()
			if v.mu.closed || len(v.mu.queue) == 0 {
				v.mu.Unlock()
				break
			}
			t := v.mu.queue[0]
			v.mu.queue = v.mu.queue[1:]
			v.mu.Unlock()
			for _, p := range t.paths {
				// A file already gone is what we wanted; other errors
				// leave the file in tmp/, emptied at the next start.
				_ = os.Remove(p)
			}
			if len(t.paths) > 0 {
				_ = syncDir(filepath.Dir(t.paths[0]))
			}
			v.addUsed(-t.bytes)
			if t.done != nil {
				t.done(t.poolID, t.block)
			}
		}
	}
}

// drain empties the deleter's queue and returns what was in it (the volume
// is leaving service; the files stay in tmp/, emptied at the next start).
func (v *Volume) drain() []deleteTask {
	v.mu.Lock()
	defer v.mu.Unlock()
	q := v.mu.queue
	v.mu.queue = nil
	return q
}

// Close stops the deleter (files still queued stay in tmp/) and releases
// the directory lock. Replica writers on the volume must be finished first.
func (v *Volume) Close() error {
	v.mu.Lock()
	if v.mu.closed {
		v.mu.Unlock()
		return nil
	}
	v.mu.closed = true
	v.mu.queue = nil
	v.mu.Unlock()
	close(v.stop)
	<-v.done
	return v.lock.Close()
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	return vfs.Default.SyncDir(dir)
}
