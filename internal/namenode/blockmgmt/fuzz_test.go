package blockmgmt

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzOps drives the manager with arbitrary sequences of DataNode events,
// reports and namespace calls and checks the derived state after each step.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 10, 11, 12, 20, 21, 30, 40, 50, 60, 70})
	f.Add([]byte("\x00\x01\x02\x13\x24\x35\x46\x57\x68\x79\x8a\x9b\xac\xbd\xce\xdf"))
	f.Add([]byte{9, 9, 9, 0x19, 0x29, 0x39, 0x49, 0x59, 0x69, 0x79, 0x89, 0x99, 0xa9, 0xb9})
	// Nodes leaving service and coming back: host policies (16) and
	// monitor passes (17) between reports and work.
	f.Add([]byte{0, 1, 0, 2, 0, 3, 11, 0, 3, 5, 4, 7, 4, 8, 16, 0x09, 17, 0, 9, 0, 1, 1, 5, 9, 2, 200, 17, 0, 16, 0x26, 17, 0, 2, 250, 17, 0, 16, 0})
	// A sliced full report with incremental reports, deletions and
	// another node's report between its slices.
	f.Add([]byte{0, 1, 0, 2, 11, 0, 3, 1, 3, 2, 3, 3, 4, 1, 4, 2, 18, 1, 5, 0x05, 19, 0, 8, 2, 19, 1, 5, 0x0d, 4, 2, 19, 2, 3, 4, 19, 0, 19, 0, 19, 0})
	// A block marked deleted (8 with 0x40), then reported in full and
	// incrementally, re-judged, and removed.
	f.Add([]byte{0, 1, 0, 2, 11, 0, 3, 5, 5, 0x15, 5, 0x16, 8, 0x45, 4, 0x05, 5, 0x15, 7, 0x05, 9, 0, 8, 0x05, 9, 0})
	f.Fuzz(runOps)
}

func runOps(t *testing.T, ops []byte) {
	{
		if len(ops) > 400 {
			ops = ops[:400]
		}
		cfg := DefaultConfig()
		cfg.Topology = func(ip string) string { return "/r" + ip[len(ip)-1:] }
		m := New(cfg, rand.New(rand.NewPCG(1, 2)))
		now := t0
		id := func(k byte) DatanodeID {
			k %= 6
			return DatanodeID{UUID: fmt.Sprintf("dn%d", k), IPAddr: fmt.Sprintf("10.0.%d.%d", k, k%2), XferPort: 9866}
		}
		blk := func(x byte) Block {
			return Block{ID: int64(x % 16), NumBytes: int64(x % 3), GenStamp: int64(100 + x%2)}
		}
		// A full report processed in slices (ops 18, 19) while the other
		// ops go on between its slices.
		var fr *FullReport
		var pend []ReportedReplica
		step := func(arg byte) {
			k := 1 + int(arg%3)
			var err error
			if len(pend) > 0 {
				k = min(k, len(pend))
				err = m.ReportSlice(fr, pend[:k], now)
				pend = pend[k:]
			} else {
				var done bool
				if done, err = m.SweepSlice(fr, k, now); done {
					fr = nil
				}
			}
			if err != nil {
				m.AbortFullReport(fr)
				fr, pend = nil, nil
			}
		}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%20, ops[i+1]
			dn := id(arg).UUID
			switch op {
			case 0:
				_ = m.RegisterDatanode(id(arg), now)
			case 1:
				_, _ = m.Heartbeat(dn, []StorageReport{{StorageID: "s" + dn, Capacity: 100 << 30, Remaining: int64(arg) << 28}}, int(arg%5), int(arg%3), now)
			case 2:
				now = now.Add(time.Duration(arg) * 10 * time.Second)
				m.CheckHeartbeats(now)
			case 3:
				st := Complete
				if arg&0x80 != 0 {
					st = UnderConstruction
				}
				_ = m.AddBlock(int64(arg%3), blk(arg), int(arg%4), st, []DatanodeID{id(arg)})
			case 4:
				var reps []ReportedReplica
				for j := byte(0); j < arg%8; j++ {
					reps = append(reps, ReportedReplica{Block: blk(arg + j*37), State: ReplicaState(j % 3)})
				}
				_, _ = m.ProcessFullBlockReport(dn, "s"+dn, reps, now)
			case 5:
				_, _ = m.ProcessIncremental(dn, "s"+dn, []ReceivedDeleted{{Block: blk(arg >> 2), Status: ReceivedStatus(1 + arg%3)}}, now)
			case 6:
				_ = m.ReportBadBlocks(blk(arg), []string{dn, id(arg + 1).UUID})
			case 7:
				m.SetReplication([]int64{int64(arg % 16)}, int(arg%5))
			case 8:
				// Marked deleted first (its removal queued), or removed.
				if arg&0x40 != 0 {
					m.MarkDeleted([]int64{int64(arg % 16)}, nil)
				} else {
					m.RemoveBlocks([]int64{int64(arg % 16)})
				}
			case 9:
				m.ComputeWork(now)
			case 10:
				_, _ = m.CommitBlock(blk(arg))
			case 11:
				m.Activate(now)
				m.Tick(now)
			case 12:
				m.ChooseTargets(int(arg%5), id(arg).IPAddr, []DatanodeID{id(arg + 2)}, nil, 1<<20, now)
			case 13:
				_, _ = m.GetBlockLocations([]int64{int64(arg % 16), int64(arg>>4) % 16}, dn, now)
			case 14:
				_ = m.UpdatePipeline(int64(arg%16), int64(101+arg%4), 0, []DatanodeID{id(arg)})
			case 15:
				if arg%2 == 0 {
					m.EnterSafeMode()
				} else {
					_ = m.LeaveSafeMode(arg%4 == 1)
				}
			case 16:
				// Two bits per node (k mod 4): in service, excluded, in
				// maintenance for arg minutes, or not in the include list.
				until := now.Add(time.Duration(arg) * time.Minute)
				m.SetHostPolicy(func(id DatanodeID) HostVerdict {
					k := int(id.UUID[len(id.UUID)-1]-'0') % 4
					switch (arg >> (2 * k)) & 3 {
					case 1:
						return HostVerdict{Decommission: true}
					case 2:
						return HostVerdict{MaintenanceUntil: until}
					case 3:
						return HostVerdict{Disallowed: true}
					}
					return HostVerdict{}
				}, now)
			case 17:
				m.CheckAdmin(now)
			case 18:
				if fr != nil {
					step(arg)
					break
				}
				var err error
				if fr, err = m.StartFullReport(dn, "s"+dn, now); err != nil {
					fr = nil
					break
				}
				pend = nil
				for j := byte(0); j < arg%8; j++ {
					pend = append(pend, ReportedReplica{Block: blk(arg + j*37), State: ReplicaState(j % 3)})
				}
			case 19:
				if fr != nil {
					step(arg)
				}
			}
			if err := m.checkInvariants(); err != nil {
				t.Fatalf("after op %d (%d,%d): %v", i/2, op, arg, err)
			}
			m.Stats(now)
			m.DatanodeReport(ReportAll, now)
		}
		for k := 0; fr != nil; k++ {
			if k > 1000 {
				t.Fatal("sliced full report does not end")
			}
			step(2)
		}
		if err := m.checkInvariants(); err != nil {
			t.Fatalf("after the sliced report ended: %v", err)
		}
	}
}
