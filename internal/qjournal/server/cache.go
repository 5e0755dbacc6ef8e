package server

import "fmt"

// editCache holds the most recent journal() batches, contiguous in txid,
// up to capacity bytes of records (dfs.journalnode.edit-cache-size.bytes),
// so that getJournaledEdits answers a tailing standby from memory. It is
// guarded by its Journal's mutex.
type editCache struct {
	capacity int64
	size     int64
	batches  []cachedBatch // oldest first, txids contiguous
}

type cachedBatch struct {
	first, last int64
	data        []byte  // the records, exactly as journal() received them
	offs        []int32 // offs[i] is where txid first+i starts in data
}

// cacheMiss says the cache no longer (or not yet) holds since.
type cacheMiss struct {
	since, oldest int64
}

func (e *cacheMiss) Error() string {
	if e.oldest == 0 {
		return fmt.Sprintf("The edits cache is empty: cannot serve transactions from %d", e.since)
	}
	return fmt.Sprintf("Cache miss: requested txid %d is older than the oldest cached txid %d (%d transactions too old)",
		e.since, e.oldest, e.oldest-e.since)
}

func newEditCache(capacity int64) *editCache { return &editCache{capacity: capacity} }

// reset empties the cache (a new writer, a recovered segment).
func (c *editCache) reset() {
	c.batches, c.size = nil, 0
}

// store adds a batch the journal made durable. A batch that does not
// follow the cached ones starts the cache afresh; the oldest batches go
// until the cache fits its capacity. data is copied.
func (c *editCache) store(data []byte, first, last int64, offs []int32) {
	if n := len(c.batches); n > 0 && c.batches[n-1].last+1 != first {
		c.reset()
	}
	if int64(len(data)) > c.capacity {
		c.reset()
		return
	}
	c.batches = append(c.batches, cachedBatch{first: first, last: last, data: append([]byte(nil), data...), offs: offs})
	c.size += int64(len(data))
	for c.size > c.capacity {
		c.size -= int64(len(c.batches[0].data))
		c.batches[0] = cachedBatch{}
		c.batches = c.batches[1:]
	}
}

// oldest is the first cached txid (0 when empty).
func (c *editCache) oldest() int64 {
	if len(c.batches) == 0 {
		return 0
	}
	return c.batches[0].first
}

// retrieve returns the records of up to max transactions from since on,
// and how many; since must lie in the cache (a *cacheMiss otherwise).
func (c *editCache) retrieve(since int64, max int) ([]byte, int, error) {
	if len(c.batches) == 0 || since < c.batches[0].first || since > c.batches[len(c.batches)-1].last {
		return nil, 0, &cacheMiss{since: since, oldest: c.oldest()}
	}
	var out []byte
	n := 0
	for _, b := range c.batches {
		if b.last < since || n >= max {
			continue
		}
		from := max64(since, b.first)
		to := min(b.last, from+int64(max-n)-1)
		start := int(b.offs[from-b.first])
		end := len(b.data)
		if to < b.last {
			end = int(b.offs[to+1-b.first])
		}
		out = append(out, b.data[start:end]...)
		n += int(to - from + 1)
		since = to + 1
	}
	return out, n, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
