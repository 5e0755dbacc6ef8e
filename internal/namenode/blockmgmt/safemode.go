package blockmgmt

import (
	"fmt"
	"time"
)

type smStatus uint8

const (
	smOff       smStatus = iota
	smInit               // loading the namespace; Activate not called yet
	smPending            // waiting for the thresholds
	smExtension          // thresholds met, waiting SafeModeExtension
)

// safeMode is the start-up safe mode (BlockManagerSafeMode) plus the manual
// flag of dfsadmin -safemode enter.
type safeMode struct {
	status  smStatus
	reached time.Time // start of the extension
	manual  bool
	// left is when start-up safe mode ended (zero while it is on).
	left time.Time
}

// InSafeMode reports whether start-up or manual safe mode is on.
func (m *Manager) InSafeMode() bool { return m.sm.status != smOff || m.sm.manual }

// blockThreshold is the number of safe blocks needed, computed in single
// precision like Hadoop ((long) (total * threshold) with a float threshold).
func (m *Manager) blockThreshold() int64 {
	return int64(float32(m.completeBlocks) * float32(m.cfg.SafeModeThresholdPct))
}

func (m *Manager) thresholdsMet() bool {
	if m.cfg.SafeModeThresholdPct > 1 {
		return false
	}
	return m.safeBlocks >= m.blockThreshold() && m.NumLiveDatanodes() >= m.cfg.SafeModeMinDataNodes
}

func (m *Manager) bytesInFuture() int64 {
	var n int64
	for _, b := range m.futureBytes {
		n += b
	}
	return n
}

// Activate ends the loading phase: the caller has added every block of the
// namespace. If the thresholds are already met (for example an empty
// namespace), start-up safe mode ends at once, without extension; otherwise
// it ends SafeModeExtension after they are met (see Tick).
func (m *Manager) Activate(now time.Time) {
	m.nowHint = now
	if m.sm.status != smInit {
		return
	}
	if m.thresholdsMet() && m.bytesInFuture() == 0 {
		m.leaveStartup()
		return
	}
	m.sm.status = smPending
	m.checkSafeMode(now)
}

// Tick advances start-up safe mode; the caller calls it about every second.
func (m *Manager) Tick(now time.Time) {
	m.nowHint = now
	m.checkSafeMode(now)
}

func (m *Manager) checkSafeMode(now time.Time) {
	switch m.sm.status {
	case smPending:
		if !m.thresholdsMet() {
			return
		}
		if m.cfg.SafeModeExtension <= 0 {
			if m.bytesInFuture() == 0 {
				m.leaveStartup()
			}
			return
		}
		m.sm.status, m.sm.reached = smExtension, now
	case smExtension:
		if now.Sub(m.sm.reached) >= m.cfg.SafeModeExtension && m.thresholdsMet() && m.bytesInFuture() == 0 {
			m.leaveStartup()
		}
	}
}

// leaveStartup ends start-up safe mode and builds the redundancy queues from
// every block (Hadoop's initializeReplQueues / processMisReplicatedBlocks):
// the first popAtOnce blocks at once, the rest in slices (PopulateFor), as
// Hadoop's replication queue initializer takes
// dfs.block.misreplication.processing.limit (10,000) blocks per hold of
// the lock; here a slice ends by time, like the other long operations'.
func (m *Manager) leaveStartup() {
	if m.sm.status != smOff {
		m.sm.left = m.nowHint
	}
	m.sm.status = smOff
	if m.populating {
		return
	}
	m.populating = true
	m.popNext = 1
	n := 0
	m.PopulateFor(func() bool { n += clockStride; return n >= popAtOnce })
}

// popAtOnce is how many blocks leaveStartup judges before it returns
// (about a millisecond's worth).
const popAtOnce = 2048

// Populating reports whether blocks remain that the redundancy queues'
// population has not judged yet (PopulateFor).
func (m *Manager) Populating() bool { return m.popNext != 0 }

// PopulateFor goes on judging blocks into the redundancy queues, in slab
// order from where the last call stopped, until over reports true (asked
// every clockStride blocks) or every block was judged, and reports whether
// some are left. Slab indices stay put while an entry lives, so every
// block present when the population began and still present is judged
// once; a block added since under an index already passed is judged by
// the events that change it, as every block is while populating.
func (m *Manager) PopulateFor(over Over) bool {
	t := &m.blocks
	k := 0
	for m.popNext != 0 && m.popNext < t.used {
		ix := m.popNext
		m.popNext++
		if b := t.at(ix); t.index(b.ID) == ix {
			m.refresh(b)
		}
		if k++; k%clockStride == 0 && over() {
			break
		}
	}
	if m.popNext >= t.used {
		m.popNext = 0
	}
	return m.popNext != 0
}

// StartupSafeMode is start-up safe mode's progress (the Startup Progress
// page's last phase): the blocks reported safe, the number it waits for,
// and when it ended (zero while it is on).
func (m *Manager) StartupSafeMode() (safe, needed int64, ended time.Time) {
	return m.safeBlocks, m.blockThreshold(), m.sm.left
}

// EnterSafeMode turns manual safe mode on (dfsadmin -safemode enter); it stays
// on until LeaveSafeMode.
func (m *Manager) EnterSafeMode() { m.sm.manual = true }

// LeaveSafeMode turns safe mode off, manual and start-up alike (dfsadmin
// -safemode leave; force for forceExit). Without force it refuses while
// replicas with future generation stamps were reported, since leaving would
// delete them.
func (m *Manager) LeaveSafeMode(force bool) error {
	if n := m.bytesInFuture(); n > 0 && !force {
		return fmt.Errorf("%w: leaving safe mode would delete %d byte(s); use forceExit", ErrBytesInFuture, n)
	}
	clear(m.futureBytes)
	m.sm.manual = false
	m.leaveStartup()
	return nil
}

// SafeModeStatus answers dfsadmin -safemode get and the NameNode UI: whether
// safe mode is on and Hadoop's explanation ("" when off).
func (m *Manager) SafeModeStatus(now time.Time) (on bool, msg string) {
	if !m.InSafeMode() {
		return false, ""
	}
	if m.sm.manual {
		return true, "Safe mode is ON. It was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."
	}
	thr := m.blockThreshold()
	pct := float64(float32(m.cfg.SafeModeThresholdPct))
	msg = "Safe mode is ON. "
	if m.safeBlocks < thr {
		msg += fmt.Sprintf("The reported blocks %d needs additional %d blocks to reach the threshold %.4f of total blocks %d.\n",
			m.safeBlocks, thr-m.safeBlocks, pct, m.completeBlocks)
	} else {
		msg += fmt.Sprintf("The reported blocks %d has reached the threshold %.4f of total blocks %d. ",
			m.safeBlocks, pct, m.completeBlocks)
	}
	live, need := m.NumLiveDatanodes(), m.cfg.SafeModeMinDataNodes
	if live < need {
		msg += fmt.Sprintf("The number of live datanodes %d needs an additional %d live datanodes to reach the minimum number %d.\n",
			live, need-live, need)
	} else {
		msg += fmt.Sprintf("The number of live datanodes %d has reached the minimum number %d. ", live, need)
	}
	if n := m.bytesInFuture(); n > 0 {
		msg += fmt.Sprintf("Name node detected blocks with generation stamps in future. Exiting safe mode will cause loss of %d byte(s). "+
			"Use \"hdfs dfsadmin -safemode forceExit\" if the NameNode was started with the correct metadata.", n)
		return true, msg
	}
	const off = "Safe mode will be turned off automatically "
	switch m.sm.status {
	case smInit, smPending:
		msg += off + "once the thresholds have been reached."
	case smExtension:
		left := m.sm.reached.Add(m.cfg.SafeModeExtension).Sub(now)
		msg += fmt.Sprintf("In safe mode extension. %sin %d seconds.", off, left.Milliseconds()/1000)
	}
	return true, msg
}
