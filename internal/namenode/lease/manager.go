package lease

import (
	"container/list"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Defaults of the lease limits.
const (
	// DefaultSoftLimit is Hadoop's HdfsConstants.LEASE_SOFTLIMIT_PERIOD (fixed,
	// not configurable there).
	DefaultSoftLimit = 60 * time.Second
	// DefaultHardLimit is the default of dfs.namenode.lease-hard-limit-sec
	// (1200 s since Hadoop 3.3; one hour before).
	DefaultHardLimit = 1200 * time.Second
)

// NameNodeHolder is the prefix of the holder name the NameNode takes files
// under recovery with (Hadoop's HdfsServerConstants.NAMENODE_LEASE_HOLDER).
const NameNodeHolder = "HDFS_NameNode"

// holderTimeLayout formats the start time in the NameNode's holder name the way
// Hadoop's Time.formatTime does ("yyyy-MM-dd HH:mm:ss,SSS").
const holderTimeLayout = "2006-01-02 15:04:05,000"

// Errors of the lease table.
var (
	// ErrNotHolder: the file is not held by the holder the caller named.
	ErrNotHolder = errors.New("lease: file is not held by that holder")
	// ErrBadLimits: soft or hard limit out of range.
	ErrBadLimits = errors.New("lease: bad lease limits")
)

// Limits are the lease periods.
type Limits struct {
	// Soft: after it another client may take the file over (create, append,
	// recoverLease). Zero means DefaultSoftLimit.
	Soft time.Duration
	// Hard: after it the NameNode recovers the file by itself
	// (dfs.namenode.lease-hard-limit-sec). Zero means DefaultHardLimit.
	Hard time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Soft == 0 {
		l.Soft = DefaultSoftLimit
	}
	if l.Hard == 0 {
		l.Hard = DefaultHardLimit
	}
	return l
}

// Validate rejects negative limits. A hard limit shorter than the soft one is
// allowed (tests shorten it): the soft limit is then taken to equal it, since
// the NameNode recovers the file first anyway.
func (l Limits) Validate() error {
	d := l.withDefaults()
	switch {
	case d.Soft < 0:
		return fmt.Errorf("%w: soft limit %v is negative", ErrBadLimits, l.Soft)
	case d.Hard < 0:
		return fmt.Errorf("%w: dfs.namenode.lease-hard-limit-sec %v is negative", ErrBadLimits, l.Hard)
	}
	return nil
}

// Info describes one lease (for metasave, listOpenFiles and tests).
type Info struct {
	Holder      string
	LastRenewed time.Time
	FileIDs     []uint64 // ascending
}

// Expired is a lease past the hard limit and the files of it to release.
type Expired struct {
	Holder  string
	FileIDs []uint64 // ascending
}

// UC is a file under construction found at start-up (fsimage
// FILES_UNDERCONSTRUCTION section and replayed edits).
type UC struct {
	FileID uint64
	Holder string
}

// lease is one holder's lease.
type lease struct {
	holder  string
	renewed time.Time
	files   map[uint64]struct{}
	elem    *list.Element // in Manager.order; nil once the lease is gone
}

func (l *lease) sortedFiles() []uint64 {
	ids := make([]uint64, 0, len(l.files))
	for id := range l.files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Manager is the lease table. It is not safe for concurrent use: the
// namesystem calls it under its write lock. Holder, Files, LastRenewed,
// Leases, NumLeases, NumFiles, SoftLimitExpired and HardLimitExpired change
// nothing and may run together under the read lock; ExpiredHardLimit (its
// resume point) and RecoveryHolder (the name) do change the Manager.
type Manager struct {
	limits   Limits
	byHolder map[string]*lease
	byFile   map[uint64]*lease
	order    *list.List // of *lease, least recently renewed first

	// cursor is where the next ExpiredHardLimit call resumes: just after file
	// after of lease l, while l is still in the table and expired.
	cursor struct {
		l     *lease
		after uint64
	}

	// internal is the NameNode's current holder name and when it was chosen.
	internal      string
	internalSince time.Time
}

// NewManager returns an empty table. Zero limits take the defaults; limits
// that fail Validate are replaced by the defaults too, so check them when the
// configuration is read.
func NewManager(l Limits) *Manager {
	if err := l.Validate(); err != nil {
		panic("lease: " + err.Error()) // callers validate their configuration first
	}
	l = l.withDefaults()
	if l.Soft > l.Hard {
		l.Soft = l.Hard
	}
	return &Manager{
		limits:   l,
		byHolder: make(map[string]*lease),
		byFile:   make(map[uint64]*lease),
		order:    list.New(),
	}
}

// Limits returns the limits in force.
func (m *Manager) Limits() Limits { return m.limits }

// stamp returns now, or the newest renewal if now is older, so the order list
// stays sorted.
func (m *Manager) stamp(now time.Time) time.Time {
	if b := m.order.Back(); b != nil {
		if newest := b.Value.(*lease).renewed; now.Before(newest) {
			return newest
		}
	}
	return now
}

// renew moves l to the newest end.
func (m *Manager) renew(l *lease, now time.Time) {
	l.renewed = m.stamp(now)
	m.order.MoveToBack(l.elem)
}

// get returns holder's lease, creating it (renewed at now) if needed.
func (m *Manager) get(holder string, now time.Time) *lease {
	if l := m.byHolder[holder]; l != nil {
		return l
	}
	l := &lease{holder: holder, renewed: m.stamp(now), files: make(map[uint64]struct{})}
	l.elem = m.order.PushBack(l)
	m.byHolder[holder] = l
	return l
}

// drop removes fileID from l and l from the table once it covers no file.
func (m *Manager) drop(l *lease, fileID uint64) {
	delete(l.files, fileID)
	delete(m.byFile, fileID)
	if len(l.files) > 0 {
		return
	}
	m.order.Remove(l.elem)
	l.elem = nil
	delete(m.byHolder, l.holder)
	if m.cursor.l == l {
		m.cursor.l = nil
	}
}

// AddLease gives fileID to holder and renews holder's lease (creating it if
// needed). A file held by another holder is taken from it: a file has one
// lease at most.
func (m *Manager) AddLease(holder string, fileID uint64, now time.Time) {
	if old := m.byFile[fileID]; old != nil && old.holder != holder {
		m.drop(old, fileID)
	}
	l := m.get(holder, now)
	l.files[fileID] = struct{}{}
	m.byFile[fileID] = l
	m.renew(l, now)
}

// RenewLease renews holder's lease; it reports whether holder has one (Hadoop's
// renewLease RPC quietly does nothing for a client without a lease).
func (m *Manager) RenewLease(holder string, now time.Time) bool {
	l := m.byHolder[holder]
	if l == nil {
		return false
	}
	m.renew(l, now)
	return true
}

// RenewAll renews every lease at now: a standby becoming active does this,
// since the clients renewed their leases with the old active only.
func (m *Manager) RenewAll(now time.Time) {
	for e := m.order.Front(); e != nil; e = e.Next() {
		e.Value.(*lease).renewed = now
	}
}

// RemoveLease takes fileID out of holder's lease (the file was closed), and
// drops the lease once it covers no file. It reports whether holder held it.
func (m *Manager) RemoveLease(holder string, fileID uint64) bool {
	l := m.byFile[fileID]
	if l == nil || l.holder != holder {
		return false
	}
	m.drop(l, fileID)
	return true
}

// RemoveFile takes fileID out of whatever lease covers it (the file was
// deleted or closed by recovery). It reports whether some lease did.
func (m *Manager) RemoveFile(fileID uint64) bool {
	l := m.byFile[fileID]
	if l == nil {
		return false
	}
	m.drop(l, fileID)
	return true
}

// ReassignLease moves fileID from holder from to holder to and renews to's
// lease (Hadoop's reassignLease; the namesystem logs OP_REASSIGN_LEASE). An
// empty to just removes the file's lease. It fails with ErrNotHolder if from
// does not hold the file.
func (m *Manager) ReassignLease(fileID uint64, from, to string, now time.Time) error {
	l := m.byFile[fileID]
	if l == nil || l.holder != from {
		return fmt.Errorf("%w: file %d, holder %q", ErrNotHolder, fileID, from)
	}
	if to == "" {
		m.drop(l, fileID)
		return nil
	}
	m.AddLease(to, fileID, now)
	return nil
}

// Holder returns the holder of fileID's lease.
func (m *Manager) Holder(fileID uint64) (string, bool) {
	l := m.byFile[fileID]
	if l == nil {
		return "", false
	}
	return l.holder, true
}

// Files returns the files holder has open, ascending (nil if it has no lease).
func (m *Manager) Files(holder string) []uint64 {
	l := m.byHolder[holder]
	if l == nil {
		return nil
	}
	return l.sortedFiles()
}

// LastRenewed returns when holder's lease was last renewed.
func (m *Manager) LastRenewed(holder string) (time.Time, bool) {
	l := m.byHolder[holder]
	if l == nil {
		return time.Time{}, false
	}
	return l.renewed, true
}

// Leases returns every lease, least recently renewed first.
func (m *Manager) Leases() []Info {
	out := make([]Info, 0, m.order.Len())
	for e := m.order.Front(); e != nil; e = e.Next() {
		l := e.Value.(*lease)
		out = append(out, Info{Holder: l.holder, LastRenewed: l.renewed, FileIDs: l.sortedFiles()})
	}
	return out
}

// NumLeases is the number of holders with a lease (metric NumActiveClients).
func (m *Manager) NumLeases() int { return len(m.byHolder) }

// NumFiles is the number of files under a lease (NumFilesUnderConstruction).
func (m *Manager) NumFiles() int { return len(m.byFile) }

// SoftLimitExpired reports whether holder's lease was last renewed more than
// the soft limit before now. A holder without a lease has nothing to expire:
// false.
func (m *Manager) SoftLimitExpired(holder string, now time.Time) bool {
	l := m.byHolder[holder]
	return l != nil && now.Sub(l.renewed) > m.limits.Soft
}

// HardLimitExpired reports whether holder's lease was last renewed more than
// the hard limit before now (false without a lease).
func (m *Manager) HardLimitExpired(holder string, now time.Time) bool {
	l := m.byHolder[holder]
	return l != nil && m.hardExpired(l, now)
}

func (m *Manager) hardExpired(l *lease, now time.Time) bool {
	return now.Sub(l.renewed) > m.limits.Hard
}

// ExpiredHardLimit is one lease-monitor pass: files whose lease passed the
// hard limit, leases oldest first, files ascending within a lease, at most max
// files in all (max ≤ 0 means no bound). A bounded call resumes after the last
// file the previous one returned and wraps around to the oldest lease, so
// successive calls cycle over every expired file even when some are never
// released (a holder then may appear twice in one answer). The table is not
// changed except for that resume point; the caller releases or reassigns each
// file.
func (m *Manager) ExpiredHardLimit(now time.Time, max int) []Expired {
	w := walk{m: m, max: max}
	c, after := m.cursor.l, m.cursor.after
	m.cursor.l = nil
	if max <= 0 || c == nil || c.elem == nil || !m.hardExpired(c, now) {
		for e := m.order.Front(); e != nil && m.hardExpired(e.Value.(*lease), now); e = e.Next() {
			if w.take(e.Value.(*lease), nil) {
				break
			}
		}
		return w.out
	}
	// From just after the resume point to the newest expired lease ...
	ids := c.sortedFiles()
	i, _ := slices.BinarySearch(ids, after+1)
	if w.take(c, ids[i:]) {
		return w.out
	}
	for e := c.elem.Next(); e != nil && m.hardExpired(e.Value.(*lease), now); e = e.Next() {
		if w.take(e.Value.(*lease), nil) {
			return w.out
		}
	}
	// ... then from the oldest back to it. Leases before c are older than c,
	// so expired too.
	for e := m.order.Front(); e != c.elem; e = e.Next() {
		if w.take(e.Value.(*lease), nil) {
			return w.out
		}
	}
	w.take(c, ids[:i])
	return w.out
}

// walk gathers one ExpiredHardLimit answer.
type walk struct {
	m   *Manager
	max int
	n   int
	out []Expired
}

// take adds ids of l (all its files if ids is nil) within the bound, and
// reports whether the bound is reached; it then records the resume point.
func (w *walk) take(l *lease, ids []uint64) (full bool) {
	if ids == nil {
		ids = l.sortedFiles()
	}
	if len(ids) == 0 {
		return false
	}
	if w.max > 0 && w.n+len(ids) >= w.max {
		ids = ids[:w.max-w.n]
		full = true
		w.m.cursor.l, w.m.cursor.after = l, ids[len(ids)-1]
	}
	w.n += len(ids)
	for k := range w.out {
		if w.out[k].Holder == l.holder { // wrapped around to the resume lease
			w.out[k].FileIDs = append(slices.Clone(ids), w.out[k].FileIDs...)
			return full
		}
	}
	w.out = append(w.out, Expired{Holder: l.holder, FileIDs: ids})
	return full
}

// RecoveryHolder is the holder name the NameNode takes files under recovery
// with: NameNodeHolder + "-" + the time the name was chosen, chosen afresh
// once the current one is older than the hard limit (see the package doc).
func (m *Manager) RecoveryHolder(now time.Time) string {
	if m.internal == "" || now.Sub(m.internalSince) > m.limits.Hard {
		m.internal = NameNodeHolder + "-" + now.UTC().Format(holderTimeLayout)
		m.internalSince = now
	}
	return m.internal
}

// Rebuild replaces the table with leases for the files under construction
// found at start-up. Like Hadoop, every lease starts fresh at now: holders get
// a full period to come back and renew. Leases are ordered by holder name.
func (m *Manager) Rebuild(ucFiles []UC, now time.Time) {
	m.byHolder = make(map[string]*lease)
	m.byFile = make(map[uint64]*lease)
	m.order.Init()
	m.cursor.l = nil
	sorted := slices.Clone(ucFiles)
	slices.SortStableFunc(sorted, func(a, b UC) int {
		switch {
		case a.Holder < b.Holder:
			return -1
		case a.Holder > b.Holder:
			return 1
		}
		return 0
	})
	for _, f := range sorted {
		m.AddLease(f.Holder, f.FileID, now)
	}
}
