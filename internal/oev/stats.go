package oev

import (
	"errors"
	"fmt"
	"io"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
)

// hadoopOpcodes are Hadoop's FSEditLogOpCodes in declaration order, the
// rows of the stats table (facts of Hadoop's format: names and numbers).
var hadoopOpcodes = []struct {
	name string
	code int
}{
	{"OP_ADD", 0}, {"OP_RENAME_OLD", 1}, {"OP_DELETE", 2}, {"OP_MKDIR", 3}, {"OP_SET_REPLICATION", 4},
	{"OP_DATANODE_ADD", 5}, {"OP_DATANODE_REMOVE", 6}, {"OP_SET_PERMISSIONS", 7}, {"OP_SET_OWNER", 8},
	{"OP_CLOSE", 9}, {"OP_SET_GENSTAMP_V1", 10}, {"OP_SET_NS_QUOTA", 11}, {"OP_CLEAR_NS_QUOTA", 12},
	{"OP_TIMES", 13}, {"OP_SET_QUOTA", 14}, {"OP_RENAME", 15}, {"OP_CONCAT_DELETE", 16}, {"OP_SYMLINK", 17},
	{"OP_GET_DELEGATION_TOKEN", 18}, {"OP_RENEW_DELEGATION_TOKEN", 19}, {"OP_CANCEL_DELEGATION_TOKEN", 20},
	{"OP_UPDATE_MASTER_KEY", 21}, {"OP_REASSIGN_LEASE", 22}, {"OP_END_LOG_SEGMENT", 23},
	{"OP_START_LOG_SEGMENT", 24}, {"OP_UPDATE_BLOCKS", 25}, {"OP_CREATE_SNAPSHOT", 26},
	{"OP_DELETE_SNAPSHOT", 27}, {"OP_RENAME_SNAPSHOT", 28}, {"OP_ALLOW_SNAPSHOT", 29},
	{"OP_DISALLOW_SNAPSHOT", 30}, {"OP_SET_GENSTAMP_V2", 31}, {"OP_ALLOCATE_BLOCK_ID", 32},
	{"OP_ADD_BLOCK", 33}, {"OP_ADD_CACHE_DIRECTIVE", 34}, {"OP_REMOVE_CACHE_DIRECTIVE", 35},
	{"OP_ADD_CACHE_POOL", 36}, {"OP_MODIFY_CACHE_POOL", 37}, {"OP_REMOVE_CACHE_POOL", 38},
	{"OP_MODIFY_CACHE_DIRECTIVE", 39}, {"OP_SET_ACL", 40}, {"OP_ROLLING_UPGRADE_START", 41},
	{"OP_ROLLING_UPGRADE_FINALIZE", 42}, {"OP_SET_XATTR", 43}, {"OP_REMOVE_XATTR", 44},
	{"OP_SET_STORAGE_POLICY", 45}, {"OP_TRUNCATE", 46}, {"OP_APPEND", 47},
	{"OP_SET_QUOTA_BY_STORAGETYPE", 48}, {"OP_ADD_ERASURE_CODING_POLICY", 49},
	{"OP_ENABLE_ERASURE_CODING_POLICY", 50}, {"OP_DISABLE_ERASURE_CODING_POLICY", 51},
	{"OP_REMOVE_ERASURE_CODING_POLICY", 52}, {"OP_INVALID", -1},
}

// Stats counts a segment's records per opcode.
type Stats struct {
	Version int32
	Counts  map[int]int64 // by opcode number
}

// SegmentStats reads one segment from r and counts its records; a torn
// last record ends the count and is returned with it, as SegmentToXML
// does.
func SegmentStats(r io.Reader, name string) (Stats, error) {
	version, err := editlog.ReadSegmentHeader(r, name)
	if err != nil {
		return Stats{}, err
	}
	s := Stats{Version: version, Counts: map[int]int64{}}
	d := editlog.NewDecoder(r, name, editlog.SegmentHeaderSize, version)
	for {
		_, o, err := d.Next()
		if err == io.EOF {
			return s, nil
		}
		var te *editlog.TornRecordError
		if errors.As(err, &te) {
			return s, err
		}
		if err != nil {
			return s, err
		}
		s.Counts[int(o.Code())]++
	}
}

// RecordStats counts records (read from XML).
func RecordStats(version int32, recs []Record) Stats {
	s := Stats{Version: version, Counts: map[int]int64{}}
	for _, r := range recs {
		s.Counts[int(r.Op.Code())]++
	}
	return s
}

// Write prints the table as Hadoop's stats processor does: the version,
// then one row per Hadoop opcode with its number and count.
func (s Stats) Write(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "    %-30.30s      : %d\n", "VERSION", s.Version); err != nil {
		return err
	}
	for _, c := range hadoopOpcodes {
		if _, err := fmt.Fprintf(w, "    %-30.30s (%3d): %d\n", c.name, c.code, s.Counts[c.code]); err != nil {
			return err
		}
	}
	return nil
}
