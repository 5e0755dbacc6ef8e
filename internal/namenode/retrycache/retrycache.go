// Package retrycache answers retried non-idempotent calls from memory, as Hadoop's
// NameNode RetryCache does. A client that lost the reply to, say, create or delete
// resends the call with the same (clientId, callId); the NameNode must neither fail
// it ("already exists") nor apply it twice. The first call records its outcome; a
// retry that arrives while the first is still running waits for it; a retry after
// it gets the recorded outcome.
//
// Entries expire after the configured time (dfs.namenode.retrycache.expirytime.millis,
// default 10 minutes), measured on an injected clock. The cache is bounded: when
// full, the oldest completed entries go first.
//
// Safe for concurrent use.
//
//	e, retry := c.Begin(clientID, callID)
//	if retry { return e.Result() }   // answer as the first call did
//	out, err := apply()
//	c.End(e, encode(out), err)
//
// # Layout
//
// A busy NameNode keeps up to a million completed calls, so their records
// hold no pointers: the garbage collector, which marks the whole heap
// every cycle, skips them. A completed call is a fixed-size record in a
// FIFO of chunks (completion order is expiry order, as every entry lives
// for the same time), and its outcome is bytes (the caller encodes it) in
// its chunk's arena; the index from (clientId, callId) to a record's
// sequence number is a map of pointer-free keys and values. Only what is
// rare holds pointers: calls still in progress (a map of Entry, which a
// retry waits on) and failed calls' errors (a map by sequence number).
// A chunk goes once all of its records have gone.
//
//	chunks: [seq base .. base+chunkSize) [..] [..]   records + arena each
//	index:  key → seq      (a seq below head is gone; never looked up)
//	errs:   seq → error    (failed calls only)
//	pending: key → *Entry  (calls in progress)
//
// A client id is Hadoop's 16-byte UUID; ids up to 16 bytes are kept. A
// longer one cannot be a key (see IDLen): the caller refuses the call, as
// Hadoop does, and Put ignores it.
package retrycache

import (
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// IDLen is the longest client id the cache keeps: Hadoop's client ids are
// 16-byte UUIDs.
const IDLen = 16

// key identifies a call. The id's length is part of it, so "ab" and
// "ab\x00" are different clients.
type key struct {
	id   [IDLen]byte
	n    uint8
	call int32
}

func makeKey(clientID []byte, callID int32) (key, bool) {
	if len(clientID) > IDLen {
		return key{}, false
	}
	k := key{n: uint8(len(clientID)), call: callID}
	copy(k.id[:], clientID)
	return k, true
}

// Entry is a call in progress or, for a retry, the record of one.
type Entry struct {
	k       key
	cached  bool          // false: an id too long to be kept; End records nothing
	done    chan struct{} // closed when the outcome is set
	outcome []byte
	err     error
}

// Result returns the recorded outcome. It waits for the first call to finish.
func (e *Entry) Result() ([]byte, error) {
	<-e.done
	return e.outcome, e.err
}

// record is a completed call. No pointers: see Layout.
type record struct {
	k       key
	failed  bool // its error is in Cache.mu.errs
	expires int64
	off, n  uint32 // its outcome in the chunk's arena
}

// chunkSize is how many records a chunk holds.
const chunkSize = 1024

type chunk struct {
	recs  []record
	arena []byte
}

// closed is the done channel of retries of completed calls.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Cache is a retry cache.
type Cache struct {
	clock   clock.Clock
	expiry  time.Duration
	maxSize int

	mu struct {
		sync.Mutex
		chunks  []*chunk
		base    uint64 // seq of chunks[0].recs[0]
		head    uint64 // seq of the oldest live record
		next    uint64 // seq of the next record
		index   map[key]uint64
		errs    map[uint64]error
		pending map[key]*Entry
	}
}

// New returns a cache keeping outcomes for expiry and at most maxSize
// completed calls (maxSize <= 0: no bound but expiry).
func New(c clock.Clock, expiry time.Duration, maxSize int) *Cache {
	rc := &Cache{clock: c, expiry: expiry, maxSize: maxSize}
	rc.mu.index = make(map[key]uint64)
	rc.mu.errs = make(map[uint64]error)
	rc.mu.pending = make(map[key]*Entry)
	return rc
}

// Begin looks up (clientID, callID). If the call was seen before, it returns that
// entry and retry=true; the caller answers with entry.Result(). Otherwise it
// records a new in-progress entry, returns retry=false, and the caller must call
// End with the outcome. An id longer than IDLen is never found nor kept.
func (c *Cache) Begin(clientID []byte, callID int32) (e *Entry, retry bool) {
	k, ok := makeKey(clientID, callID)
	if !ok {
		return &Entry{done: make(chan struct{})}, false
	}
	now := c.clock.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	if old, ok := c.mu.pending[k]; ok {
		return old, true
	}
	if seq, ok := c.mu.index[k]; ok {
		r, ch := c.recordLocked(seq)
		return &Entry{k: k, done: closed, outcome: ch.arena[r.off : r.off+r.n : r.off+r.n], err: c.mu.errs[seq]}, true
	}
	e = &Entry{k: k, cached: true, done: make(chan struct{})}
	c.mu.pending[k] = e
	return e, false
}

// End records the outcome of a call begun with Begin and wakes any waiting
// retry. A call that failed is recorded too: Hadoop answers the retry with the
// same error. The cache keeps its own copy of outcome.
func (c *Cache) End(e *Entry, outcome []byte, err error) {
	now := c.clock.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.cached {
		delete(c.mu.pending, e.k)
		c.addLocked(e.k, outcome, err, now)
	}
	e.outcome, e.err = outcome, err
	close(e.done)
}

// Put records a call known to be completed with outcome (rebuilt from the
// edit log by a standby or at start-up). An entry already there for the
// same call is kept, and so is nothing for an id longer than IDLen.
func (c *Cache) Put(clientID []byte, callID int32, outcome []byte) {
	k, ok := makeKey(clientID, callID)
	if !ok {
		return
	}
	now := c.clock.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	if _, ok := c.mu.pending[k]; ok {
		return
	}
	if _, ok := c.mu.index[k]; ok {
		return
	}
	c.addLocked(k, outcome, nil, now)
}

// Len returns the number of entries, in progress or completed.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.mu.next-c.mu.head) + len(c.mu.pending)
}

func (c *Cache) recordLocked(seq uint64) (*record, *chunk) {
	i := seq - c.mu.base
	ch := c.mu.chunks[i/chunkSize]
	return &ch.recs[i%chunkSize], ch
}

// addLocked appends a completed call's record, then drops the oldest while
// there are more than maxSize.
func (c *Cache) addLocked(k key, outcome []byte, err error, now int64) {
	seq := c.mu.next
	if seq-c.mu.base == uint64(len(c.mu.chunks))*chunkSize {
		c.mu.chunks = append(c.mu.chunks, &chunk{recs: make([]record, 0, chunkSize)})
	}
	ch := c.mu.chunks[len(c.mu.chunks)-1]
	r := record{k: k, failed: err != nil, expires: now + int64(c.expiry), off: uint32(len(ch.arena)), n: uint32(len(outcome))}
	ch.arena = append(ch.arena, outcome...)
	ch.recs = append(ch.recs, r)
	c.mu.next++
	c.mu.index[k] = seq
	if err != nil {
		c.mu.errs[seq] = err
	}
	for c.maxSize > 0 && c.mu.next-c.mu.head > uint64(c.maxSize) {
		c.dropOldestLocked()
	}
}

// expireLocked drops the records whose time has come, oldest first.
func (c *Cache) expireLocked(now int64) {
	for c.mu.head < c.mu.next {
		if r, _ := c.recordLocked(c.mu.head); now < r.expires {
			return
		}
		c.dropOldestLocked()
	}
}

func (c *Cache) dropOldestLocked() {
	seq := c.mu.head
	r, _ := c.recordLocked(seq)
	if s, ok := c.mu.index[r.k]; ok && s == seq {
		delete(c.mu.index, r.k)
	}
	if r.failed {
		delete(c.mu.errs, seq)
	}
	c.mu.head++
	if c.mu.head-c.mu.base == chunkSize {
		c.mu.chunks[0] = nil
		c.mu.chunks = c.mu.chunks[1:]
		c.mu.base += chunkSize
	}
}
