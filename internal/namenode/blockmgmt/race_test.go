package blockmgmt

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// TestFullReportRacesWithWrites processes full reports in slices, the lock
// released between slices as the NameNode does, while another goroutine
// creates, appends to and deletes blocks and the DataNode loses replicas,
// each change reported incrementally. Once both stop, the block map must
// hold exactly the DataNode's replicas. Run it with -race.
func TestFullReportRacesWithWrites(t *testing.T) {
	h := activeHarness(t, DefaultConfig(), 21, "a1")
	m, uuid, sid := h.m, h.id("a1").UUID, stID("a1")
	targets := []DatanodeID{h.id("a1")}
	now := h.now

	var nsMu sync.Mutex // the namesystem lock
	var dnMu sync.Mutex // the DataNode: its replicas and the order of its reports
	onDN := map[int64]Block{}
	nextID := int64(1)

	ibr := func(items ...ReceivedDeleted) {
		if _, err := m.ProcessIncremental(uuid, sid, items, now); err != nil {
			t.Error(err)
		}
	}
	check := func() {
		if err := m.checkInvariants(); err != nil {
			t.Error(err)
		}
	}
	pick := func(rnd *rand.Rand) (int64, bool) {
		if len(onDN) == 0 {
			return 0, false
		}
		k := rnd.IntN(len(onDN))
		for id := range onDN {
			if k == 0 {
				return id, true
			}
			k--
		}
		return 0, false
	}

	const writes, reports = 600, 12
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the writers and the DataNode's incremental reports
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(3, 4))
		for range writes {
			dnMu.Lock()
			nsMu.Lock()
			switch op := rnd.IntN(10); {
			case op < 5: // create a one-block file
				b := Block{ID: nextID, NumBytes: 10, GenStamp: 1001}
				nextID++
				if err := m.AddBlock(b.ID, b, 1, UnderConstruction, targets); err != nil {
					t.Error(err)
				}
				onDN[b.ID] = b
				ibr(ReceivedDeleted{Block: b, Status: Received})
				if _, err := m.CommitBlock(b); err != nil {
					t.Error(err)
				}
			case op < 7: // append: new stamp and length
				if id, ok := pick(rnd); ok && m.IsComplete(id) {
					b := onDN[id]
					if err := m.ReopenForAppend(id); err != nil {
						t.Error(err)
						break
					}
					nb := Block{ID: id, NumBytes: b.NumBytes + 5, GenStamp: b.GenStamp + 1}
					if err := m.UpdatePipeline(id, nb.GenStamp, b.NumBytes, targets); err != nil {
						t.Error(err)
					}
					onDN[id] = nb
					ibr(ReceivedDeleted{Block: nb, Status: Received})
					if _, err := m.CommitBlock(nb); err != nil {
						t.Error(err)
					}
				}
			case op < 9: // the file deleted; the DataNode deletes the replica
				if id, ok := pick(rnd); ok {
					m.RemoveBlocks([]int64{id})
					delete(onDN, id)
					ibr(ReceivedDeleted{Block: Block{ID: id}, Status: Deleted})
				}
			default: // the DataNode loses a replica (a failed disk sector)
				if id, ok := pick(rnd); ok {
					b := onDN[id]
					delete(onDN, id)
					ibr(ReceivedDeleted{Block: b, Status: Deleted})
				}
			}
			check()
			nsMu.Unlock()
			dnMu.Unlock()
			runtime.Gosched()
		}
	}()
	go func() { // the DataNode's full reports, processed in slices
		defer wg.Done()
		for range reports {
			// The report is taken and started while the DataNode sends
			// nothing else, as its one reporting thread does; the
			// incremental reports after it come during its slices.
			dnMu.Lock()
			snap := make([]ReportedReplica, 0, len(onDN))
			for _, b := range onDN {
				snap = append(snap, fin(b))
			}
			nsMu.Lock()
			fr, err := m.StartFullReport(uuid, sid, now)
			nsMu.Unlock()
			dnMu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			for k := 0; k < len(snap); k += 3 {
				nsMu.Lock()
				err := m.ReportSlice(fr, snap[k:min(k+3, len(snap))], now)
				check()
				nsMu.Unlock()
				if err != nil {
					t.Error(err)
				}
				runtime.Gosched()
			}
			for done := false; !done; {
				nsMu.Lock()
				done, err = m.SweepSlice(fr, 3, now)
				check()
				nsMu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				runtime.Gosched()
			}
		}
	}()
	wg.Wait()

	nsMu.Lock()
	defer nsMu.Unlock()
	check()
	for id := int64(1); id < nextID; id++ {
		b, onNode := onDN[id]
		info, known := m.BlockInfo(id)
		switch {
		case onNode && !known:
			t.Errorf("blk_%d: on the DataNode, not in the map", id)
		case onNode && (info.Live != 1 || info.Corrupt != 0 || info.GenStamp != b.GenStamp):
			t.Errorf("blk_%d: map says %+v, the DataNode holds %+v", id, info, b)
		case !onNode && known && info.Live+info.Corrupt != 0:
			t.Errorf("blk_%d: the DataNode lost it, the map still has %+v", id, info)
		}
	}
}
