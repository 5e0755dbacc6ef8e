package lease_test

import (
	"fmt"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/namenode/lease"
)

func Example() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := lease.NewManager(lease.Limits{})
	m.AddLease("DFSClient_a", 16386, t0)
	m.AddLease("DFSClient_b", 16387, t0.Add(time.Minute))

	// The monitor's pass 21 minutes later: only a's lease passed the hard limit.
	now := t0.Add(21 * time.Minute)
	for _, e := range m.ExpiredHardLimit(now, 100) {
		for _, f := range e.FileIDs {
			d := lease.DecideRelease(lease.FileState{
				NumBlocks: 1, Last: lease.UnderConstruction, MinReplication: 1,
				LastNumBytes: 1024, Holders: []lease.Holder{{}, {Stale: true}}, PrevPrimary: -1,
			})
			fmt.Println(e.Holder, f, d.Kind, "primary", d.Primary)
			if err := m.ReassignLease(f, e.Holder, m.RecoveryHolder(now), now); err != nil {
				fmt.Println(err)
			}
		}
	}
	h, _ := m.Holder(16386)
	fmt.Println(h)
	// Output:
	// DFSClient_a 16386 StartBlockRecovery primary 0
	// HDFS_NameNode-2026-01-01 00:21:00,000
}
