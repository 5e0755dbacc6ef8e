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
//	e, done := c.Begin(clientID, callID)
//	if done { return e.Result() }   // a retry: answer as before
//	resp, err := apply()
//	c.End(e, resp, err)
package retrycache

import (
	"container/list"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

type key struct {
	client string
	call   int32
}

// Entry is the record of one call.
type Entry struct {
	k       key
	done    chan struct{} // closed when End is called
	resp    any
	err     error
	expires time.Time
	elem    *list.Element // in Cache.mu.order once completed
}

// Result returns the recorded outcome. It waits for the first call to finish.
func (e *Entry) Result() (any, error) {
	<-e.done
	return e.resp, e.err
}

// Cache is a retry cache.
type Cache struct {
	clock   clock.Clock
	expiry  time.Duration
	maxSize int

	mu struct {
		sync.Mutex
		entries map[key]*Entry
		order   *list.List // completed entries, oldest first
	}
}

// New returns a cache keeping outcomes for expiry and at most maxSize entries.
func New(c clock.Clock, expiry time.Duration, maxSize int) *Cache {
	rc := &Cache{clock: c, expiry: expiry, maxSize: maxSize}
	rc.mu.entries = make(map[key]*Entry)
	rc.mu.order = list.New()
	return rc
}

// Begin looks up (clientID, callID). If the call was seen before, it returns that
// entry and retry=true; the caller answers with entry.Result(). Otherwise it
// records a new in-progress entry, returns retry=false, and the caller must call
// End with the outcome.
func (c *Cache) Begin(clientID []byte, callID int32) (e *Entry, retry bool) {
	k := key{client: string(clientID), call: callID}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	if old, ok := c.mu.entries[k]; ok {
		return old, true
	}
	e = &Entry{k: k, done: make(chan struct{})}
	c.mu.entries[k] = e
	return e, false
}

// End records the outcome of a call begun with Begin and wakes any waiting retry.
// A call that failed is recorded too: Hadoop answers the retry with the same error.
func (c *Cache) End(e *Entry, resp any, err error) {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e.resp, e.err = resp, err
	e.expires = now.Add(c.expiry)
	e.elem = c.mu.order.PushBack(e)
	close(e.done)
	for c.maxSize > 0 && c.mu.order.Len() > c.maxSize {
		c.removeLocked(c.mu.order.Front().Value.(*Entry))
	}
}

// Put records a call known to be completed with outcome resp (rebuilt from
// the edit log by a standby or at start-up). An entry already there for the
// same call is kept.
func (c *Cache) Put(clientID []byte, callID int32, resp any) {
	k := key{client: string(clientID), call: callID}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.entries[k]; ok {
		return
	}
	e := &Entry{k: k, done: make(chan struct{}), resp: resp, expires: now.Add(c.expiry)}
	close(e.done)
	c.mu.entries[k] = e
	e.elem = c.mu.order.PushBack(e)
	for c.maxSize > 0 && c.mu.order.Len() > c.maxSize {
		c.removeLocked(c.mu.order.Front().Value.(*Entry))
	}
}

// Len returns the number of entries, in progress or completed.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.entries)
}

func (c *Cache) expireLocked(now time.Time) {
	for f := c.mu.order.Front(); f != nil; f = c.mu.order.Front() {
		e := f.Value.(*Entry)
		if now.Before(e.expires) {
			return
		}
		c.removeLocked(e)
	}
}

func (c *Cache) removeLocked(e *Entry) {
	c.mu.order.Remove(e.elem)
	if c.mu.entries[e.k] == e {
		delete(c.mu.entries, e.k)
	}
}
