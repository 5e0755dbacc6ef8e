package editlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// applyError carries an error returned by the caller's function through the
// reader so that it is returned unchanged rather than treated as a bad copy.
type applyError struct{ err error }

func (e applyError) Error() string { return e.err.Error() }

// errReachedTo stops a read at ReadOptions.To.
var errReachedTo = errors.New("editlog: read reached its last txid")

type candidate struct {
	j Journal
	s SegmentInfo // s.Last is filled in once an in-progress segment was read
}

// ReadOptions choose what ReadOps reads.
type ReadOptions struct {
	// From is the last txid the reader has: records above it are read.
	From int64
	// To, when positive, is the last txid to read; reading stops there even
	// if the journals hold more.
	To int64
	// InProgress includes the segments being written. A standby tailing a
	// shared log another NameNode writes leaves them out by default
	// (dfs.ha.tail-edits.in-progress false): their records may not be
	// durable yet.
	InProgress bool
}

// ReadOps replays the edit log held by journals: it calls fn for every record
// with a txid above opts.From (and up to opts.To), in txid order, including
// the StartLogSegment and EndLogSegment records (which change nothing in the
// namespace). A reader that follows a growing log calls it again with the
// last txid it got as From: the cursor is that txid, and a call reads only
// the segments that hold later records. For each
// txid range it reads the longest copy among the journals and falls back to
// another copy when one is damaged; a range no journal holds is a *GapError.
// In-progress segments are read up to their last whole record (a torn tail
// there is where the writer stopped). It returns the last txid passed to fn,
// or fromTxID if there was none. An error from fn stops the replay and is
// returned as is. A journal that cannot list its segments is skipped (its
// error is returned only when no journal could be listed).
func ReadOps(ctx context.Context, journals []Journal, opts ReadOptions, fn func(txid int64, o op.Op) error) (lastTxID int64, err error) {
	fromTxID := opts.From
	var cands []*candidate
	var listErr error
	listed := 0
	for _, j := range journals {
		segs, err := j.Segments(ctx)
		if err != nil {
			listErr = err
			continue
		}
		listed++
		for _, s := range segs {
			if s.InProgress && !opts.InProgress {
				continue
			}
			cands = append(cands, &candidate{j: j, s: s})
		}
	}
	if listed == 0 && listErr != nil {
		return fromTxID, listErr
	}
	if opts.To > 0 {
		inner := fn
		fn = func(txid int64, o op.Op) error {
			if txid > opts.To {
				return errReachedTo
			}
			return inner(txid, o)
		}
	}
	next := fromTxID + 1
	for {
		if err := ctx.Err(); err != nil {
			return next - 1, err
		}
		if opts.To > 0 && next > opts.To {
			return next - 1, nil
		}
		var cs []*candidate
		gapEnd := int64(-1)
		for _, c := range cands {
			if c.s.Last >= 0 && c.s.Last < next {
				continue
			}
			if c.s.First <= next {
				cs = append(cs, c)
			} else if gapEnd < 0 || c.s.First-1 < gapEnd {
				gapEnd = c.s.First - 1
			}
		}
		if len(cs) == 0 {
			if gapEnd >= 0 {
				return next - 1, &GapError{From: next, To: gapEnd}
			}
			return next - 1, nil
		}
		// Longest known copy first; in-progress copies (end unknown) after.
		sort.SliceStable(cs, func(a, b int) bool {
			la, lb := cs[a].s.Last, cs[b].s.Last
			if (la < 0) != (lb < 0) {
				return la >= 0
			}
			return la > lb
		})
		var lastErr error
		ok := false
		for _, c := range cs {
			if c.s.Last >= 0 && c.s.Last < next {
				continue
			}
			n, err := readSegment(ctx, c, next, fn)
			next = n
			var ae applyError
			if errors.As(err, &ae) {
				if ae.err == errReachedTo {
					return next - 1, nil
				}
				return next - 1, ae.err
			}
			if err == nil {
				ok = true
				break
			}
			lastErr = err
		}
		if !ok {
			if lastErr == nil {
				continue // every candidate was used up by progress elsewhere
			}
			return next - 1, lastErr
		}
	}
}

// SeekingJournal is a Journal that can open a segment at a txid inside it:
// its reader starts there. A reader following a growing log then does not
// read again what it has (the quorum journal reads the segment being
// written from the JournalNodes' caches from a txid on).
type SeekingJournal interface {
	OpenForReadFrom(ctx context.Context, seg SegmentInfo, from int64) (Reader, error)
}

// readSegment passes the records of c from txid next on to fn and returns the
// txid after the last one passed.
func readSegment(ctx context.Context, c *candidate, next int64, fn func(int64, op.Op) error) (int64, error) {
	start := c.s.First
	var r Reader
	var err error
	if sj, ok := c.j.(SeekingJournal); ok && next > c.s.First {
		start = next
		r, err = sj.OpenForReadFrom(ctx, c.s, next)
	} else {
		r, err = c.j.OpenForRead(ctx, c.s)
	}
	if err != nil {
		var torn *TornRecordError
		if errors.As(err, &torn) && c.s.InProgress {
			// Created, header not yet (fully) written: no records.
			c.s.Last = c.s.First - 1
			return next, nil
		}
		return next, err
	}
	defer r.Close()
	next1 := r.Next
	if _, local := r.(*fileReader); local {
		ra := newReadAhead(r)
		defer ra.close()
		next1 = ra.Next
	}
	prev := start - 1
	for {
		txid, o, err := next1()
		if err == io.EOF {
			break
		}
		var torn *TornRecordError
		if errors.As(err, &torn) && c.s.InProgress {
			break
		}
		if err != nil {
			return next, err
		}
		if txid != prev+1 {
			return next, &CorruptionError{File: c.j.String() + "/" + c.s.Name,
				Reason: fmt.Sprintf("txid %d follows %d", txid, prev)}
		}
		prev = txid
		if txid < next {
			continue
		}
		if err := fn(txid, o); err != nil {
			return next, applyError{err}
		}
		next = txid + 1
	}
	if c.s.InProgress {
		c.s.Last = prev
		if prev < c.s.First {
			c.s.Last = c.s.First - 1 // no record: never a candidate again
		}
		return next, nil
	}
	if prev != c.s.Last {
		return next, &CorruptionError{File: c.j.String() + "/" + c.s.Name,
			Reason: fmt.Sprintf("segment ends at txid %d, its name says %d", prev, c.s.Last)}
	}
	return next, nil
}
