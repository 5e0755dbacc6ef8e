package storage

import (
	"math/rand"
	"sync"
)

// VolumeChoosingPolicy picks the volume a new replica goes to
// (dfs.datanode.fsdataset.volume.choosing.policy). It is a pure decision:
// given the bytes each candidate volume has available (in the dataset's
// order) and the bytes the replica needs, it returns the index of the
// chosen volume, or -1 when none has room. The dataset calls it under its
// own lock, one call at a time, and reserves the space afterwards.
type VolumeChoosingPolicy interface {
	Choose(available []int64, need int64) int
}

// RoundRobinPolicy takes the volumes in turn, skipping those without room
// (Hadoop's RoundRobinVolumeChoosingPolicy, the default). The zero value is
// ready to use; it is not safe for concurrent use (the dataset serialises
// its calls).
type RoundRobinPolicy struct {
	next int
}

// Choose implements VolumeChoosingPolicy.
func (p *RoundRobinPolicy) Choose(available []int64, need int64) int {
	n := len(available)
	if n == 0 {
		return -1
	}
	start := p.next % n
	for i := range n {
		j := (start + i) % n
		if available[j] >= need {
			p.next = (j + 1) % n
			return j
		}
	}
	return -1
}

// Defaults of AvailableSpacePolicy (hdfs-default.xml).
const (
	// DefaultBalancedSpaceThreshold is
	// dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold.
	DefaultBalancedSpaceThreshold = 10 << 30
	// DefaultBalancedPreferenceFraction is
	// dfs.datanode.available-space-volume-choosing-policy.balanced-space-preference-fraction.
	DefaultBalancedPreferenceFraction = 0.75
)

// AvailableSpacePolicy (Hadoop's AvailableSpaceVolumeChoosingPolicy) fills
// volumes so that they become balanced: while the available space of the
// candidates differs by no more than Threshold bytes it behaves like round
// robin; otherwise it splits them into the volumes with at least
// min+Threshold available ("high") and the rest ("low") and sends a replica
// to the high set with probability Fraction, weighted by the sizes of the
// sets, round robin within each set. A low set whose best volume cannot
// take the replica is never chosen.
type AvailableSpacePolicy struct {
	Threshold int64   // bytes; DefaultBalancedSpaceThreshold when 0
	Fraction  float64 // in [0, 1]; DefaultBalancedPreferenceFraction when 0

	mu struct {
		sync.Mutex
		rnd                 *rand.Rand
		all, high, low      RoundRobinPolicy
		highIdx, lowIdx     []int
		highAvail, lowAvail []int64
	}
}

// NewAvailableSpacePolicy returns the policy with its random source.
func NewAvailableSpacePolicy(threshold int64, fraction float64, rnd *rand.Rand) *AvailableSpacePolicy {
	p := &AvailableSpacePolicy{Threshold: threshold, Fraction: fraction}
	p.mu.rnd = rnd
	return p
}

// Choose implements VolumeChoosingPolicy.
func (p *AvailableSpacePolicy) Choose(available []int64, need int64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(available) == 0 {
		return -1
	}
	threshold, fraction := p.Threshold, p.Fraction
	if threshold <= 0 {
		threshold = DefaultBalancedSpaceThreshold
	}
	if fraction <= 0 || fraction > 1 {
		fraction = DefaultBalancedPreferenceFraction
	}
	lo, hi := available[0], available[0]
	for _, a := range available {
		lo, hi = min(lo, a), max(hi, a)
	}
	if hi-lo <= threshold {
		return p.mu.all.Choose(available, need)
	}
	p.mu.highIdx, p.mu.lowIdx = p.mu.highIdx[:0], p.mu.lowIdx[:0]
	p.mu.highAvail, p.mu.lowAvail = p.mu.highAvail[:0], p.mu.lowAvail[:0]
	bestLow := int64(-1)
	for i, a := range available {
		if a >= lo+threshold {
			p.mu.highIdx = append(p.mu.highIdx, i)
			p.mu.highAvail = append(p.mu.highAvail, a)
		} else {
			p.mu.lowIdx = append(p.mu.lowIdx, i)
			p.mu.lowAvail = append(p.mu.lowAvail, a)
			bestLow = max(bestLow, a)
		}
	}
	nh, nl := float64(len(p.mu.highIdx)), float64(len(p.mu.lowIdx))
	scaled := nh * fraction / (nh*fraction + nl*(1-fraction))
	rnd := p.mu.rnd
	if rnd == nil {
		rnd = rand.New(rand.NewSource(1))
		p.mu.rnd = rnd
	}
	if bestLow < need || rnd.Float64() < scaled {
		if j := p.mu.high.Choose(p.mu.highAvail, need); j >= 0 {
			return p.mu.highIdx[j]
		}
		return -1
	}
	if j := p.mu.low.Choose(p.mu.lowAvail, need); j >= 0 {
		return p.mu.lowIdx[j]
	}
	return -1
}
