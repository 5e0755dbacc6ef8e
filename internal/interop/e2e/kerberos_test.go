package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"

	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// TestKerberosCluster runs a NameNode and two DataNodes as processes with
// hadoop.security.authentication=kerberos, hadoop.rpc.protection=privacy,
// block access tokens and dfs.data.transfer.protection=privacy against a
// real MIT KDC: every daemon logs in with its keytab, the DataNodes
// register over Kerberos, and a user with a ticket (kinit) writes, lists
// and reads with the stock Go client and with `hdfs dfs`; a recording
// proxy between the stock client and the DataNodes sees none of the
// file's plaintext; without a ticket, with SIMPLE or with a wrong
// principal the calls are refused with clear errors.
func TestKerberosCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes; skipped with -short")
	}
	kdc := krbtest.Start(t)
	realm := krbtest.Realm
	// The NameNode's _HOST is the name of its address (127.0.0.1:
	// localhost); clients name the host they dial. SPNEGO for WebHDFS
	// has the HTTP principal in the NameNode's keytab; the daemons'
	// principals map to the superuser hdfs. Kerberos clients get privacy
	// (the strongest level both sides have); delegation-token clients,
	// whose DIGEST-MD5 here does only authentication, get that.
	extra := kdc.Secure(t, krbtest.Services{Hosts: []string{dnHost(0), dnHost(1)}, DataNodes: true, HTTP: true,
		Protection: "privacy,authentication", DataTransferProtection: "privacy"}).Map()
	// Blocks of 1 MiB: the file spans several.
	extra["dfs.blocksize"] = "1048576"
	hdfsCC := kdc.Kinit("hdfs", kdc.AddPrincipal("hdfs"))
	aliceCC := kdc.Kinit("alice", kdc.AddPrincipal("alice"))
	t.Setenv("KRB5CCNAME", "FILE:"+hdfsCC) // the operator: the superuser "hdfs"

	nnHTTP := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	extra["dfs.namenode.http-address"] = nnHTTP
	c := startCluster(t, 2, extra)
	c.dfs(t, "-mkdir", "-p", "/user/alice")
	c.dfs(t, "-chown", "alice", "/user/alice")

	_, port, _ := net.SplitHostPort(c.nnAddr)
	nn := net.JoinHostPort("localhost", port)
	capture := &testtool.Capture{}
	sc, err := stock.NewClient(stock.ClientOptions{Addresses: []string{nn},
		KerberosClient: kdc.ClientFromCCache(aliceCC), KerberosServicePrincipleName: "nn/_HOST",
		DataTransferProtection: "privacy", DatanodeDialFunc: capture.Dial})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	// 3 MiB by default; HDFSGO_LONG=1 writes and reads the 1 GiB
	// (about 4 GiB of test memory with the capture).
	size := 3<<20 + 12345
	if os.Getenv("HDFSGO_LONG") != "" {
		size = 1<<30 + 12345
	}
	data := make([]byte, size)
	rand.Read(data)
	marker := []byte("a line of the file that must not cross the wire in the clear")
	for i := 0; i+len(marker) < len(data); i += 4096 {
		copy(data[i:], marker)
	}
	w, err := sc.Create("/user/alice/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := sc.ReadFile("/user/alice/f")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), wrote %d", len(got), err, len(data))
	}
	if capture.Len() < 2*len(data) || capture.Contains(marker) {
		t.Errorf("capture of %d bytes (the file twice is %d): plaintext found %v", capture.Len(), 2*len(data), capture.Contains(marker))
	}
	checkVisibleLengthToken(t, kdc, aliceCC, nn, "/user/alice/f", int64(len(data)))
	infos, err := sc.ReadDir("/user/alice")
	if err != nil || len(infos) != 1 || infos[0].Name() != "f" {
		t.Fatalf("ReadDir: %v %v", infos, err)
	}
	if owner := infos[0].Sys().(*stock.FileStatus).GetOwner(); owner != "alice" {
		t.Errorf("file owned by %q, want alice (the ticket's user)", owner)
	}
	// The authenticated user is the one permissions check: alice may not
	// write in the superuser's /.
	if _, err := sc.Create("/not-alice"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("alice creating in /: %v, want permission denied", err)
	}

	// hdfs dfs as alice, from her ticket cache.
	aliceEnv := []string{"KRB5CCNAME=FILE:" + aliceCC}
	out, err := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-cat", "/user/alice/f")
	if err != nil || out != string(data) {
		t.Fatalf("hdfs dfs -cat as alice: %d bytes, %v", len(out), err)
	}
	local := filepath.Join(t.TempDir(), "g")
	if err := os.WriteFile(local, []byte("from the hdfs command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-put", local, "/user/alice/g"); err != nil {
		t.Fatalf("hdfs dfs -put as alice: %v\n%s", err, out)
	}
	if out, _ := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-ls", "/user/alice/g"); !strings.Contains(out, " alice ") {
		t.Errorf("ls: %s", out)
	}

	// hdfs fetchdt: fetch, print, renew, cancel; a cancelled token no
	// longer renews.
	dt := filepath.Join(t.TempDir(), "alice.token")
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"fetchdt", "--renewer", "alice", dt}, "Fetched token via hdfs://"},
		{[]string{"fetchdt", "--print", dt}, "HDFS_DELEGATION_TOKEN owner=alice@" + realm + ", renewer=alice"},
		{[]string{"fetchdt", "--renew", dt}, "Renewed token for "},
		{[]string{"fetchdt", "--cancel", dt}, "Cancelled token for "},
	} {
		out, err := c.runEnv(c.confDir("nn"), aliceEnv, step.args...)
		if err != nil || !strings.Contains(out, step.want) {
			t.Fatalf("hdfs %s: %v\n%s", strings.Join(step.args, " "), err, out)
		}
	}
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "fetchdt", "--renew", dt); err == nil || !strings.Contains(out, "Renewal request for unknown token") {
		t.Errorf("renewing a cancelled token: %v\n%s", err, out)
	}
	// A delegation token instead of a ticket (HADOOP_TOKEN_FILE_LOCATION,
	// no ticket cache): alice's identity over SASL DIGEST-MD5.
	dt2 := filepath.Join(t.TempDir(), "alice2.token")
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "fetchdt", dt2); err != nil {
		t.Fatalf("fetchdt: %v\n%s", err, out)
	}
	tokenEnv := []string{"HADOOP_TOKEN_FILE_LOCATION=" + dt2, "KRB5CCNAME=FILE:" + filepath.Join(kdc.Dir, "no-such-cache")}
	if out, err := c.runEnv(c.confDir("nn"), tokenEnv, "dfs", "-put", local, "/user/alice/by-token"); err != nil {
		t.Fatalf("hdfs dfs -put with a delegation token: %v\n%s", err, out)
	}
	if out, err := c.runEnv(c.confDir("nn"), tokenEnv, "dfs", "-ls", "/user/alice/by-token"); err != nil || !strings.Contains(out, " alice ") {
		t.Errorf("hdfs dfs -ls with a delegation token: %v\n%s", err, out)
	}

	// WebHDFS with SPNEGO from alice's ticket cache, then her delegation
	// token, which the NameNode's redirect carries to a DataNode.
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-put", local, "webhdfs://"+nnHTTP+"/user/alice/w"); err != nil {
		t.Errorf("hdfs dfs -put webhdfs:// as alice: %v\n%s", err, out)
	}
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-ls", "webhdfs://"+nnHTTP+"/user/alice"); err != nil ||
		!strings.Contains(out, " alice ") || !strings.Contains(out, "/user/alice/w") {
		t.Errorf("hdfs dfs -ls webhdfs:// as alice: %v\n%s", err, out)
	}
	if out, err := c.runEnv(c.confDir("nn"), aliceEnv, "dfs", "-cat", "webhdfs://"+nnHTTP+"/user/alice/w"); err != nil || out != "from the hdfs command\n" {
		t.Errorf("hdfs dfs -cat webhdfs:// as alice: %v\n%q", err, out)
	}

	// Refusals.
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no ticket", []string{"KRB5CCNAME=FILE:" + filepath.Join(kdc.Dir, "no-such-cache")}, []string{"dfs", "-ls", "/"},
			"no Kerberos ticket: cannot read the ticket cache"},
		{"no ticket, WebHDFS", []string{"KRB5CCNAME=FILE:" + filepath.Join(kdc.Dir, "no-such-cache")}, []string{"dfs", "-ls", "webhdfs://" + nnHTTP + "/"},
			"no Kerberos ticket: cannot read the ticket cache"},
		{"SIMPLE client, WebHDFS", aliceEnv, []string{"dfs", "-D", "hadoop.security.authentication=simple", "-ls", "webhdfs://" + nnHTTP + "/"},
			"Authentication required"},
		{"SIMPLE client", aliceEnv, []string{"dfs", "-D", "hadoop.security.authentication=simple", "-ls", "/"},
			"SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]"},
		{"wrong principal", aliceEnv, []string{"dfs", "-D", "dfs.namenode.kerberos.principal=jn/_HOST@" + realm, "-ls", "/"},
			"no Kerberos ticket for jn/localhost@" + realm},
		{"no common protection", aliceEnv, []string{"dfs", "-D", "hadoop.rpc.protection=integrity", "-ls", "/"},
			"No common protection layer between client and server"},
	} {
		out, err := c.runEnv(c.confDir("nn"), tc.env, tc.args...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: err=%v, output %q, want %q", tc.name, err, out, tc.want)
		}
	}
	// A ticket for a principal the NameNode's keytab lacks.
	kdc.AddPrincipal("nn/elsewhere@" + realm)
	other, err := stock.NewClient(stock.ClientOptions{Addresses: []string{nn},
		KerberosClient: kdc.ClientFromCCache(aliceCC), KerberosServicePrincipleName: "nn/elsewhere"})
	if err == nil {
		_, err = other.Stat("/")
		other.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "FATAL_UNAUTHORIZED") {
		t.Errorf("ticket for a principal not in the keytab: %v", err)
	}
}

// checkVisibleLengthToken calls ClientDatanodeProtocol's
// getReplicaVisibleLength on a DataNode holding the first block of file:
// authenticated with the block's token it answers the length; with a
// Kerberos ticket but no token, or with another block's token, it
// refuses, as Hadoop's checkReadAccess does.
func checkVisibleLengthToken(t *testing.T, kdc *krbtest.KDC, cc, nn, file string, size int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	user := kdc.ClientFromCCache(cc)
	realm := krbtest.Realm
	call := func(cfg ipc.ClientConfig, method string, req, resp proto.Message) error {
		c := ipc.NewClient(cfg)
		defer c.Close()
		return c.Call(ctx, method, req, resp)
	}
	var locs hdfs.GetBlockLocationsResponseProto
	if err := call(ipc.ClientConfig{Addresses: []string{nn}, Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol",
		Kerberos: &security.Initiator{Client: user, Principal: "nn/_HOST@" + realm}},
		"getBlockLocations", &hdfs.GetBlockLocationsRequestProto{Src: proto.String(file), Offset: proto.Uint64(0), Length: proto.Uint64(uint64(size))}, &locs); err != nil {
		t.Fatal(err)
	}
	blocks := locs.GetLocations().GetBlocks()
	if len(blocks) == 0 || len(blocks[0].GetLocs()) == 0 {
		t.Fatalf("no located blocks for %s", file)
	}
	lb := blocks[0]
	id := lb.GetLocs()[0].GetId()
	dn := net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetIpcPort())))
	req := &hdfs.GetReplicaVisibleLengthRequestProto{Block: lb.GetB()}
	const cdp = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
	var resp hdfs.GetReplicaVisibleLengthResponseProto
	if err := call(ipc.ClientConfig{Addresses: []string{dn}, Protocol: cdp, Token: lb.GetBlockToken(), TokenUser: "alice"},
		"getReplicaVisibleLength", req, &resp); err != nil || int64(resp.GetLength()) != int64(lb.GetB().GetNumBytes()) {
		t.Errorf("getReplicaVisibleLength with the block token: %d, %v (block of %d bytes)", resp.GetLength(), err, lb.GetB().GetNumBytes())
	}
	if err := call(ipc.ClientConfig{Addresses: []string{dn}, Protocol: cdp, Kerberos: &security.Initiator{Client: user, Principal: "dn/_HOST@" + realm}},
		"getReplicaVisibleLength", req, &resp); err == nil || !strings.Contains(err.Error(), "BlockTokenIdentifier") {
		t.Errorf("getReplicaVisibleLength with a ticket and no token: %v", err)
	}
	if len(blocks) > 1 {
		if err := call(ipc.ClientConfig{Addresses: []string{dn}, Protocol: cdp, Token: blocks[1].GetBlockToken(), TokenUser: "alice"},
			"getReplicaVisibleLength", req, &resp); err == nil || !strings.Contains(err.Error(), "doesn't apply to block") {
			t.Errorf("getReplicaVisibleLength with another block's token: %v", err)
		}
	}
}
