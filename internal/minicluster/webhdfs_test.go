package minicluster

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/web/webtest"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// webClient is a WebHDFS client made of net/http calls, following no
// redirect by itself so that each step shows.
type webClient struct {
	t    *testing.T
	base string // http://nn-web
	hc   *http.Client
}

func newWebClient(t *testing.T, c *Cluster) *webClient {
	return &webClient{t: t, base: "http://" + c.NameNode().HTTPAddr().String(), hc: &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends one request to url and returns the status, headers and body.
func (w *webClient) do(method, url string, body []byte) (int, http.Header, []byte) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// op sends op to the NameNode for path with the query q.
func (w *webClient) op(method, path, q string) (int, []byte) {
	w.t.Helper()
	code, _, b := w.do(method, w.base+webhdfs.Prefix+path+"?"+q, nil)
	return code, b
}

// twoStep sends a data op to the NameNode, checks the 307, and sends body
// to the Location.
func (w *webClient) twoStep(method, path, q string, body []byte) (int, http.Header, []byte) {
	w.t.Helper()
	code, h, b := w.do(method, w.base+webhdfs.Prefix+path+"?"+q, nil)
	if code != http.StatusTemporaryRedirect {
		return code, h, b
	}
	loc := h.Get("Location")
	if !strings.Contains(loc, "namenoderpcaddress=") {
		w.t.Fatalf("%s %s: Location %q lacks namenoderpcaddress", method, path, loc)
	}
	return w.do(method, loc, body)
}

func wantRemote(t *testing.T, what string, code int, body []byte, wantCode int, wantException string) webhdfs.RemoteException {
	t.Helper()
	var e webhdfs.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: body %q is not a RemoteException: %v", what, body, err)
	}
	if code != wantCode || e.RemoteException.Exception != wantException {
		t.Fatalf("%s: %d %s, want %d %s (%s)", what, code, e.RemoteException.Exception, wantCode, wantException, body)
	}
	return e.RemoteException
}

func decode[T any](t *testing.T, what string, code int, body []byte) T {
	t.Helper()
	var v T
	if code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", what, code, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %q: %v", what, body, err)
	}
	return v
}

// TestWebHDFSOps: every namespace operation over /webhdfs/v1 on a real
// NameNode and DataNodes, its JSON answer, and the errors as Hadoop's
// RemoteException with Hadoop's status codes.
func TestWebHDFSOps(t *testing.T) {
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), DataNodes: 2,
		Conf: nil})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := newWebClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}

	super := c.NameNode().SuperUser()
	mustOp(t, w, "PUT", "/d", "op=MKDIRS&user.name="+super)
	code, b := w.op("PUT", "/d", "op=SETOWNER&owner=bob&user.name=alice")
	wantRemote(t, "SETOWNER by a non-superuser", code, b, 403, "AccessControlException")
	if code, b := w.op("PUT", "/d", "op=SETOWNER&owner=alice&group=staff&user.name="+super); code != http.StatusOK || len(b) != 0 {
		t.Fatalf("SETOWNER: %d %s", code, b)
	}
	code, b = w.op("PUT", "/d/e", "op=MKDIRS&user.name=alice&permission=750")
	if decode[map[string]bool](t, "MKDIRS", code, b)["boolean"] != true {
		t.Fatalf("MKDIRS: %s", b)
	}
	st := decode[webhdfs.FileStatusBody](t, "GETFILESTATUS", code, mustOp(t, w, "GET", "/d/e", "op=GETFILESTATUS&user.name=alice")).FileStatus
	if st.Type != "DIRECTORY" || st.Owner != "alice" || st.Permission != "750" || st.PathSuffix != "" {
		t.Fatalf("GETFILESTATUS %+v", st)
	}

	data := bytes.Repeat([]byte("0123456789abcdef"), 100000) // 1.6 MB, two blocks of 1 MiB
	code, h, b := w.twoStep("PUT", "/d/e/f", "op=CREATE&user.name=alice&blocksize=1048576&replication=2&permission=640", data)
	if code != http.StatusCreated || !strings.HasSuffix(h.Get("Location"), "/d/e/f") {
		t.Fatalf("CREATE: %d %v %s", code, h, b)
	}
	code, _, b = w.twoStep("POST", "/d/e/f", "op=APPEND&user.name=alice", []byte("tail"))
	if code != http.StatusOK {
		t.Fatalf("APPEND: %d %s", code, b)
	}
	data = append(data, "tail"...)
	code, _, b = w.twoStep("GET", "/d/e/f", "op=OPEN&user.name=alice", nil)
	if code != http.StatusOK || !bytes.Equal(b, data) {
		t.Fatalf("OPEN: %d, %d bytes, want %d", code, len(b), len(data))
	}
	code, _, b = w.twoStep("GET", "/d/e/f", "op=OPEN&user.name=alice&offset=1048570&length=20", nil)
	if code != http.StatusOK || !bytes.Equal(b, data[1048570:1048590]) {
		t.Fatalf("OPEN offset/length: %d %q", code, b)
	}
	st = decode[webhdfs.FileStatusBody](t, "GETFILESTATUS", 200, mustOp(t, w, "GET", "/d/e/f", "op=GETFILESTATUS&user.name=alice")).FileStatus
	if st.Type != "FILE" || st.Length != int64(len(data)) || st.Replication != 2 || st.BlockSize != 1<<20 || st.Permission != "640" {
		t.Fatalf("GETFILESTATUS file %+v", st)
	}
	list := decode[webhdfs.ListStatusBody](t, "LISTSTATUS", 200, mustOp(t, w, "GET", "/d/e", "op=LISTSTATUS&user.name=alice")).FileStatuses.FileStatus
	if len(list) != 1 || list[0].PathSuffix != "f" || list[0].Length != int64(len(data)) {
		t.Fatalf("LISTSTATUS %+v", list)
	}
	one := decode[webhdfs.ListStatusBody](t, "LISTSTATUS of a file", 200, mustOp(t, w, "GET", "/d/e/f", "op=LISTSTATUS&user.name=alice")).FileStatuses.FileStatus
	if len(one) != 1 || one[0].PathSuffix != "" || one[0].Type != "FILE" {
		t.Fatalf("LISTSTATUS of a file %+v", one)
	}
	cs := decode[map[string]webhdfs.ContentSummary](t, "GETCONTENTSUMMARY", 200, mustOp(t, w, "GET", "/d", "op=GETCONTENTSUMMARY&user.name=alice"))["ContentSummary"]
	if cs.FileCount != 1 || cs.DirectoryCount != 2 || cs.Length != int64(len(data)) || cs.SpaceConsumed != 2*int64(len(data)) || cs.Quota != -1 {
		t.Fatalf("GETCONTENTSUMMARY %+v", cs)
	}
	qu := decode[map[string]webhdfs.QuotaUsage](t, "GETQUOTAUSAGE", 200, mustOp(t, w, "GET", "/d", "op=GETQUOTAUSAGE&user.name=alice"))["QuotaUsage"]
	if qu.FileAndDirectoryCount != 3 || qu.Quota != -1 || qu.SpaceConsumed != 2*int64(len(data)) {
		t.Fatalf("GETQUOTAUSAGE %+v", qu)
	}
	mustOp(t, w, "PUT", "/d/a", "op=MKDIRS&user.name=alice")
	batch := decode[webhdfs.DirectoryListingBody](t, "LISTSTATUS_BATCH", 200, mustOp(t, w, "GET", "/d", "op=LISTSTATUS_BATCH&startAfter=a&user.name=alice")).DirectoryListing
	if l := batch.PartialListing.FileStatuses.FileStatus; len(l) != 1 || l[0].PathSuffix != "e" || batch.RemainingEntries != 0 {
		t.Fatalf("LISTSTATUS_BATCH %+v", batch)
	}
	if p := decode[map[string]string](t, "GETTRASHROOT", 200, mustOp(t, w, "GET", "/d", "op=GETTRASHROOT&user.name=alice"))["Path"]; p != "/user/alice/.Trash" {
		t.Fatalf("GETTRASHROOT %q", p)
	}
	code, b = w.op("GET", "/d/e/f", "op=GETFILECHECKSUM&user.name=alice")
	if code != http.StatusTemporaryRedirect {
		t.Fatalf("GETFILECHECKSUM: %d %s", code, b)
	}
	code, _, b = w.twoStep("GET", "/d/e/f", "op=GETFILECHECKSUM&user.name=alice", nil)
	sum := decode[map[string]webhdfs.FileChecksum](t, "GETFILECHECKSUM", code, b)["FileChecksum"]
	if !strings.HasPrefix(sum.Algorithm, "MD5-of-") || sum.Length != 28 || len(sum.Bytes) != 56 {
		t.Fatalf("GETFILECHECKSUM %+v", sum)
	}
	// Errors.
	code, b = w.op("GET", "/nope", "op=GETFILESTATUS")
	wantRemote(t, "GETFILESTATUS of a missing file", code, b, 404, "FileNotFoundException")
	code, b = w.op("GET", "/d/e", "op=LISTSTATUS&user.name=bob")
	wantRemote(t, "LISTSTATUS without permission", code, b, 403, "AccessControlException")
	code, _, b = w.twoStep("PUT", "/d/e/f", "op=CREATE&user.name=alice", []byte("x"))
	wantRemote(t, "CREATE over an existing file", code, b, 403, "FileAlreadyExistsException")
	code, b = w.op("GET", "/d", "op=FROB")
	wantRemote(t, "unknown op", code, b, 400, "IllegalArgumentException")
	code, b = w.op("GET", "/d", "op=GETECCODECS")
	wantRemote(t, "an op not served yet", code, b, 400, "UnsupportedOperationException")
	code, b = w.op("GET", "/d", "op=GETFILESTATUS&user.name=alice&doas=root")
	wantRemote(t, "doas", code, b, 403, "AuthorizationException")
	code, b = w.op("GET", "/d", "op=GETFILESTATUS&offset=x")
	wantRemote(t, "bad offset", code, b, 400, "IllegalArgumentException")
	code, _, b = w.twoStep("GET", "/d/e/f", "op=OPEN&user.name=alice&offset=99999999", nil)
	wantRemote(t, "OPEN past the end", code, b, 403, "IOException")

	// Namespace changes.
	code, b = w.op("PUT", "/d/e/f", "op=RENAME&user.name=alice&destination=/d/e/g")
	if decode[map[string]bool](t, "RENAME", code, b)["boolean"] != true {
		t.Fatalf("RENAME %s", b)
	}
	for _, q := range []string{"op=SETPERMISSION&permission=600", "op=SETTIMES&modificationtime=1000000"} {
		code, b = w.op("PUT", "/d/e/g", q+"&user.name=alice")
		if code != http.StatusOK || len(b) != 0 {
			t.Fatalf("%s: %d %s", q, code, b)
		}
	}
	st = decode[webhdfs.FileStatusBody](t, "GETFILESTATUS", 200, mustOp(t, w, "GET", "/d/e/g", "op=GETFILESTATUS&user.name=alice")).FileStatus
	if st.Permission != "600" || st.ModificationTime != 1000000 {
		t.Fatalf("after SETPERMISSION/SETTIMES %+v", st)
	}
	code, b = w.op("PUT", "/d/e/g", "op=SETREPLICATION&replication=1&user.name=alice")
	if decode[map[string]bool](t, "SETREPLICATION", code, b)["boolean"] != true {
		t.Fatalf("SETREPLICATION %s", b)
	}
	code, b = w.op("POST", "/d/e/g", "op=TRUNCATE&newlength=1048576&user.name=alice")
	if decode[map[string]bool](t, "TRUNCATE", code, b)["boolean"] != true {
		t.Fatalf("TRUNCATE %s", b)
	}
	code, _, b = w.twoStep("PUT", "/d/e/h", "op=CREATE&blocksize=1048576&user.name=alice", []byte("more"))
	if code != http.StatusCreated {
		t.Fatalf("CREATE h: %d %s", code, b)
	}
	code, _, b = w.twoStep("PUT", "/d/e/h2", "op=CREATE&blocksize=1048576&user.name=alice", []byte("h2"))
	if code != http.StatusCreated {
		t.Fatalf("CREATE h2: %d %s", code, b)
	}
	code, b = w.op("PUT", "/d/e/h2", "op=RENAME&destination=/d/e/h&renameoptions=NONE&user.name=alice")
	wantRemote(t, "RENAME onto a file, renameoptions=NONE", code, b, 403, "FileAlreadyExistsException")
	if code, b = w.op("PUT", "/d/e/h2", "op=RENAME&destination=/d/e/h&renameoptions=OVERWRITE&user.name=alice"); code != http.StatusOK || len(b) != 0 {
		t.Fatalf("RENAME with renameoptions=OVERWRITE: %d %s", code, b)
	}
	code, b = w.op("POST", "/d/e/g", "op=CONCAT&sources=/d/e/h&user.name=alice")
	if code != http.StatusOK {
		t.Fatalf("CONCAT %d %s", code, b)
	}
	code, _, b = w.twoStep("GET", "/d/e/g", "op=OPEN&user.name=alice", nil)
	if code != 200 || !bytes.Equal(b, append(append([]byte{}, data[:1048576]...), "h2"...)) {
		t.Fatalf("after TRUNCATE+CONCAT: %d, %d bytes", code, len(b))
	}
	code, b = w.op("GET", "/d/e", "op=GETACLSTATUS&user.name=alice")
	if string(b) != `{"AclStatus":{"entries":[],"group":"staff","owner":"alice","permission":"750","stickyBit":false}}`+"\n" || code != 200 {
		t.Fatalf("GETACLSTATUS: %d %s", code, b)
	}
	// Snapshottable directories: the superuser's to allow and disallow.
	code, b = w.op("PUT", "/d/e", "op=ALLOWSNAPSHOT&user.name=alice")
	wantRemote(t, "ALLOWSNAPSHOT by a non-superuser", code, b, 403, "AccessControlException")
	for _, op := range []string{"ALLOWSNAPSHOT", "DISALLOWSNAPSHOT", "ALLOWSNAPSHOT"} {
		if code, b := w.op("PUT", "/d/e", "op="+op+"&user.name="+super); code != http.StatusOK || len(b) != 0 {
			t.Fatalf("%s: %d %s", op, code, b)
		}
	}
	// Snapshots: taken by the directory's owner, diffed, renamed, deleted.
	code, b = w.op("PUT", "/d/e", "op=CREATESNAPSHOT&snapshotname=s1&user.name=alice")
	if decode[map[string]string](t, "CREATESNAPSHOT", code, b)["Path"] != "/d/e/.snapshot/s1" {
		t.Fatalf("CREATESNAPSHOT %s", b)
	}
	code, b = w.op("PUT", "/d/e", "op=CREATESNAPSHOT&snapshotname=s1&user.name=alice")
	wantRemote(t, "CREATESNAPSHOT of a taken name", code, b, 403, "SnapshotException")
	if code, b := w.op("PUT", "/d/e", "op=RENAMESNAPSHOT&oldsnapshotname=s1&snapshotname=s2&user.name=alice"); code != http.StatusOK || len(b) != 0 {
		t.Fatalf("RENAMESNAPSHOT: %d %s", code, b)
	}
	code, b = w.op("GET", "/d/e", "op=GETSNAPSHOTDIFF&fromsnapshot=s2&tosnapshot=&user.name=alice")
	if got := strings.TrimSpace(string(b)); code != http.StatusOK || got != `{"SnapshotDiffReport":{"diffList":[],"fromSnapshot":"s2","snapshotRoot":"/d/e","toSnapshot":""}}` {
		t.Fatalf("GETSNAPSHOTDIFF: %d %s", code, b)
	}
	if code, b := w.op("DELETE", "/d/e", "op=DELETESNAPSHOT&snapshotname=s2&user.name=alice"); code != http.StatusOK || len(b) != 0 {
		t.Fatalf("DELETESNAPSHOT: %d %s", code, b)
	}
	if code, b := w.op("PUT", "/d/e", "op=DISALLOWSNAPSHOT&user.name="+super); code != http.StatusOK || len(b) != 0 {
		t.Fatalf("DISALLOWSNAPSHOT: %d %s", code, b)
	}
	code, b = w.op("DELETE", "/d/e", "op=DELETE&user.name=alice")
	wantRemote(t, "DELETE of a non-empty dir, not recursive", code, b, 403, "PathIsNotEmptyDirectoryException")
	code, b = w.op("DELETE", "/d/e", "op=DELETE&recursive=true&user.name=alice")
	if decode[map[string]bool](t, "DELETE", code, b)["boolean"] != true {
		t.Fatalf("DELETE %s", b)
	}
	code, b = w.op("GET", "/", "op=GETHOMEDIRECTORY&user.name=alice")
	if decode[map[string]string](t, "GETHOMEDIRECTORY", code, b)["Path"] != "/user/alice" {
		t.Fatalf("GETHOMEDIRECTORY %s", b)
	}
	code, b = w.op("GET", "/", "op=GETSERVERDEFAULTS")
	if d := decode[map[string]webhdfs.ServerDefaults](t, "GETSERVERDEFAULTS", code, b)["FsServerDefaults"]; d.BlockSize <= 0 || d.BytesPerChecksum != 512 {
		t.Fatalf("GETSERVERDEFAULTS %s", b)
	}
	code, b = w.op("PUT", "/x", "op=CREATE&noredirect=true")
	if loc := decode[map[string]string](t, "CREATE noredirect", code, b)["Location"]; !strings.HasPrefix(loc, "http://") {
		t.Fatalf("CREATE noredirect %s", b)
	}
}

func mustOp(t *testing.T, w *webClient, method, path, q string) []byte {
	t.Helper()
	code, b := w.op(method, path, q)
	if code != http.StatusOK {
		t.Fatalf("%s %s?%s: %d %s", method, path, q, code, b)
	}
	return b
}

// TestNameNodeMetrics: NameNodeActivity and the RPC bean count client
// calls made over RPC and WebHDFS, and /prom (enabled by
// hadoop.prometheus.endpoint.enabled) shows every bean's figures under
// Hadoop's Prometheus names.
func TestNameNodeMetrics(t *testing.T) {
	c, err := Start(context.Background(), Options{Dir: t.TempDir(), DataNodes: 1,
		Conf: []conf.KeyValue{{Key: conf.HadoopPrometheusEndpointEnabled, Value: "true"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitActive(ctx); err != nil {
		t.Fatal(err)
	}
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNode().RPCAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.WriteFile(ctx, "/a", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.ReadFile(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	w := newWebClient(t, c)
	w.twoStep("PUT", "/b", "op=CREATE&user.name="+fsys.User(), []byte("y"))
	mustOp(t, w, "GET", "/", "op=LISTSTATUS")
	mustOp(t, w, "GET", "/a", "op=GETFILESTATUS")
	mustOp(t, w, "DELETE", "/b", "op=DELETE&user.name="+fsys.User())

	base := "http://" + c.NameNode().HTTPAddr().String()
	act := webtest.Bean(t, base, "Hadoop:service=NameNode,name=NameNodeActivity")
	for name, want := range map[string]float64{"CreateFileOps": 2, "FilesCreated": 2, "DeleteFileOps": 1, "FilesDeleted": 1} {
		if act[name] != want {
			t.Errorf("NameNodeActivity %s = %v, want %v", name, act[name], want)
		}
	}
	for _, name := range []string{"GetBlockLocations", "GetListingOps", "FileInfoOps", "AddBlockOps", "TransactionsNumOps", "SyncsNumOps"} {
		if v, _ := act[name].(float64); v < 1 {
			t.Errorf("NameNodeActivity %s = %v, want at least 1", name, act[name])
		}
	}
	if _, ok := act["SyncsAvgTime"].(float64); !ok {
		t.Errorf("NameNodeActivity SyncsAvgTime = %v", act["SyncsAvgTime"])
	}
	rpc := webtest.Bean(t, base, "Hadoop:service=NameNode,name=RpcActivityForPort*")
	for _, name := range []string{"RpcQueueTimeAvgTime", "RpcProcessingTimeAvgTime", "CallQueueLength", "NumOpenConnections"} {
		if _, ok := rpc[name].(float64); !ok {
			t.Errorf("RPC bean %s = %v", name, rpc[name])
		}
	}
	if v, _ := rpc["RpcProcessingTimeNumOps"].(float64); v < 5 {
		t.Errorf("RpcProcessingTimeNumOps = %v", rpc["RpcProcessingTimeNumOps"])
	}
	code, body := webtest.Get(t, base+"/prom")
	for _, want := range []string{"# TYPE fs_namesystem_files_total gauge\n", "\nfs_namesystem_files_total{", "\nname_node_activity_create_file_ops{", " 2\n",
		"\nrpc_rpc_queue_time_avg_time{", "\nrpc_call_queue_length{"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/prom: %d, lacks %q:\n%s", code, want, body)
		}
	}
	code, body = webtest.Get(t, base+"/jmx?qry=Hadoop:service=NameNode,name=NameNodeActivity&callback=f")
	if code != http.StatusOK || !strings.HasPrefix(body, "f({") || !strings.Contains(body, `"CreateFileOps": 2`) {
		t.Errorf("/jmx?callback=f: %d %s", code, body)
	}
}
