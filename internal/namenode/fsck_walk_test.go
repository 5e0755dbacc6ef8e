package namenode_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// fsck's walk reads a directory in slices: a directory of 250 files (over
// two slices) is listed whole, each file once and in order; a file open for
// write is left out of the totals unless -openforwrite asks for it.
func TestFsckWalksSlices(t *testing.T) {
	nn := nntest.New(t)
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.Addr}, User: nn.Config.SuperUser, Protocol: namenode.ClientProtocolName})
	defer c.Close()
	call := func(method string, req, resp proto.Message) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Call(ctx, method, req, resp); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	create := func(p string) {
		call("create", &hdfs.CreateRequestProto{Src: proto.String(p), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
			ClientName: proto.String("fsck-test"), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(true),
			Replication: proto.Uint32(3), BlockSize: proto.Uint64(1 << 20)}, &hdfs.CreateResponseProto{})
	}
	const n = 250
	for i := range n {
		p := fmt.Sprintf("/d/f%03d", i)
		create(p)
		call("complete", &hdfs.CompleteRequestProto{Src: proto.String(p), ClientName: proto.String("fsck-test")}, &hdfs.CompleteResponseProto{})
	}
	create("/open")

	base := "http://" + nn.HTTPAddr().String() + "/fsck?ugi=" + url.QueryEscape(nn.Config.SuperUser)
	code, out := webtest.Get(t, base+"&path=%2F&files=1")
	if code != http.StatusOK {
		t.Fatalf("/fsck: %d %s", code, out)
	}
	var listed []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "/d/f") {
			listed = append(listed, strings.Fields(l)[0])
		}
	}
	if len(listed) != n {
		t.Fatalf("%d files listed, want %d:\n%s", len(listed), n, out)
	}
	for i, p := range listed {
		if want := fmt.Sprintf("/d/f%03d", i); p != want {
			t.Fatalf("file %d is %s, want %s", i, p, want)
		}
	}
	for _, want := range []string{"/d <dir>\n", "/d/f000 0 bytes, replicated: replication=3, 0 block(s):  OK\n",
		"\n Total files:\t250 (Files currently being written: 1)\n", "\n Total dirs:\t\t\t2\n",
		"\n Total blocks (validated):\t0\n", "\n Minimally replicated blocks:\t0\n",
		"\nThe filesystem under path '/' is HEALTHY"} {
		if !strings.Contains(out, want) {
			t.Fatalf("report lacks %q:\n%s", want, out)
		}
	}
	_, out = webtest.Get(t, base+"&path=%2F&openforwrite=1")
	if !strings.Contains(out, "/open 0 bytes, replicated: replication=3, 0 block(s), OPENFORWRITE: ") || !strings.Contains(out, "\n Total files:\t251\n") {
		t.Fatalf("-openforwrite:\n%s", out)
	}
	// -includeSnapshots walks /d/.snapshot/s1 too, which keeps a deleted file.
	call("allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/d")}, &hdfs.AllowSnapshotResponseProto{})
	call("createSnapshot", &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String("/d"), SnapshotName: proto.String("s1")}, &hdfs.CreateSnapshotResponseProto{})
	call("delete", &hdfs.DeleteRequestProto{Src: proto.String("/d/f007"), Recursive: proto.Bool(false)}, &hdfs.DeleteResponseProto{})
	_, out = webtest.Get(t, base+"&path=%2Fd&files=1")
	if strings.Contains(out, "/d/.snapshot") || !strings.Contains(out, "\n Total files:\t249\n") {
		t.Fatalf("without -includeSnapshots:\n%s", out)
	}
	code, out = webtest.Get(t, base+"&path=%2Fd&files=1&includeSnapshots=1")
	if code != http.StatusOK || !strings.Contains(out, "/d/.snapshot/s1/f007 0 bytes, replicated: replication=3, 0 block(s):  OK\n") ||
		!strings.Contains(out, "\n Total files:\t499\n") {
		t.Fatalf("includeSnapshots: %d %s", code, out)
	}
	if code, _ := webtest.Get(t, "http://"+nn.HTTPAddr().String()+"/fsck?path=%2F"); code != http.StatusBadRequest {
		t.Fatalf("no ugi: %d", code)
	}
}
