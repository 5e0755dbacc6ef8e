package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Attacks on the NameNode's RPC port with nothing but a socket, against a
// NameNode process: each must be refused with an error while the process
// stays alive, keeps its peak RSS under a ceiling and answers a stock
// client within a second.

const datanodeProtocolName = "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol"

// procStatus reads a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the NameNode's status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, rest)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// survived checks, after an attack, that the NameNode process is alive,
// answers a stock client within a second, and that its peak RSS (VmHWM)
// stayed under maxAttackRSS the whole time.
func (c *cluster) survived(t *testing.T, attack string) {
	t.Helper()
	checkNameNodeHealthy(t, c, c.stockClient(t))
	if peak := procStatus(t, c.nn.cmd.Process.Pid, "VmHWM"); peak > maxAttackRSS {
		t.Errorf("%s: the NameNode's peak RSS was %d MiB, over %d MiB", attack, peak>>20, maxAttackRSS>>20)
	} else {
		t.Logf("%s: NameNode peak RSS %d MiB", attack, peak>>20)
	}
}

func rawClient(t *testing.T, addr, user, protocol string) *ipc.Client {
	t.Helper()
	cl := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: user, Protocol: protocol, MaxRetries: -1})
	t.Cleanup(func() { cl.Close() })
	return cl
}

func rawCall(t *testing.T, cl *ipc.Client, method string, req, resp proto.Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cl.Call(ctx, method, req, resp)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s got no answer within 30 s", method)
	}
	return err
}

func remoteClass(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return re.Class
	}
	return ""
}

// TestHostileBlockReports: ten parallel 133-byte block reports from a
// DataNode that never registered, each claiming 2^26 replicas, got the
// NameNode killed by the kernel (2 GiB reserved per call).
func TestHostileBlockReports(t *testing.T) {
	parallel(t)
	c := startCluster(t, 0, nil)
	dn := rawClient(t, c.nnAddr, "impostor", datanodeProtocolName)
	var ver hdfs.VersionResponseProto
	if err := rawCall(t, dn, "versionRequest", &hdfs.VersionRequestProto{}, &ver); err != nil {
		t.Fatal(err)
	}
	req := &dnpb.BlockReportRequestProto{
		Registration: &dnpb.DatanodeRegistrationProto{
			DatanodeID: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("x"),
				DatanodeUuid: proto.String("impostor"), XferPort: proto.Uint32(1), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)},
			StorageInfo: ver.GetInfo().GetStorageInfo(),
			Keys: &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(false), KeyUpdateInterval: proto.Uint64(0),
				TokenLifeTime: proto.Uint64(0), CurrentKey: &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0)}},
			SoftwareVersion: proto.String("3.3.6"),
		},
		BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
		Reports: []*dnpb.StorageBlockReportProto{{Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-x")},
			NumberOfBlocks: proto.Uint64(1 << 26), BlocksBuffers: [][]byte{{2, 1, 1, 0}}}},
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = rawCall(t, dn, "blockReport", req, &dnpb.BlockReportResponseProto{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if remoteClass(err) != "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException" {
			t.Fatalf("block report of an unregistered node answered %v, want UnregisteredNodeException", err)
		}
	}
	c.survived(t, "inflated block reports")
}

// TestHostileClientName: an ordinary user's create with a 2 MiB client
// name, in a directory anyone may write, hung every later namespace call,
// /jmx and every heartbeat.
func TestHostileClientName(t *testing.T) {
	parallel(t)
	c := startCluster(t, 0, nil)
	c.dfs(t, "-mkdir", "/tmp")
	c.dfs(t, "-chmod", "1777", "/tmp")
	alice := rawClient(t, c.nnAddr, "alice", clientProtocolName)
	req := &hdfs.CreateRequestProto{Src: proto.String("/tmp/f"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String(strings.Repeat("x", 2<<20)), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false),
		Replication: proto.Uint32(1), BlockSize: proto.Uint64(128 << 20)}
	err := rawCall(t, alice, "create", req, &hdfs.CreateResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "client name too long") {
		t.Fatalf("create with a 2 MiB client name answered %v", err)
	}
	c.survived(t, "2 MiB client name")
	// Writes still go through: the lock was released.
	c.dfs(t, "-mkdir", "/tmp/after")
}

// TestHostileDeepMkdirs: a 40 KB mkdirs 20,000 levels deep held the
// namespace lock for 18 s and wrote 401 MB of edits. It is refused with
// Hadoop's message and writes nothing.
func TestHostileDeepMkdirs(t *testing.T) {
	parallel(t)
	c := startCluster(t, 0, nil)
	cl := rawClient(t, c.nnAddr, osUser(t), clientProtocolName)
	err := rawCall(t, cl, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(strings.Repeat("/a", 20000)),
		Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "mkdirs: Pathname too long.  Limit 8000 characters, 1000 levels.") {
		t.Fatalf("mkdirs 20,000 levels deep answered %v", err)
	}
	c.survived(t, "deep mkdirs")
	var edits int64
	filepath.Walk(filepath.Join(c.root, "nn", "name", "current"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), "edits_") {
			edits += recordBytes(t, p, fi)
		}
		return nil
	})
	if edits > 1<<20 {
		t.Errorf("the refused mkdirs left %d bytes of edits", edits)
	}
}

// recordBytes is the size of the edit segment at p up to the end of its
// records: an in-progress segment is preallocated with zero fill after them.
func recordBytes(t *testing.T, p string, fi os.FileInfo) int64 {
	t.Helper()
	if !strings.HasPrefix(fi.Name(), "edits_inprogress_") {
		return fi.Size()
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	version, err := editlog.ReadSegmentHeader(f, p)
	if err != nil {
		return fi.Size()
	}
	dec := editlog.NewDecoder(f, p, editlog.SegmentHeaderSize, version)
	for range 1 << 24 {
		if _, _, err := dec.Next(); err != nil {
			break
		}
	}
	return dec.Offset()
}
