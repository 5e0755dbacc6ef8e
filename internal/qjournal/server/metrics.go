package server

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// journalMetrics are a journal's counters (Hadoop's JournalMetrics), read
// by /jmx. Counters are atomic; the sync-time samples have their own lock.
type journalMetrics struct {
	batchesWritten, batchesWrittenWhileLagging atomic.Int64
	txnsWritten, bytesWritten                  atomic.Int64
	txnsServedViaRPC, bytesServedViaRPC        atomic.Int64
	rpcEmptyResponses                          atomic.Int64
	cacheMisses, cacheMissTxns                 atomic.Int64

	syncs syncSamples
}

// syncSamples keeps the latest fsync latencies of journal() with their
// times, for the Syncs60s/300s/3600s quantiles.
type syncSamples struct {
	mu struct {
		sync.Mutex
		at   []time.Time
		us   []int64
		next int
	}
}

// maxSyncSamples bounds the samples kept: the quantiles describe at most
// this many of the latest syncs in each window.
const maxSyncSamples = 8192

func (s *syncSamples) add(at time.Time, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	us := d.Microseconds()
	if len(s.mu.at) < maxSyncSamples {
		s.mu.at = append(s.mu.at, at)
		s.mu.us = append(s.mu.us, us)
		return
	}
	s.mu.at[s.mu.next], s.mu.us[s.mu.next] = at, us
	s.mu.next = (s.mu.next + 1) % maxSyncSamples
}

// window returns how many syncs happened since from and the given
// percentiles of their latency in microseconds.
func (s *syncSamples) window(from time.Time, pcts []float64) (int64, []int64) {
	s.mu.Lock()
	var v []int64
	for i, t := range s.mu.at {
		if !t.Before(from) {
			v = append(v, s.mu.us[i])
		}
	}
	s.mu.Unlock()
	out := make([]int64, len(pcts))
	if len(v) == 0 {
		return 0, out
	}
	sort.Slice(v, func(a, b int) bool { return v[a] < v[b] })
	for i, p := range pcts {
		k := int(p*float64(len(v))+0.5) - 1
		out[i] = v[min(max(k, 0), len(v)-1)]
	}
	return int64(len(v)), out
}
