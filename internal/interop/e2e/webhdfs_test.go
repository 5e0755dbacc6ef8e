package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// curlInstall is how the curl tests' tool is installed.
const curlInstall = "apt-get install -y curl"

// NPMDirEnv names the directory where the npm package webhdfs is
// installed (its node_modules is searched); .ci/run installs it there.
const NPMDirEnv = "HDFSGO_NPM_DIR"

// npmDir is where the WebHDFS npm client is looked for.
func npmDir() string {
	if d := os.Getenv(NPMDirEnv); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "hdfsgo-npm")
}

// webCluster starts a cluster whose NameNode serves its web port on a known
// address and returns it with the WebHDFS base URL.
func webCluster(t *testing.T, extra map[string]string) (*cluster, string) {
	t.Helper()
	port := freePort(t, "127.0.0.1")
	site := map[string]string{
		"dfs.namenode.http-address": fmt.Sprintf("127.0.0.1:%d", port),
		"dfs.replication":           "2",
		"dfs.blocksize":             "1048576",
	}
	for k, v := range extra {
		site[k] = v
	}
	c := startCluster(t, 2, site)
	return c, fmt.Sprintf("http://127.0.0.1:%d/webhdfs/v1", port)
}

// curl runs curl with args and returns its standard output; -sS and a
// bound on the whole transfer are added.
func curl(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := testtool.Require(t, "curl", curlInstall)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-sS", "--max-time", "600"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// statusRE finds the status line of each answer curl -i printed.
var statusRE = regexp.MustCompile(`(?m)^HTTP/1\.1 (\d{3})`)

func statuses(out []byte) []string {
	var s []string
	for _, m := range statusRE.FindAllSubmatch(out, -1) {
		s = append(s, string(m[1]))
	}
	return s
}

// body is what follows the last header block of curl -i output.
func body(out []byte) []byte {
	i := bytes.LastIndex(out, []byte("\r\n\r\n"))
	if i < 0 {
		return out
	}
	return out[i+4:]
}

// TestWebHDFSCurl: curl -L against the NameNode's /webhdfs/v1: a two-step
// create (the 307 and its Location by hand, then curl -L in one go), an
// append, open with offset and length, list, status, rename, delete, and
// errors as RemoteException JSON with Hadoop's status codes.
func TestWebHDFSCurl(t *testing.T) {
	testtool.Require(t, "curl", curlInstall)
	parallel(t)
	c, base := webCluster(t, nil)
	u := "user.name=" + osUser(t)
	const size = 3<<20 + 123
	local, sum := randomFile(t, size, 11)

	// Step one by hand: the NameNode answers 307 and names a DataNode.
	out := curl(t, "-i", "-X", "PUT", base+"/w/a.bin?op=CREATE&"+u)
	if s := statuses(out); len(s) != 1 || s[0] != "307" {
		t.Fatalf("CREATE step one: %q", out)
	}
	m := regexp.MustCompile(`(?mi)^Location: (\S+)`).FindSubmatch(out)
	if m == nil || !strings.Contains(string(m[1]), "namenoderpcaddress=") {
		t.Fatalf("CREATE step one: no DataNode Location: %q", out)
	}
	out = curl(t, "-i", "-X", "PUT", "-T", local, string(m[1]))
	if s := statuses(out); s[len(s)-1] != "201" {
		t.Fatalf("CREATE step two: %q", out)
	}
	if got := c.ourCat(t, "/w/a.bin"); got != sum {
		t.Fatalf("created file differs: %s, want %s", got, sum)
	}
	// Both steps with -L.
	out = curl(t, "-i", "-L", "-X", "PUT", "-T", local, base+"/w/b.bin?op=CREATE&overwrite=true&replication=1&"+u)
	if s := statuses(out); len(s) < 2 || s[0] != "307" || s[len(s)-1] != "201" {
		t.Fatalf("CREATE -L: %v\n%q", s, out)
	}
	tail := filepath.Join(t.TempDir(), "tail")
	os.WriteFile(tail, []byte("appended tail\n"), 0o644)
	out = curl(t, "-i", "-L", "-X", "POST", "-T", tail, base+"/w/b.bin?op=APPEND&"+u)
	if s := statuses(out); s[len(s)-1] != "200" {
		t.Fatalf("APPEND: %q", out)
	}
	whole, _ := os.ReadFile(local)
	whole = append(whole, "appended tail\n"...)
	got := curl(t, "-L", base+"/w/b.bin?op=OPEN&"+u)
	if !bytes.Equal(got, whole) {
		t.Fatalf("OPEN: %d bytes, want %d (equal %v)", len(got), len(whole), bytes.Equal(got, whole))
	}
	got = curl(t, "-L", base+"/w/b.bin?op=OPEN&offset=1048000&length=2000&"+u)
	if !bytes.Equal(got, whole[1048000:1050000]) {
		t.Fatalf("OPEN offset/length: %d bytes, not the file's", len(got))
	}
	got = curl(t, "-L", base+"/w/b.bin?op=OPEN&offset="+fmt.Sprint(size)+"&"+u)
	if string(got) != "appended tail\n" {
		t.Fatalf("OPEN from the appended part: %q", got)
	}

	var list struct {
		FileStatuses struct {
			FileStatus []struct {
				PathSuffix  string `json:"pathSuffix"`
				Type        string `json:"type"`
				Length      int64  `json:"length"`
				Replication int    `json:"replication"`
			} `json:"FileStatus"`
		} `json:"FileStatuses"`
	}
	if err := json.Unmarshal(curl(t, base+"/w?op=LISTSTATUS&"+u), &list); err != nil {
		t.Fatal(err)
	}
	if l := list.FileStatuses.FileStatus; len(l) != 2 || l[0].PathSuffix != "a.bin" || l[0].Length != size ||
		l[1].PathSuffix != "b.bin" || l[1].Length != int64(len(whole)) || l[1].Replication != 1 || l[1].Type != "FILE" {
		t.Fatalf("LISTSTATUS: %+v", l)
	}
	if out := curl(t, "-X", "PUT", base+"/w/a.bin?op=RENAME&destination=/w/c.bin&"+u); string(out) != "{\"boolean\":true}\n" {
		t.Fatalf("RENAME: %q", out)
	}
	if !strings.Contains(c.dfs(t, "-ls", "/w"), "/w/c.bin") {
		t.Fatal("renamed file not listed by hdfs dfs -ls")
	}
	if out := curl(t, "-X", "DELETE", base+"/w/c.bin?op=DELETE&"+u); string(out) != "{\"boolean\":true}\n" {
		t.Fatalf("DELETE: %q", out)
	}

	// Extended attributes, storage policies and ACLs.
	for _, q := range []string{"op=SETXATTR&xattr.name=user.k&xattr.value=%22v%22&flag=CREATE", "op=SETSTORAGEPOLICY&storagepolicy=COLD",
		"op=MODIFYACLENTRIES&aclspec=user:bob:r-x"} {
		if out := curl(t, "-X", "PUT", base+"/w?"+q+"&"+u); len(out) != 0 {
			t.Fatalf("%s: %q", q, out)
		}
	}
	for q, want := range map[string]string{
		"op=GETXATTRS&xattr.name=user.k": "{\"XAttrs\":[{\"name\":\"user.k\",\"value\":\"\\\"v\\\"\"}]}\n",
		"op=LISTXATTRS":                  "{\"XAttrNames\":\"[\\\"user.k\\\"]\"}\n",
	} {
		if out := curl(t, base+"/w?"+q+"&"+u); string(out) != want {
			t.Fatalf("%s: %q, want %q", q, out, want)
		}
	}
	if out := curl(t, base+"/w?op=GETSTORAGEPOLICY&"+u); !bytes.Contains(out, []byte(`"name":"COLD"`)) {
		t.Fatalf("GETSTORAGEPOLICY: %q", out)
	}
	if out := curl(t, base+"/w?op=GETACLSTATUS&"+u); !bytes.Contains(out, []byte(`"user:bob:r-x"`)) {
		t.Fatalf("GETACLSTATUS: %q", out)
	}

	// Errors: the status line and the RemoteException body.
	for _, e := range []struct {
		args   []string
		status string
		body   string
	}{
		{[]string{base + "/w/c.bin?op=GETFILESTATUS&" + u}, "404",
			`{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /w/c.bin"}}`},
		{[]string{"-L", base + "/w/c.bin?op=OPEN&" + u}, "404",
			`{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /w/c.bin"}}`},
		{[]string{"-X", "PUT", base + "/w/x?op=MKDIRS&user.name=mallory"}, "403",
			`"javaClassName":"org.apache.hadoop.security.AccessControlException","message":"Permission denied: user=mallory, access=WRITE`},
		{[]string{"-L", "-X", "PUT", "-T", local, base + "/w/b.bin?op=CREATE&" + u}, "403",
			`"exception":"FileAlreadyExistsException"`},
		{[]string{base + "/w?op=NOSUCHOP&" + u}, "400",
			`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.NOSUCHOP"}}`},
		{[]string{base + "/w?op=GETXATTRS&xattr.name=user.nope&" + u}, "403",
			`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"At least one of the attributes provided was not found."}}`},
		{[]string{"-X", "PUT", base + "/w?op=SETSTORAGEPOLICY&storagepolicy=NOPE&" + u}, "400",
			`"message":"Cannot find a block policy with the name NOPE"`},
		{[]string{"-X", "PUT", base + "/w?op=SETACL&aclspec=user:bob:rwz&" + u}, "400",
			`"message":"Invalid permission in <aclSpec> : user:bob:rwz"`},
		{[]string{base + "/w?op=LISTSTATUS&user.name=alice&doas=bob"}, "403",
			`"message":"User: alice is not allowed to impersonate bob"`},
	} {
		out := curl(t, append([]string{"-i"}, e.args...)...)
		s := statuses(out)
		if s[len(s)-1] != e.status || !bytes.Contains(body(out), []byte(e.body)) ||
			!bytes.Contains(out, []byte("Content-Type: application/json")) {
			t.Errorf("curl %s: got %v\n%s\nwant %s and %s", strings.Join(e.args, " "), s, out, e.status, e.body)
		}
	}
}

// TestWebHDFSLarge: a file through WebHDFS and back is byte-identical:
// 48 MiB by default, 1 GiB with HDFSGO_LONG=1.
func TestWebHDFSLarge(t *testing.T) {
	testtool.Require(t, "curl", curlInstall)
	parallel(t)
	size := int64(48 << 20)
	if os.Getenv(longEnv) != "" {
		size = 1 << 30
	}
	c, base := webCluster(t, map[string]string{"dfs.blocksize": "16777216"})
	local, sum := randomFile(t, size, 12)
	u := "user.name=" + osUser(t)
	curl(t, "-L", "-X", "PUT", "-T", local, base+"/big?op=CREATE&"+u)
	out := filepath.Join(t.TempDir(), "back")
	curl(t, "-L", "-o", out, base+"/big?op=OPEN&buffersize=1048576&"+u)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	if n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		t.Fatalf("read back %d bytes (want %d), sha256 %x, want %s", n, size, h.Sum(nil), sum)
	}
	if got := c.ourCat(t, "/big"); got != sum {
		t.Fatalf("hdfs dfs -cat of the WebHDFS upload: %s, want %s", got, sum)
	}
}

// npmScript drives the npm package webhdfs (a Node.js client that speaks
// only REST) and prints one JSON line per step.
const npmScript = `
const WebHDFS = require('webhdfs');
const fs = require('fs');
const [host, port, user, local] = process.argv.slice(2);
const hdfs = WebHDFS.createClient({host, port, path: '/webhdfs/v1', user});
const mallory = WebHDFS.createClient({host, port, path: '/webhdfs/v1', user: 'mallory'});
const out = (step, v) => console.log(JSON.stringify({step, ...v}));
const p = (f) => new Promise((res) => f((err, v) => res({err: err ? err.message : null, v})));
(async () => {
  const data = fs.readFileSync(local);
  out('mkdir', await p(cb => hdfs.mkdir('/n', '755', cb)));
  out('upload', await p(cb => hdfs.writeFile('/n/up.bin', data, cb)));
  const dl = await p(cb => hdfs.readFile('/n/up.bin', cb));
  out('download', {err: dl.err, v: dl.v ? require('crypto').createHash('sha256').update(dl.v).digest('hex') : null});
  out('append', await p(cb => hdfs.appendFile('/n/up.bin', 'tail', cb)));
  const st = await p(cb => hdfs.stat('/n/up.bin', cb));
  out('status', {err: st.err, v: st.v && {type: st.v.type, length: st.v.length, owner: st.v.owner, permission: st.v.permission}});
  const ls = await p(cb => hdfs.readdir('/n', cb));
  out('list', {err: ls.err, v: ls.v && ls.v.map(f => f.pathSuffix + ':' + f.type)});
  out('rename', await p(cb => hdfs.rename('/n/up.bin', '/n/moved.bin', cb)));
  out('exists-old', {v: await new Promise(res => hdfs.exists('/n/up.bin', res))});
  out('delete', await p(cb => hdfs.unlink('/n/moved.bin', cb)));
  out('err-stat', await p(cb => hdfs.stat('/n/moved.bin', cb)));
  out('err-read', await p(cb => hdfs.readFile('/n/none', cb)));
  out('err-mkdir', await p(cb => mallory.mkdir('/n/m', cb)));
  out('err-create', await p(cb => hdfs.writeFile('/n', 'x', cb)));
})();
`

// TestWebHDFSNodeClient: the npm package webhdfs uploads, downloads,
// appends, lists, stats, renames and deletes, and gets the RemoteException
// messages as its errors.
func TestWebHDFSNodeClient(t *testing.T) {
	node := testtool.Require(t, "node", "apt-get install -y nodejs npm")
	dir := npmDir()
	install := "npm install --prefix " + dir + " webhdfs@1.2.0"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "webhdfs", "package.json")); err != nil {
		msg := "the npm package webhdfs is not installed in " + dir + " (install it with: " + install + "; " + NPMDirEnv + " names another directory)"
		if os.Getenv(testtool.RequireEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	parallel(t)
	c, base := webCluster(t, nil)
	_ = c
	hostPort := strings.TrimPrefix(strings.TrimSuffix(base, "/webhdfs/v1"), "http://")
	host, port, _ := strings.Cut(hostPort, ":")
	local, sum := randomFile(t, 2<<20+77, 13)
	script := filepath.Join(t.TempDir(), "client.js")
	if err := os.WriteFile(script, []byte(npmScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, host, port, osUser(t), local)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	steps := map[string]struct {
		Err *string         `json:"err"`
		V   json.RawMessage `json:"v"`
	}{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var s struct {
			Step string          `json:"step"`
			Err  *string         `json:"err"`
			V    json.RawMessage `json:"v"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("node output %q: %v", line, err)
		}
		steps[s.Step] = struct {
			Err *string         `json:"err"`
			V   json.RawMessage `json:"v"`
		}{s.Err, s.V}
	}
	ok := func(step, wantV string) {
		t.Helper()
		s, found := steps[step]
		if !found || s.Err != nil || (wantV != "" && string(s.V) != wantV) {
			e := ""
			if s.Err != nil {
				e = *s.Err
			}
			t.Errorf("%s: err %q, value %s; want no error and %s\n%s", step, e, s.V, wantV, stdout.String())
		}
	}
	fails := func(step, wantErr string) {
		t.Helper()
		s := steps[step]
		if s.Err == nil || !strings.Contains(*s.Err, wantErr) {
			t.Errorf("%s: error %v, want one containing %q", step, s.Err, wantErr)
		}
	}
	ok("mkdir", "")
	ok("upload", "")
	ok("download", `"`+sum+`"`)
	ok("append", "")
	ok("status", fmt.Sprintf(`{"type":"FILE","length":%d,"owner":%q,"permission":"755"}`, 2<<20+77+4, osUser(t)))
	ok("list", `["up.bin:FILE"]`)
	ok("rename", "")
	ok("exists-old", "false")
	ok("delete", "")
	fails("err-stat", "File does not exist: /n/moved.bin")
	fails("err-read", "File does not exist: /n/none")
	fails("err-mkdir", "Permission denied: user=mallory, access=WRITE")
	fails("err-create", "/n")
}

// TestWebHDFSScheme: `hdfs dfs` with webhdfs:// paths goes through the
// WebHDFS client: -mkdir, -put, -ls (the same lines as -ls of the hdfs://
// URI), -cat, -get, -mv, -rm, and FsShell's error for a missing path.
func TestWebHDFSScheme(t *testing.T) {
	parallel(t)
	c, base := webCluster(t, map[string]string{"fs.trash.interval": "0"})
	web := "webhdfs://" + strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/webhdfs/v1")
	rpc := "hdfs://" + c.nnAddr
	local, sum := randomFile(t, 2<<20+5, 14)

	c.dfs(t, "-mkdir", "-p", web+"/s/t")
	c.dfs(t, "-put", local, web+"/s/t")
	c.dfs(t, "-put", local, web+"/s/copy")
	if got := c.ourCat(t, "/s/t/"+filepath.Base(local)); got != sum {
		t.Fatalf("-put over webhdfs:// stored %s, want %s", got, sum)
	}
	webLs := c.dfs(t, "-ls", web+"/s")
	rpcLs := c.dfs(t, "-ls", rpc+"/s")
	if strings.ReplaceAll(webLs, web, rpc) != rpcLs || !strings.HasPrefix(webLs, "Found 2 items\n") {
		t.Fatalf("-ls over webhdfs://:\n%s\nover hdfs://:\n%s", webLs, rpcLs)
	}
	rootLs := c.dfs(t, "-ls", web+"/")
	if !strings.Contains(rootLs, " "+web+"/s\n") {
		t.Fatalf("-ls %s/:\n%s", web, rootLs)
	}
	cmd := exec.Command(hdfsBin, "--config", c.confDir("nn"), "dfs", "-cat", web+"/s/copy")
	cmd.Env = append(os.Environ(), "HADOOP_CONF_DIR=")
	if got := hashOf(t, cmd); got != sum {
		t.Fatalf("-cat over webhdfs://: %s, want %s", got, sum)
	}
	back := filepath.Join(t.TempDir(), "back")
	c.dfs(t, "-get", web+"/s/copy", back)
	if b, err := os.ReadFile(back); err != nil || fmt.Sprintf("%x", sha256.Sum256(b)) != sum {
		t.Fatalf("-get over webhdfs://: %v", err)
	}
	c.dfs(t, "-mv", web+"/s/copy", web+"/s/moved")
	if out := c.dfs(t, "-rm", web+"/s/moved"); out != "Deleted "+web+"/s/moved\n" {
		t.Fatalf("-rm: %q", out)
	}
	out, err := c.runErr(c.confDir("nn"), nil, "dfs", "-ls", web+"/s/moved")
	if err == nil || !strings.Contains(out, "ls: `"+web+"/s/moved': No such file or directory") {
		t.Fatalf("-ls of a removed file: %v %q", err, out)
	}
}

// TestDaemonlog: `hdfs daemonlog -getlevel` and `-setlevel` against the
// NameNode process's /logLevel change the level its logger logs at.
func TestDaemonlog(t *testing.T) {
	parallel(t)
	c, base := webCluster(t, nil)
	hostPort := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/webhdfs/v1")
	const class = "org.apache.hadoop.hdfs.server.namenode.NameNode"
	out := c.run(t, c.confDir("nn"), "daemonlog", "-getlevel", hostPort, class)
	want := "Connecting to http://" + hostPort + "/logLevel?log=" + class + "\n" +
		"Submitted Class Name: " + class + "\n" +
		"Log Class: log/slog (one logger for the whole daemon)\n" +
		"Effective Level: INFO\n"
	if out != want {
		t.Fatalf("-getlevel:\n%s\nwant\n%s", out, want)
	}
	// The NameNode logs each block report at DEBUG: none of the start-up
	// ones at INFO, the report of a restarted DataNode after -setlevel DEBUG.
	if log := c.nn.logText(); strings.Contains(log, `msg="block report"`) || !strings.Contains(log, "DataNode registered") {
		t.Fatalf("NameNode log at INFO:\n%s", log)
	}
	out = c.run(t, c.confDir("nn"), "daemonlog", "-setlevel", hostPort, class, "DEBUG")
	if !strings.Contains(out, "Setting Level to DEBUG ...\nEffective Level: DEBUG\n") {
		t.Fatalf("-setlevel:\n%s", out)
	}
	if out := c.run(t, c.confDir("nn"), "daemonlog", "-getlevel", hostPort, class); !strings.HasSuffix(out, "Effective Level: DEBUG\n") {
		t.Fatalf("-getlevel after -setlevel:\n%s", out)
	}
	c.kill(c.dns[0])
	c.startDataNode(0)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.nn.logText(), `msg="block report"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no DEBUG block report line after -setlevel DEBUG:\n%s", c.nn.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := c.runErr(c.confDir("nn"), nil, "daemonlog", "-setlevel", hostPort, class); err == nil {
		t.Fatal("daemonlog -setlevel without a level succeeded")
	}
}
