package recovery_test

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/datanode/recovery"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
)

func Example() {
	b := recovery.Block{ID: 1073741825, GenStamp: 1001, RecoveryID: 1005}
	plan, err := recovery.Decide(b, []recovery.Answer{
		{Outcome: recovery.Replied, ReplicaInfo: recovery.ReplicaInfo{Node: 0, State: storage.RBW, Length: 70000, GenStamp: 1001}},
		{Outcome: recovery.Replied, ReplicaInfo: recovery.ReplicaInfo{Node: 1, State: storage.RBW, Length: 65536, GenStamp: 1001}},
		{Outcome: recovery.CallFailed, ReplicaInfo: recovery.ReplicaInfo{Node: 2}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.NewLength, plan.Participants)
	c, _ := plan.Commit([]int{0, 1})
	fmt.Println(c.NewGenStamp, c.NewLength, c.Nodes)
	// Output:
	// 65536 [0 1]
	// 1005 65536 [0 1]
}
