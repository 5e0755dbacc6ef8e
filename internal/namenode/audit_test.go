package namenode_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
)

// auditLines reads hdfs-audit.log and returns each line's fields after
// the log4j prefix, checking the prefix's shape.
func auditLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prefix := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO FSNamesystem\.audit: `)
	var out []string
	for _, ln := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		loc := prefix.FindStringIndex(ln)
		if loc == nil {
			t.Fatalf("line without log4j's audit prefix: %q", ln)
		}
		out = append(out, ln[loc[1]:])
	}
	return out
}

// TestAuditLog makes real RPC and WebHDFS calls to a NameNode and reads
// hdfs-audit.log: each namespace call is a line in Hadoop's format, a
// permission denial is allowed=false, WebHDFS calls say proto=webhdfs,
// block-level calls are not logged.
func TestAuditLog(t *testing.T) {
	logDir := t.TempDir()
	cfg := nntest.Config(t, 1, conf.KeyValue{Key: conf.HadoopLogDir, Value: logDir},
		conf.KeyValue{Key: conf.HadoopCallerContextEnabled, Value: "true"})
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	su := nn.SuperUser()
	c := rpcClient(t, nn.Addr, su, namenode.ClientProtocolName)
	if err := mkdir(t, c, "/p", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "create", createReq("/p/f", "c1"), &hdfs.CreateResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "rename", &hdfs.RenameRequestProto{Src: proto.String("/p/f"), Dst: proto.String("/p/g")}, &hdfs.RenameResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "setPermission", &hdfs.SetPermissionRequestProto{Src: proto.String("/p/g"), Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o600)}}, &hdfs.SetPermissionResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "setQuota", &hdfs.SetQuotaRequestProto{Path: proto.String("/p"), NamespaceQuota: proto.Uint64(100), StoragespaceQuota: proto.Uint64(1<<63 - 1)}, &hdfs.SetQuotaResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/p")}, &hdfs.AllowSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "createSnapshot", &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String("/p"), SnapshotName: proto.String("s1")}, &hdfs.CreateSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	joe := rpcClient(t, nn.Addr, "joe", namenode.ClientProtocolName)
	err := mkdir(t, joe, "/p/j", 0o755)
	expectRemote(t, err, remoteerr.ClassAccessControl, "Permission denied")
	if err := call(t, joe, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/p")}, &hdfs.GetFileInfoResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "delete", &hdfs.DeleteRequestProto{Src: proto.String("/p/g"), Recursive: proto.Bool(false)}, &hdfs.DeleteResponseProto{}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + nn.HTTPAddr().String()
	if code, body := webPut(t, base+"/webhdfs/v1/p/w?op=MKDIRS&permission=711&user.name="+su); code != http.StatusOK {
		t.Fatalf("WebHDFS MKDIRS: %d %s", code, body)
	}
	if code, body := webPut(t, base+"/webhdfs/v1/p/x?op=MKDIRS&user.name=bob"); code != http.StatusForbidden {
		t.Fatalf("WebHDFS MKDIRS by bob: %d %s, want 403", code, body)
	}
	if code, body := webtest.Get(t, base+"/webhdfs/v1/p?op=LISTSTATUS&user.name=bob"); code != http.StatusOK {
		t.Fatalf("WebHDFS LISTSTATUS: %d %s", code, body)
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}

	ugi := su + " (auth:SIMPLE)"
	want := []string{
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/p\tdst=null\tperm=" + su + ":supergroup:rwxr-xr-x\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=create\tsrc=/p/f\tdst=null\tperm=" + su + ":supergroup:rw-r--r--\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=rename\tsrc=/p/f\tdst=/p/g\tperm=" + su + ":supergroup:rw-r--r--\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=setPermission\tsrc=/p/g\tdst=null\tperm=" + su + ":supergroup:rw-------\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=setQuota\tsrc=/p\tdst=null\tperm=null\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=allowSnapshot\tsrc=/p\tdst=null\tperm=null\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=createSnapshot\tsrc=/p\tdst=/p/.snapshot/s1\tperm=null\tproto=rpc",
		"allowed=false\tugi=joe (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/p/j\tdst=null\tperm=null\tproto=rpc",
		"allowed=true\tugi=joe (auth:SIMPLE)\tip=/127.0.0.1\tcmd=getfileinfo\tsrc=/p\tdst=null\tperm=null\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=delete\tsrc=/p/g\tdst=null\tperm=null\tproto=rpc",
		"allowed=true\tugi=" + ugi + "\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/p/w\tdst=null\tperm=" + su + ":supergroup:rwx--x--x\tproto=webhdfs",
		"allowed=false\tugi=bob (auth:SIMPLE)\tip=/127.0.0.1\tcmd=mkdirs\tsrc=/p/x\tdst=null\tperm=null\tproto=webhdfs",
		"allowed=true\tugi=bob (auth:SIMPLE)\tip=/127.0.0.1\tcmd=listStatus\tsrc=/p\tdst=null\tperm=null\tproto=webhdfs",
	}
	got := auditLines(t, filepath.Join(logDir, "hdfs-audit.log"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("hdfs-audit.log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func webPut(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for range 1000 {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestAuditLogOff: without a log directory or with hdfs.audit.logger
// naming the NullAppender there is no audit file; a bad logger is refused
// naming the key.
func TestAuditLogOff(t *testing.T) {
	logDir := t.TempDir()
	cfg := nntest.Config(t, 1, conf.KeyValue{Key: conf.HadoopLogDir, Value: logDir},
		conf.KeyValue{Key: conf.HDFSAuditLogger, Value: "INFO,NullAppender"})
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	c := rpcClient(t, nn.Addr, nn.SuperUser(), namenode.ClientProtocolName)
	if err := mkdir(t, c, "/p", 0o755); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	if _, err := os.Stat(filepath.Join(logDir, "hdfs-audit.log")); err == nil {
		t.Fatal("hdfs-audit.log written with hdfs.audit.logger=INFO,NullAppender")
	}
	_, err := namenode.ConfigFrom(conf.Defaults().With(conf.KeyValue{Key: conf.DFSNameNodeAuditLoggers, Value: "com.example.MyLogger"}))
	if err == nil || !strings.Contains(err.Error(), conf.DFSNameNodeAuditLoggers) {
		t.Fatalf("a custom audit logger class: %v, want an error naming %s", err, conf.DFSNameNodeAuditLoggers)
	}
}
