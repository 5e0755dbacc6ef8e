package editlog

import (
	"fmt"
	"strconv"
	"strings"
)

// File name prefixes of segments (DESIGN §4). Part of the on-disk layout.
const (
	inProgressPrefix = "edits_inprogress_"
	finalizedPrefix  = "edits_"
	// EmptySuffix is appended to an in-progress segment that held no record
	// when recovery set it aside.
	EmptySuffix = ".empty"
)

// InProgressName is the file name of the open segment starting at first:
// edits_inprogress_<first:019d>.
func InProgressName(first int64) string {
	return fmt.Sprintf("%s%019d", inProgressPrefix, first)
}

// FinalizedName is the file name of a finalized segment:
// edits_<first:019d>-<last:019d>.
func FinalizedName(first, last int64) string {
	return fmt.Sprintf("%s%019d-%019d", finalizedPrefix, first, last)
}

// ParseSegmentName parses a segment file name. For an in-progress segment
// last is -1. ok is false for any other name (including set-aside segments
// with a suffix such as .empty).
func ParseSegmentName(name string) (first, last int64, inProgress, ok bool) {
	if rest, found := strings.CutPrefix(name, inProgressPrefix); found {
		f, err := parseTxID(rest)
		if err != nil {
			return 0, 0, false, false
		}
		return f, -1, true, true
	}
	rest, found := strings.CutPrefix(name, finalizedPrefix)
	if !found {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false, false
	}
	f, err1 := parseTxID(a)
	l, err2 := parseTxID(b)
	if err1 != nil || err2 != nil || l < f {
		return 0, 0, false, false
	}
	return f, l, false, true
}

func parseTxID(s string) (int64, error) {
	if len(s) == 0 || len(s) > 19 {
		return 0, fmt.Errorf("bad txid %q", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad txid %q", s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("bad txid %q", s)
	}
	return v, nil
}
