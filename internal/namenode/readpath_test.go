package namenode

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// startWith is startForTest with extra configuration.
func startWith(t testing.TB, kvs ...conf.KeyValue) (*NameNode, *ipc.Client) {
	t.Helper()
	kvs = append([]conf.KeyValue{
		{Key: conf.DFSNameNodeNameDir, Value: filepath.Join(t.TempDir(), "name")},
		{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
	}, kvs...)
	cfg, err := ConfigFrom(conf.Defaults().With(kvs...))
	if err != nil {
		t.Fatal(err)
	}
	if err := Format(context.Background(), cfg, Deps{}, FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nn, err := Start(context.Background(), cfg, Deps{Listener: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.RPCAddr().String()}, User: cfg.SuperUser,
		Protocol: ClientProtocolName, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return nn, c
}

// createClosed creates and completes an empty file.
func createClosed(t testing.TB, c *ipc.Client, path string) {
	t.Helper()
	ctx := context.Background()
	var cr hdfs.CreateResponseProto
	if err := c.Call(ctx, "create", &hdfs.CreateRequestProto{
		Src: proto.String(path), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String("readpath-test"), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(true),
		Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20),
	}, &cr); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	var done hdfs.CompleteResponseProto
	if err := c.Call(ctx, "complete", &hdfs.CompleteRequestProto{
		Src: proto.String(path), ClientName: proto.String("readpath-test"), FileId: cr.GetFs().FileId,
	}, &done); err != nil || !done.GetResult() {
		t.Fatalf("complete %s: %v %v", path, done.GetResult(), err)
	}
}

func accessTime(t *testing.T, c *ipc.Client, path string) uint64 {
	t.Helper()
	var resp hdfs.GetFileInfoResponseProto
	if err := c.Call(context.Background(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp); err != nil || resp.Fs == nil {
		t.Fatalf("getFileInfo %s: %v %v", path, resp.Fs, err)
	}
	return resp.Fs.GetAccessTime()
}

func getBlockLocations(ctx context.Context, c *ipc.Client, path string) error {
	var resp hdfs.GetBlockLocationsResponseProto
	return c.Call(ctx, "getBlockLocations", &hdfs.GetBlockLocationsRequestProto{
		Src: proto.String(path), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 20),
	}, &resp)
}

// TestOpenWithFreshAccessTimeIsAReader: getBlockLocations of a file whose
// access time is within the precision takes only the read lock, so it is
// answered while another reader holds the lock (it used to queue for the
// write lock on every call, behind that reader, and make every reader
// after it wait too).
func TestOpenWithFreshAccessTimeIsAReader(t *testing.T) {
	nn, c := startWith(t) // precision: the default hour
	createClosed(t, c, "/fresh")
	nn.ns.mu.RLock()
	done := make(chan error, 1)
	go func() { done <- getBlockLocations(context.Background(), c, "/fresh") }()
	select {
	case err := <-done:
		nn.ns.mu.RUnlock()
		if err != nil {
			t.Fatalf("getBlockLocations: %v", err)
		}
	case <-time.After(10 * time.Second):
		nn.ns.mu.RUnlock()
		<-done
		t.Fatal("getBlockLocations waited for the write lock although the access time was fresh")
	}
}

// TestOpenLogsStaleAccessTime: with a precision of 1 ms, an open after the
// precision has passed still logs the new access time (the write path the
// read-lock check leads to).
func TestOpenLogsStaleAccessTime(t *testing.T) {
	_, c := startWith(t, conf.KeyValue{Key: conf.DFSNameNodeAccessTimePrecision, Value: "1"})
	createClosed(t, c, "/stale")
	before := accessTime(t, c, "/stale")
	time.Sleep(20 * time.Millisecond)
	if err := getBlockLocations(context.Background(), c, "/stale"); err != nil {
		t.Fatalf("getBlockLocations: %v", err)
	}
	if after := accessTime(t, c, "/stale"); after <= before {
		t.Fatalf("access time %d after the open, want later than %d", after, before)
	}
}

// TestFileStatusFields: the status built in one allocation carries every
// field as the message built field by field does.
func TestFileStatusFields(t *testing.T) {
	fi := namespace.FileInfo{ID: 16390, Length: 5, Mtime: 7, Atime: 8, BlockSize: 1 << 20, Replication: 3,
		ChildrenNum: 0, StoragePolicy: 7, HasACL: true, Snapshottable: true,
		Perm: op.Perm{User: "u", Group: "g", Mode: 0o640}}
	want := &hdfs.HdfsFileStatusProto{
		FileType: hdfs.HdfsFileStatusProto_IS_FILE.Enum(), Path: []byte("n"), Length: proto.Uint64(5),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o640)}, Owner: proto.String("u"), Group: proto.String("g"),
		ModificationTime: proto.Uint64(7), AccessTime: proto.Uint64(8), BlockReplication: proto.Uint32(3),
		Blocksize: proto.Uint64(1 << 20), FileId: proto.Uint64(16390), ChildrenNum: proto.Int32(0),
		StoragePolicy: proto.Uint32(7),
		Flags:         proto.Uint32(uint32(hdfs.HdfsFileStatusProto_HAS_ACL | hdfs.HdfsFileStatusProto_SNAPSHOT_ENABLED)),
	}
	if got := fileStatus(fi, []byte("n")); !proto.Equal(got, want) {
		t.Errorf("fileStatus = %v, want %v", got, want)
	}
	dir := namespace.FileInfo{ID: 16385, IsDir: true, ChildrenNum: 2, Perm: op.Perm{User: "u", Group: "g", Mode: 0o755}}
	want = &hdfs.HdfsFileStatusProto{
		FileType: hdfs.HdfsFileStatusProto_IS_DIR.Enum(), Path: []byte{}, Length: proto.Uint64(0),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, Owner: proto.String("u"), Group: proto.String("g"),
		ModificationTime: proto.Uint64(0), AccessTime: proto.Uint64(0), BlockReplication: proto.Uint32(0),
		Blocksize: proto.Uint64(0), FileId: proto.Uint64(16385), ChildrenNum: proto.Int32(2),
	}
	if got := fileStatus(dir, nil); !proto.Equal(got, want) {
		t.Errorf("fileStatus of a directory = %v, want %v", got, want)
	}
}

// TestCheckRequestFastPath: for every request checkRequest checks without
// reflection, each string field the reflective walk reaches (nested ones
// included), set over every limit on its own, is refused by the fast path
// with the walk's message; and a request within the limits passes both.
func TestCheckRequestFastPath(t *testing.T) {
	long := "/" + strings.Repeat("a", 4*MaxPathLength)
	for _, m := range []proto.Message{
		&hdfs.GetFileInfoRequestProto{},
		&hdfs.GetBlockLocationsRequestProto{},
		&hdfs.GetListingRequestProto{},
		&hdfs.CreateRequestProto{},
		&hdfs.MkdirsRequestProto{},
		&hdfs.DeleteRequestProto{},
		&hdfs.RenameRequestProto{},
		&hdfs.Rename2RequestProto{},
		&hdfs.CompleteRequestProto{},
	} {
		name := m.ProtoReflect().Descriptor().Name()
		// fill sets every string field reachable from msg to short, except
		// the one at target (a path of field names), set to long.
		var fill func(msg protoreflect.Message, prefix, target string, n *int)
		fill = func(msg protoreflect.Message, prefix, target string, n *int) {
			fields := msg.Descriptor().Fields()
			for i := range fields.Len() {
				fd := fields.Get(i)
				at := prefix + string(fd.Name())
				switch {
				case fd.IsMap():
					t.Fatalf("%s.%s is a map: extend this test", name, at)
				case fd.Kind() == protoreflect.StringKind:
					*n++
					v := "/ok"
					if at == target {
						v = long
					}
					if fd.IsList() {
						msg.Mutable(fd).List().Append(protoreflect.ValueOfString(v))
					} else {
						msg.Set(fd, protoreflect.ValueOfString(v))
					}
				case fd.Kind() == protoreflect.MessageKind && fd.IsList():
					fill(msg.Mutable(fd).List().AppendMutable().Message(), at+".", target, n)
				case fd.Kind() == protoreflect.MessageKind:
					fill(msg.Mutable(fd).Message(), at+".", target, n)
				}
			}
		}
		var targets []string
		var collect func(md protoreflect.MessageDescriptor, prefix string, depth int)
		collect = func(md protoreflect.MessageDescriptor, prefix string, depth int) {
			if depth > 4 {
				t.Fatalf("%s nests deeper than this test goes", name)
			}
			fields := md.Fields()
			for i := range fields.Len() {
				fd := fields.Get(i)
				switch fd.Kind() {
				case protoreflect.StringKind:
					targets = append(targets, prefix+string(fd.Name()))
				case protoreflect.MessageKind:
					collect(fd.Message(), prefix+string(fd.Name())+".", depth+1)
				}
			}
		}
		collect(m.ProtoReflect().Descriptor(), "", 0)
		if len(targets) == 0 {
			t.Fatalf("%s has no string field", name)
		}
		ok := m.ProtoReflect().New()
		var n int
		fill(ok, "", "", &n)
		if fast, walk := checkRequest("m", ok.Interface()), checkFields("m", ok); fast != nil || walk != nil {
			t.Errorf("%s within the limits: fast path %v, reflective walk %v", name, fast, walk)
		}
		for _, target := range targets {
			req := m.ProtoReflect().New()
			n = 0
			fill(req, "", target, &n)
			fast, walk := checkRequest("m", req.Interface()), checkFields("m", req)
			if walk == nil {
				t.Fatalf("%s.%s over every limit passes the reflective walk", name, target)
			}
			if fast == nil || fast.Error() != walk.Error() {
				t.Errorf("%s.%s too long: fast path %v, reflective walk %v; want the same refusal", name, target, fast, walk)
			}
		}
	}
}
