package namenode_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestRetryCacheFromEdits: the retry cache is rebuilt from the client ids
// the edit log records. A create, a delete and a rename2 retried with the
// same client and call ids after a restart get the first answers instead
// of being carried out again (a second create would fail: the client
// already holds the file; a second delete would answer false).
func TestRetryCacheFromEdits(t *testing.T) {
	cfg := nntest.Config(t, 1)
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	id := []byte("retry-client-id1")
	calls := func(addr string) *ipc.Client {
		c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: cfg.SuperUser, Protocol: namenode.ClientProtocolName, ClientID: id, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	run := func(c *ipc.Client) (created *hdfs.CreateResponseProto, deleted bool) {
		created = &hdfs.CreateResponseProto{}
		if err := call(t, c, "create", createReq("/r", "DFSClient_retry"), created); err != nil { // call 1
			t.Fatalf("create: %v", err)
		}
		if err := mkdir(t, c, "/gone", 0o755); err != nil { // call 2
			t.Fatal(err)
		}
		var del hdfs.DeleteResponseProto
		if err := call(t, c, "delete", &hdfs.DeleteRequestProto{Src: proto.String("/gone"), Recursive: proto.Bool(true)}, &del); err != nil { // call 3
			t.Fatalf("delete: %v", err)
		}
		if err := call(t, c, "rename2", &hdfs.Rename2RequestProto{Src: proto.String("/r"), Dst: proto.String("/r2"), OverwriteDest: proto.Bool(false)},
			&hdfs.Rename2ResponseProto{}); err != nil { // call 4
			t.Fatalf("rename2: %v", err)
		}
		return created, del.GetResult()
	}
	first, deleted := run(calls(nn.Addr))
	if !deleted || first.GetFs() == nil {
		t.Fatalf("first run: create %v, delete %v", first, deleted)
	}
	nn.Close()
	nn2 := nntest.Start(t, cfg)
	again, deletedAgain := run(calls(nn2.Addr))
	if again.GetFs().GetFileId() != first.GetFs().GetFileId() {
		t.Errorf("the retried create answered file id %d, the first %d", again.GetFs().GetFileId(), first.GetFs().GetFileId())
	}
	if !deletedAgain {
		t.Error("the retried delete answered false: it ran again instead of being answered from the retry cache")
	}
}

// TestRetryCacheLiveAnswers: a call retried with its client and call ids
// gets the first answer as it was encoded (a second create would fail: the
// client holds the file), a call id reused by a call of another kind gets
// an error instead of the other call's answer, and a client id longer than
// Hadoop's 16 bytes is refused with Hadoop's message.
func TestRetryCacheLiveAnswers(t *testing.T) {
	cfg := nntest.Config(t, 1)
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	client := func(id string) *ipc.Client {
		c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.Addr}, User: cfg.SuperUser, Protocol: namenode.ClientProtocolName, ClientID: []byte(id), MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	// A fresh client per call: each starts its call ids at 0.
	first := &hdfs.CreateResponseProto{}
	if err := call(t, client("live-client-id-1"), "create", createReq("/f", "DFSClient_live"), first); err != nil {
		t.Fatal(err)
	}
	again := &hdfs.CreateResponseProto{}
	if err := call(t, client("live-client-id-1"), "create", createReq("/f", "DFSClient_live"), again); err != nil {
		t.Fatalf("retried create: %v", err)
	}
	if !proto.Equal(first, again) {
		t.Fatalf("retried create answered %v, the first %v", again, first)
	}
	var del hdfs.DeleteResponseProto
	err := call(t, client("live-client-id-1"), "delete", &hdfs.DeleteRequestProto{Src: proto.String("/f"), Recursive: proto.Bool(false)}, &del)
	if err == nil || !strings.Contains(err.Error(), "call of another kind") {
		t.Fatalf("delete reusing the create's call id: %v, %v", del.Result, err)
	}
	err = call(t, client("a-client-id-of-20-b"), "create", createReq("/g", "DFSClient_long"), &hdfs.CreateResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "Invalid clientId - length is 19 expected length 16") {
		t.Fatalf("create with a 19-byte client id: %v", err)
	}
}
