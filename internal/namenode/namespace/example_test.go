package namespace_test

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

func Example() {
	tree := namespace.New(namespace.DefaultConfig("hdfs"))
	caller := namespace.Caller{User: "hdfs"}

	ops, err := tree.PlanMkdirs(caller, "/user/alice", 0o755, true, 1700000000000)
	if err != nil {
		fmt.Println(err)
		return
	}
	var log []op.Op // the edit log would assign txids here
	for _, o := range ops {
		log = append(log, o)
		if err := tree.Apply(o); err != nil {
			panic(err) // fail-stop: the tree no longer matches the log
		}
	}
	fi, _ := tree.Stat(caller, "/user/alice")
	fmt.Println(len(log), fi.IsDir, fi.Perm.User, namespace.ModeString(fi.Perm.Mode))

	_, err = tree.Stat(caller, "/user/bob")
	fmt.Println(err)
	// Output:
	// 2 true hdfs rwxr-xr-x
	// File does not exist: /user/bob
}
