package editlog

import "sort"

// Manifest chooses, from the finalized segments of a NameNode's journals,
// what it offers a checkpointer that has every transaction before since
// (NamenodeProtocol's getEditLogManifest): the segments that hold
// transactions >= since, one per txid range (the longest copy when journals
// differ), forming one run without gaps that ends at the newest finalized
// transaction. Where the journals have a gap, the run starts after it: what
// lies before a gap cannot be rolled forward to the end anyway, and the
// checkpointer then downloads an image instead. In-progress segments are
// never offered. The result is sorted by first txid.
func Manifest(segments []SegmentInfo, since int64) []SegmentInfo {
	var fin []SegmentInfo
	for _, s := range segments {
		if !s.InProgress && s.Last >= s.First && s.Last >= since {
			fin = append(fin, s)
		}
	}
	// By first txid, the longest copy first.
	sort.SliceStable(fin, func(a, b int) bool {
		if fin[a].First != fin[b].First {
			return fin[a].First < fin[b].First
		}
		return fin[a].Last > fin[b].Last
	})
	var run []SegmentInfo
	next := int64(-1) // the txid the run needs next; -1 before the first segment
	for i := 0; i < len(fin); i++ {
		s := fin[i]
		switch {
		case next < 0 || s.First > next:
			// The first segment, or one after a gap: a new run.
			run = run[:0]
		case s.Last < next:
			continue // covered by the run already
		case s.First < next:
			// Overlaps the end of the run: only a copy starting exactly
			// at next may extend it; look for one.
			continue
		}
		// Among the segments starting here, take the longest (first in order).
		run = append(run, s)
		next = s.Last + 1
		for i+1 < len(fin) && fin[i+1].First == s.First {
			i++
		}
	}
	return append([]SegmentInfo(nil), run...)
}
