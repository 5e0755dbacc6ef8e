package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ScanInfo is what the directory scanner found on disk for one block id in
// one block pool's finalized/ tree of one volume (Hadoop's ScanInfo): the
// block file and its length, the meta file and the generation stamp its name
// carries. BlockFile or MetaFile is "" when that file is missing; both are
// "" for a replica of the map that has no file on disk at all.
type ScanInfo struct {
	ID        int64
	BlockFile string
	BlockLen  int64
	MetaFile  string
	GenStamp  int64 // from MetaFile's name; 0 (Hadoop's grandfather stamp) without one
	Vol       *Volume
}

// CompileReport lists the block and meta files of the pool's finalized/
// tree on v, sorted by block id (the directory scanner's disk report). pace
// is called once per directory listed (the scanner's throttle); its error
// ends the compilation. When a block has several meta files the newest
// generation stamp is taken.
func (bp *BlockPool) CompileReport(v *Volume, pace func() error) ([]ScanInfo, error) {
	var out []ScanInfo
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if pace != nil {
			if err := pace(); err != nil {
				return err
			}
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && depth > 0 {
				return nil // removed meanwhile
			}
			return fmt.Errorf("datanode/storage: directory scan of %s: %w", dir, err)
		}
		byID := map[int64]*ScanInfo{}
		get := func(id int64) *ScanInfo {
			si := byID[id]
			if si == nil {
				si = &ScanInfo{ID: id, Vol: v}
				byID[id] = si
			}
			return si
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() {
				if strings.HasPrefix(name, subdirPrefix) && depth < 2 {
					if err := walk(filepath.Join(dir, name), depth+1); err != nil {
						return err
					}
				}
				continue
			}
			if id, ok := ParseBlockFileName(name); ok {
				si := get(id)
				si.BlockFile = filepath.Join(dir, name)
				if fi, err := e.Info(); err == nil {
					si.BlockLen = fi.Size()
				}
			} else if id, gs, ok := ParseMetaFileName(name); ok {
				si := get(id)
				if si.MetaFile == "" || gs > si.GenStamp {
					si.MetaFile, si.GenStamp = filepath.Join(dir, name), gs
				}
			}
		}
		for _, si := range byID {
			out = append(out, *si)
		}
		return nil
	}
	if err := walk(bp.layout(v).finalized(), 0); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DiffStats counts what a directory scan found (Hadoop's per-pool Stats).
type DiffStats struct {
	TotalBlocks         int // finalized replicas in memory
	MissingMetaFile     int
	MissingBlockFile    int
	MissingMemoryBlocks int // files on disk the map does not have
	MismatchBlocks      int // generation stamp or length differ
	DuplicateBlocks     int // the same block in another place than the map says
}

func (s DiffStats) String() string {
	return fmt.Sprintf("total blocks: %d, missing metadata files: %d, missing block files: %d, missing blocks in memory: %d, mismatched blocks: %d, duplicated blocks: %d",
		s.TotalBlocks, s.MissingMetaFile, s.MissingBlockFile, s.MissingMemoryBlocks, s.MismatchBlocks, s.DuplicateBlocks)
}

// Differences compares the pool's FINALIZED replicas in memory (mem, sorted
// by id; other states are ignored) with what the disks hold (disk, every
// volume's report merged, sorted by id) and returns the records that need
// CheckAndUpdate, as Hadoop's DirectoryScanner does:
//
//	on disk, not in memory           → the disk record (missing in memory)
//	in memory, not on disk           → a record without files (missing block file)
//	both, block file missing         → the disk record (meta file only)
//	both, stamp or length differ     → the disk record (mismatch)
//	both, in another directory       → the disk record (duplicate)
//
// A block found on several volumes yields a record for each. deleting says
// whether a block id is being deleted (its files are already on their way
// out), which is not a difference.
func Differences(mem []Replica, disk []ScanInfo, deleting func(id int64) bool) ([]ScanInfo, DiffStats) {
	var fin []Replica
	for _, r := range mem {
		if r.State == Finalized {
			fin = append(fin, r)
		}
	}
	st := DiffStats{TotalBlocks: len(fin)}
	var diff []ScanInfo
	add := func(si ScanInfo) {
		if si.BlockFile == "" {
			st.MissingBlockFile++
		}
		if si.MetaFile == "" {
			st.MissingMetaFile++
		}
		diff = append(diff, si)
	}
	missingInMemory := func(si ScanInfo) {
		if deleting != nil && deleting(si.ID) {
			return
		}
		st.MissingMemoryBlocks++
		add(si)
	}
	m, d := 0, 0
	for m < len(fin) && d < len(disk) {
		r, si := fin[m], disk[d]
		switch {
		case si.ID < r.ID:
			missingInMemory(si)
			d++
			continue
		case si.ID > r.ID:
			add(ScanInfo{ID: r.ID, Vol: r.vol()})
			m++
			continue
		}
		switch {
		case si.BlockFile == "":
			add(si)
		case si.GenStamp != r.GenStamp || si.BlockLen != r.NumBytes:
			st.MismatchBlocks++
			add(si)
		case si.BlockFile != r.BlockPath:
			st.DuplicateBlocks++
			add(si)
		}
		d++
		// The same block may be on several volumes: the memory record
		// stays until the disk records of its id are done.
		if d >= len(disk) || disk[d].ID != si.ID {
			m++
		}
	}
	for ; m < len(fin); m++ {
		add(ScanInfo{ID: fin[m].ID, Vol: fin[m].vol()})
	}
	for ; d < len(disk); d++ {
		missingInMemory(disk[d])
	}
	return diff, st
}

// vol returns the volume a snapshot names, for Differences; it is set by
// the pool when the snapshot is taken for a scan.
func (r Replica) vol() *Volume { return r.volume }

// Fix says what CheckAndUpdate changed; the DataNode tells the NameNode.
type Fix struct {
	Action FixAction
	// Replica is the replica as it is now (FixAdded, FixUpdated, FixLength)
	// or as it was (FixRemoved).
	Replica Replica
	// Old is the replica before a FixLength or FixUpdated change (its
	// length or stamp as the NameNode knows it).
	Old Block
	// Deleted lists files removed from disk (a meta file without its block,
	// a block file without its meta file, the loser of a duplicate).
	Deleted []string
	Message string
}

// FixAction is the kind of change CheckAndUpdate made.
type FixAction int

// What CheckAndUpdate may do.
const (
	FixNone    FixAction = iota // nothing to change (or only files deleted)
	FixRemoved                  // replica left the map: its block file is gone
	FixAdded                    // replica entered the map from the files found
	FixUpdated                  // the map now points at other files or another stamp
	FixLength                   // the length changed to the block file's: the replica is reported corrupt
)

func (a FixAction) String() string {
	switch a {
	case FixNone:
		return "none"
	case FixRemoved:
		return "removed"
	case FixAdded:
		return "added"
	case FixUpdated:
		return "updated"
	case FixLength:
		return "length"
	}
	return fmt.Sprintf("FixAction(%d)", int(a))
}

// CheckAndUpdate reconciles the replica map with one record of Differences
// (Hadoop's FsDatasetImpl.checkAndUpdate), looking at the files again under
// the map's lock since they may have changed since the scan. A replica that
// is not FINALIZED is left alone. Otherwise:
//
//	no block file on disk, none in memory      → a meta file left is deleted
//	no block file on disk, the map's is gone   → the replica leaves the map (and its meta file the disk)
//	block file on disk, none in memory         → a FINALIZED replica is added (length of the file,
//	                                             stamp of its meta file, 0 without one)
//	the map's block file is gone, one found    → the map points at the file found, with its stamp
//	two block files, both with meta files      → the newer stamp, then the longer, is kept
//	                                             (the other's files are deleted)
//	two block files, the one found has no meta → the one found is deleted
//	stamp differs, the map's meta file missing → the map takes the stamp of the meta file next to
//	                                             its block file (0 if none)
//	length differs from the block file's      → the map takes the file's length (FixLength:
//	                                             the caller reports the replica corrupt)
//
// Several of the later rows may apply to one record; the most telling
// action is returned.
func (bp *BlockPool) CheckAndUpdate(si ScanInfo) (Fix, error) {
	rm := bp.replicas
	rm.mu.Lock()
	defer rm.mu.Unlock()
	r := rm.mu.m[si.ID]
	if r != nil && r.state != Finalized {
		return Fix{Message: fmt.Sprintf("blk_%d is %s, not finalized: left alone", si.ID, r.state)}, nil
	}
	blockExists := si.BlockFile != "" && fileExists(si.BlockFile)
	metaExists := si.MetaFile != "" && fileExists(si.MetaFile)
	var fix Fix
	if !blockExists {
		if r == nil {
			if metaExists {
				if err := os.Remove(si.MetaFile); err == nil {
					fix.Deleted = append(fix.Deleted, si.MetaFile)
					fix.Message = "deleted a meta file without a block file: " + si.MetaFile
				}
			}
			return fix, nil
		}
		if !fileExists(r.blockPath()) {
			fix = Fix{Action: FixRemoved, Replica: r.snapshot(),
				Message: fmt.Sprintf("removed blk_%d from memory: its block file %s is missing", r.id, r.blockPath())}
			delete(rm.mu.m, r.id)
			r.vol.addUsed(-filesSize(r))
			if metaExists {
				if err := os.Remove(si.MetaFile); err == nil {
					fix.Deleted = append(fix.Deleted, si.MetaFile)
				}
			}
		}
		return fix, nil
	}
	if r == nil {
		// Without a meta file the stamp is 0 (Hadoop's grandfather
		// stamp): the NameNode then finds the replica stale and has it
		// deleted.
		if !metaExists {
			si.GenStamp = 0
		}
		n := r2len(si.BlockFile)
		nr := &replica{id: si.ID, gs: si.GenStamp, state: Finalized, vol: si.Vol, dir: filepath.Dir(si.BlockFile), numBytes: n, bytesAcked: n}
		rm.mu.m[si.ID] = nr
		nr.vol.addUsed(filesSize(nr))
		return Fix{Action: FixAdded, Replica: nr.snapshot(),
			Message: fmt.Sprintf("added blk_%d_%d (%d bytes) to memory from %s", si.ID, si.GenStamp, n, si.BlockFile)}, nil
	}
	old := Block{ID: r.id, GenStamp: r.gs, NumBytes: r.numBytes}
	var msgs []string
	if fileExists(r.blockPath()) {
		if r.blockPath() != si.BlockFile {
			switch {
			case metaExists && fileExists(r.metaPath()):
				other := &replica{id: si.ID, gs: si.GenStamp, state: Finalized, vol: si.Vol, dir: filepath.Dir(si.BlockFile), numBytes: r2len(si.BlockFile)}
				keep, lose := r, other
				if other.gs > r.gs || (other.gs == r.gs && other.numBytes > r.numBytes) {
					keep, lose = other, r
				}
				for _, p := range []string{lose.blockPath(), lose.metaPath()} {
					if err := os.Remove(p); err == nil {
						fix.Deleted = append(fix.Deleted, p)
					}
				}
				if keep == other {
					r.vol.addUsed(-filesSize(r))
					r.vol, r.dir, r.gs, r.numBytes, r.bytesAcked = other.vol, other.dir, other.gs, other.numBytes, other.numBytes
					fix.Action = FixUpdated
				}
				msgs = append(msgs, fmt.Sprintf("two copies of blk_%d: kept %s, deleted %s", si.ID, keep.blockPath(), lose.blockPath()))
			case !metaExists:
				if err := os.Remove(si.BlockFile); err == nil {
					fix.Deleted = append(fix.Deleted, si.BlockFile)
					msgs = append(msgs, fmt.Sprintf("deleted %s, a copy of blk_%d without a meta file", si.BlockFile, si.ID))
				}
			}
		}
	} else {
		msgs = append(msgs, fmt.Sprintf("block file %s of blk_%d is missing: now %s, stamp %d from the scan", r.blockPath(), r.id, si.BlockFile, si.GenStamp))
		r.vol, r.dir, r.gs = si.Vol, filepath.Dir(si.BlockFile), si.GenStamp
		fix.Action = FixUpdated
	}
	if r.gs != si.GenStamp && !fileExists(r.metaPath()) {
		gs := int64(0)
		if metaExists && filepath.Dir(si.MetaFile) == r.dir {
			gs = si.GenStamp
		}
		msgs = append(msgs, fmt.Sprintf("meta file of blk_%d_%d is missing: stamp now %d", r.id, r.gs, gs))
		r.gs = gs
		fix.Action = FixUpdated
	}
	if n := r2len(r.blockPath()); n >= 0 && n != r.numBytes {
		msgs = append(msgs, fmt.Sprintf("length of blk_%d changed from %d to %d, the block file's: reported corrupt", r.id, r.numBytes, n))
		r.numBytes, r.bytesAcked = n, n
		fix.Action = FixLength
	}
	fix.Replica, fix.Old = r.snapshot(), old
	fix.Message = strings.Join(msgs, "; ")
	return fix, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// r2len is a file's length, -1 if it cannot be read.
func r2len(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}
