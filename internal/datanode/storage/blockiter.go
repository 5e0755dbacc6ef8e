package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// CursorSuffix ends the name of a block iterator's saved position in the
// block pool directory: <vol>/current/<bpid>/<name>.cursor, e.g.
// scanner.cursor for the block scanner. Part of the on-disk format
// (Hadoop 3's).
const CursorSuffix = ".cursor"

// Cursor is a block iterator's position, saved as JSON in its cursor file,
// field for field Hadoop's (FsVolumeImpl's BlockIteratorState), so that a
// Hadoop data directory's scanner resumes where Hadoop's stopped:
//
//	{"lastSavedMs":1700000000000,"iterStartMs":1699990000000,
//	 "curFinalizedDir":"subdir0","curFinalizedSubDir":"subdir3",
//	 "curEntry":"blk_1073742594","atEnd":false}
//
// The times are wall-clock milliseconds since the epoch. The three names are
// the finalized/ subdirectory, its subdirectory and the block file last
// returned (null before the first); atEnd says the pass is over.
type Cursor struct {
	LastSavedMs        int64   `json:"lastSavedMs"`
	IterStartMs        int64   `json:"iterStartMs"`
	CurFinalizedDir    *string `json:"curFinalizedDir"`
	CurFinalizedSubDir *string `json:"curFinalizedSubDir"`
	CurEntry           *string `json:"curEntry"`
	AtEnd              bool    `json:"atEnd"`
}

// Position is the cursor's place as one string ("start" before the first
// block, "end" after the last), for logs.
func (c Cursor) Position() string {
	switch {
	case c.AtEnd:
		return "end"
	case c.CurEntry != nil && c.CurFinalizedDir != nil && c.CurFinalizedSubDir != nil:
		return filepath.Join(*c.CurFinalizedDir, *c.CurFinalizedSubDir, *c.CurEntry)
	case c.CurFinalizedSubDir != nil && c.CurFinalizedDir != nil:
		return filepath.Join(*c.CurFinalizedDir, *c.CurFinalizedSubDir)
	case c.CurFinalizedDir != nil:
		return *c.CurFinalizedDir
	}
	return "start"
}

// BlockIterator walks the block files of one block pool's finalized/ tree
// on one volume in Hadoop's order: the subdirectories by name, then theirs,
// then the block files of each by name; it survives restarts through its
// cursor file. It reads the directories, not the replica map: the block ids
// it returns are looked up by the caller. Not safe for concurrent use.
type BlockIterator struct {
	bp   *BlockPool
	vol  *Volume
	name string
	cur  Cursor
	prev Cursor // before the last Next, for Back
	// entries caches the block file names of the current subdirectory.
	entries []string
	listed  bool
}

// NewBlockIterator returns an iterator at the start of a pass begun at now.
func (bp *BlockPool) NewBlockIterator(v *Volume, name string, now time.Time) *BlockIterator {
	it := &BlockIterator{bp: bp, vol: v, name: name}
	it.Rewind(now)
	return it
}

// LoadBlockIterator returns the iterator saved in the cursor file name on v
// (an error wrapping fs.ErrNotExist when there is none).
func (bp *BlockPool) LoadBlockIterator(v *Volume, name string) (*BlockIterator, error) {
	it := &BlockIterator{bp: bp, vol: v, name: name}
	data, err := hstorage.ReadFile(vfs.Default, it.path())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &it.cur); err != nil {
		return nil, fmt.Errorf("datanode/storage: cursor %s: %w", it.path(), err)
	}
	return it, nil
}

func (it *BlockIterator) path() string {
	return filepath.Join(it.bp.layout(it.vol).root, it.name+CursorSuffix)
}

// Volume is the volume the iterator walks.
func (it *BlockIterator) Volume() *Volume { return it.vol }

// Pool is the block pool the iterator walks.
func (it *BlockIterator) Pool() *BlockPool { return it.bp }

// Cursor returns the iterator's position.
func (it *BlockIterator) Cursor() Cursor { return it.cur }

// AtEnd reports whether the pass is over.
func (it *BlockIterator) AtEnd() bool { return it.cur.AtEnd }

// IterStart is when the current pass began.
func (it *BlockIterator) IterStart() time.Time { return time.UnixMilli(it.cur.IterStartMs) }

// LastSaved is when the cursor was last saved (or created).
func (it *BlockIterator) LastSaved() time.Time { return time.UnixMilli(it.cur.LastSavedMs) }

// Rewind starts a new pass at now.
func (it *BlockIterator) Rewind(now time.Time) {
	ms := now.UnixMilli()
	it.cur = Cursor{LastSavedMs: ms, IterStartMs: ms}
	it.prev = it.cur
	it.entries, it.listed = nil, false
}

// Save writes the cursor file atomically (write tmp, fsync, rename, fsync
// the directory), recording now as the save time.
func (it *BlockIterator) Save(now time.Time) error {
	it.cur.LastSavedMs = now.UnixMilli()
	data, err := json.Marshal(it.cur)
	if err != nil {
		return fmt.Errorf("datanode/storage: cursor: %w", err)
	}
	return hstorage.AtomicWriteFile(vfs.Default, it.path(), data)
}

// Back returns the iterator to where it was before the last Next: the
// block it returned was not dealt with (the scanner stopped in the middle
// of verifying it) and is returned again by the next Next.
func (it *BlockIterator) Back() {
	it.cur = it.prev
	it.entries, it.listed = nil, false
}

// Next returns the id of the next block file, or ok false at the end of the
// pass (AtEnd is then true). An error listing a directory also ends the
// pass, as Hadoop's iterator does.
func (it *BlockIterator) Next() (id int64, ok bool, err error) {
	if it.cur.AtEnd {
		return 0, false, nil
	}
	it.prev = it.cur
	fin := it.bp.layout(it.vol).finalized()
	// Each round moves to the next subdirectory, so the loop ends after at
	// most every subdirectory of the tree.
	for {
		if it.cur.CurFinalizedSubDir != nil {
			if !it.listed {
				names, err := listSorted(filepath.Join(fin, *it.cur.CurFinalizedDir, *it.cur.CurFinalizedSubDir), isBlockFileName)
				if err != nil {
					it.cur.AtEnd = true
					return 0, false, err
				}
				it.entries, it.listed = names, true
			}
			if next := nextSorted(it.entries, it.cur.CurEntry); next != "" {
				it.cur.CurEntry = &next
				id, _ := ParseBlockFileName(next)
				return id, true, nil
			}
			it.cur.CurEntry = nil
		}
		it.entries, it.listed = nil, false
		if it.cur.CurFinalizedDir != nil {
			subs, err := listSorted(filepath.Join(fin, *it.cur.CurFinalizedDir), isSubdirName)
			if err != nil {
				it.cur.AtEnd = true
				return 0, false, err
			}
			if next := nextSorted(subs, it.cur.CurFinalizedSubDir); next != "" {
				it.cur.CurFinalizedSubDir = &next
				continue
			}
			it.cur.CurFinalizedSubDir = nil
		}
		dirs, err := listSorted(fin, isSubdirName)
		if err != nil {
			it.cur.AtEnd = true
			return 0, false, err
		}
		next := nextSorted(dirs, it.cur.CurFinalizedDir)
		if next == "" {
			it.cur.CurFinalizedDir = nil
			it.cur.AtEnd = true
			return 0, false, nil
		}
		it.cur.CurFinalizedDir = &next
	}
}

func isBlockFileName(name string, dir bool) bool {
	_, ok := ParseBlockFileName(name)
	return ok && !dir
}

func isSubdirName(name string, dir bool) bool {
	return dir && strings.HasPrefix(name, subdirPrefix)
}

// listSorted lists the names in dir that keep accepts, sorted as strings.
// A directory that is gone lists as empty (a race with deletion).
func listSorted(dir string, keep func(name string, dir bool) bool) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("datanode/storage: list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if keep(e.Name(), e.IsDir()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// nextSorted returns the first name after prev in sorted names (the first
// name when prev is nil), or "" when there is none.
func nextSorted(names []string, prev *string) string {
	i := 0
	if prev != nil {
		i = sort.SearchStrings(names, *prev)
		if i < len(names) && names[i] == *prev {
			i++
		}
	}
	if i >= len(names) {
		return ""
	}
	return names[i]
}
