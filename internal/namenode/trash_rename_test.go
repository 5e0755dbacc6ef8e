package namenode_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// TestRename2MoveToTrash: rename2 with moveToTrash (what Hadoop's trash
// sends for -rm) renames as rename2 does, and asks of the caller what a
// recursive delete of the source would: alice may rename a directory of
// hers holding bob's unreadable directory, but not move it to the trash.
func TestRename2MoveToTrash(t *testing.T) {
	nn := nntest.New(t)
	super := rpcClient(t, nn.Addr, nn.Config.SuperUser, namenode.ClientProtocolName)
	for _, d := range []string{"/user/alice/.Trash/Current/user/alice", "/user/alice/mine/bobs"} {
		if err := mkdir(t, super, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/user/alice", "/user/alice/.Trash", "/user/alice/.Trash/Current", "/user/alice/.Trash/Current/user",
		"/user/alice/.Trash/Current/user/alice", "/user/alice/mine"} {
		if err := call(t, super, "setOwner", &hdfs.SetOwnerRequestProto{Src: proto.String(p), Username: proto.String("alice")}, &hdfs.SetOwnerResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := call(t, super, "setOwner", &hdfs.SetOwnerRequestProto{Src: proto.String("/user/alice/mine/bobs"), Username: proto.String("bob")}, &hdfs.SetOwnerResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := mkdir(t, super, "/user/alice/mine/bobs/inner", 0o700); err != nil {
		t.Fatal(err)
	}
	alice := rpcClient(t, nn.Addr, "alice", namenode.ClientProtocolName)
	toTrash := func(src, dst string, trash bool) error {
		return call(t, alice, "rename2", &hdfs.Rename2RequestProto{Src: proto.String(src), Dst: proto.String(dst),
			OverwriteDest: proto.Bool(false), MoveToTrash: proto.Bool(trash)}, &hdfs.Rename2ResponseProto{})
	}
	err := toTrash("/user/alice/mine", "/user/alice/.Trash/Current/user/alice/mine", true)
	expectRemote(t, err, remoteerr.ClassAccessControl, "Permission denied")
	if err := toTrash("/user/alice/mine", "/user/alice/mine2", false); err != nil {
		t.Fatalf("plain rename2: %v", err)
	}
	if err := call(t, super, "delete", &hdfs.DeleteRequestProto{Src: proto.String("/user/alice/mine2/bobs"), Recursive: proto.Bool(true)}, &hdfs.DeleteResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := toTrash("/user/alice/mine2", "/user/alice/.Trash/Current/user/alice/mine", true); err != nil {
		t.Fatalf("move to trash: %v", err)
	}
	if _, err := stat(t, alice, "/user/alice/.Trash/Current/user/alice/mine"); err != nil {
		t.Fatalf("not in the trash: %v", err)
	}
}
