package storage

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the directories and files of a DataNode volume (HDFS 3.x's). Part
// of the on-disk format.
const (
	CurrentDir   = "current"
	FinalizedDir = "finalized"
	RBWDir       = "rbw"
	TmpDir       = "tmp"
	BlockPrefix  = "blk_"
	MetaSuffix   = ".meta"
	subdirPrefix = "subdir"
)

// BlockFileName is the name of a block's data file: blk_<id> (the id in
// signed decimal, as Java prints a long).
func BlockFileName(id int64) string { return BlockPrefix + strconv.FormatInt(id, 10) }

// MetaFileName is the name of a block's meta file: blk_<id>_<genstamp>.meta.
func MetaFileName(id, genStamp int64) string {
	return BlockPrefix + strconv.FormatInt(id, 10) + "_" + strconv.FormatInt(genStamp, 10) + MetaSuffix
}

// ParseBlockFileName parses blk_<id>. Only the canonical spelling is
// accepted (no leading zeros or plus sign), so that a name and a block id
// map one to one.
func ParseBlockFileName(name string) (id int64, ok bool) {
	s, found := strings.CutPrefix(name, BlockPrefix)
	if !found || strings.ContainsAny(s, "_.") {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && BlockFileName(id) == name
}

// ParseMetaFileName parses blk_<id>_<genstamp>.meta, canonical spelling only.
func ParseMetaFileName(name string) (id, genStamp int64, ok bool) {
	s, found := strings.CutPrefix(name, BlockPrefix)
	if !found {
		return 0, 0, false
	}
	s, found = strings.CutSuffix(s, MetaSuffix)
	if !found {
		return 0, 0, false
	}
	i := strings.LastIndexByte(s, '_')
	if i <= 0 {
		return 0, 0, false
	}
	id, err1 := strconv.ParseInt(s[:i], 10, 64)
	genStamp, err2 := strconv.ParseInt(s[i+1:], 10, 64)
	if err1 != nil || err2 != nil || MetaFileName(id, genStamp) != name {
		return 0, 0, false
	}
	return id, genStamp, true
}

// BlockSubdirs returns the two subdirectory indexes of a finalized block:
// a = (id>>16)&0x1F and b = (id>>8)&0x1F (Hadoop's DatanodeUtil.idToBlockDir,
// layout version -57).
func BlockSubdirs(id int64) (a, b int) {
	return int((id >> 16) & 0x1f), int((id >> 8) & 0x1f)
}

// IDToBlockDir returns finalized/subdir<a>/subdir<b> under the given
// finalized directory.
func IDToBlockDir(finalized string, id int64) string {
	a, b := BlockSubdirs(id)
	return filepath.Join(finalized, subdirPrefix+strconv.Itoa(a), subdirPrefix+strconv.Itoa(b))
}

// poolLayout is the directory tree of one block pool on one volume.
type poolLayout struct {
	root string // <vol>/current/<bpid>
}

func newPoolLayout(volDir, poolID string) poolLayout {
	return poolLayout{root: filepath.Join(volDir, CurrentDir, poolID)}
}

func (l poolLayout) current() string   { return filepath.Join(l.root, CurrentDir) }
func (l poolLayout) finalized() string { return filepath.Join(l.root, CurrentDir, FinalizedDir) }
func (l poolLayout) rbw() string       { return filepath.Join(l.root, CurrentDir, RBWDir) }
func (l poolLayout) tmp() string       { return filepath.Join(l.root, TmpDir) }
func (l poolLayout) blockDir(id int64) string {
	return IDToBlockDir(l.finalized(), id)
}

func (l poolLayout) String() string { return fmt.Sprint(l.root) }
