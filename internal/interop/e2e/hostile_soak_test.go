package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestHostileSoak runs a normal write load against a NameNode and three
// DataNode processes while attackers, each in its own goroutine, keep
// sending what a hostile peer can: random bytes on the RPC and streaming
// ports, pipelined calls nobody reads, silent connections, block reports
// with inflated counts from impostors, paths far beyond the limits, huge
// client names, and HTTP requests that never read their answers. The
// NameNode must stay alive and small (peak RSS under maxAttackRSS) and
// answer a stock client within a second at every check, and at the end
// every file whose close succeeded must read back intact.
//
// It runs only with HDFSGO_HOSTILE_SOAK=<duration> (e.g. 5m), and logs its
// seed; HDFSGO_HOSTILE_SOAK_SEED=N replays the choices.
func TestHostileSoak(t *testing.T) {
	d := os.Getenv("HDFSGO_HOSTILE_SOAK")
	if d == "" {
		t.Skip("set HDFSGO_HOSTILE_SOAK=<duration> (e.g. 5m) to run the hostile soak")
	}
	dur, err := time.ParseDuration(d)
	if err != nil {
		t.Fatalf("HDFSGO_HOSTILE_SOAK=%q: %v", d, err)
	}
	seed := rand.Uint64()
	if s := os.Getenv("HDFSGO_HOSTILE_SOAK_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d, duration %v", seed, dur)
	httpPort := freePort(t, "127.0.0.1")
	c := startCluster(t, 3, map[string]string{"dfs.namenode.http-address": fmt.Sprintf("127.0.0.1:%d", httpPort)})
	httpAddr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	stockCl := c.stockClient(t)
	if err := stockCl.MkdirAll("/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := stockCl.MkdirAll("/load", 0o755); err != nil {
		t.Fatal(err)
	}
	stockCl.Chmod("/tmp", 0o1777)
	peak := sampleRSS(t, c.nn.cmd.Process.Pid)

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	attack := func(name string, every time.Duration, f func(r *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(len(name))))
			for n := 0; ctx.Err() == nil && n < 1_000_000; n++ {
				f(r)
				select {
				case <-ctx.Done():
				case <-time.After(every):
				}
			}
		}()
	}
	dnAddr := c.dnAddr(0)
	attack("random bytes", 50*time.Millisecond, func(r *rand.Rand) {
		for _, addr := range []string{c.nnAddr, dnAddr} {
			if nc, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				b := make([]byte, r.IntN(4096))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				if r.IntN(2) == 0 {
					copy(b, "hrpc\x09\x00\x00") // a valid preamble, garbage after
				}
				nc.SetDeadline(time.Now().Add(time.Second))
				nc.Write(b)
				nc.Close()
			}
		}
	})
	attack("pipelined non-reader", 2*time.Second, func(r *rand.Rand) {
		frames := rpcHandshake(t)
		for i := range 2000 {
			frames, _ = wire.AppendRequest(frames, wire.RequestHeader(int32(i+1), []byte("ATTACKERATTACKER"), -1),
				wire.MethodHeader("getListing", clientProtocolName),
				&hdfs.GetListingRequestProto{Src: proto.String("/"), StartAfter: []byte{}, NeedLocation: proto.Bool(false)})
		}
		if nc, err := net.DialTimeout("tcp", c.nnAddr, time.Second); err == nil {
			nc.(*net.TCPConn).SetReadBuffer(16 << 10)
			nc.SetWriteDeadline(time.Now().Add(3 * time.Second))
			nc.Write(frames)
			go func() { <-ctx.Done(); nc.Close() }()
		}
	})
	attack("silent connections", 500*time.Millisecond, func(r *rand.Rand) {
		hs := rpcHandshake(t)
		for range 50 {
			if nc, err := net.DialTimeout("tcp", c.nnAddr, time.Second); err == nil {
				nc.Write(hs)
				go func() { <-ctx.Done(); nc.Close() }()
			}
		}
	})
	attack("impostor block reports", 100*time.Millisecond, func(r *rand.Rand) {
		dn := rawClient(t, c.nnAddr, "impostor", datanodeProtocolName)
		defer dn.Close()
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		var ver hdfs.VersionResponseProto
		if dn.Call(cctx, "versionRequest", &hdfs.VersionRequestProto{}, &ver) != nil {
			return
		}
		req := &dnpb.BlockReportRequestProto{
			Registration: &dnpb.DatanodeRegistrationProto{
				DatanodeID: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("x"),
					DatanodeUuid: proto.String(fmt.Sprintf("impostor-%d", r.IntN(1000))), XferPort: proto.Uint32(1), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)},
				StorageInfo: ver.GetInfo().GetStorageInfo(),
				Keys: &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(false), KeyUpdateInterval: proto.Uint64(0),
					TokenLifeTime: proto.Uint64(0), CurrentKey: &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0)}},
				SoftwareVersion: proto.String("3.3.6"),
			},
			BlockPoolId: proto.String(ver.GetInfo().GetBlockPoolID()),
			Reports: []*dnpb.StorageBlockReportProto{{Storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-x")},
				NumberOfBlocks: proto.Uint64(1 << uint(20+r.IntN(40))), BlocksBuffers: [][]byte{{2, 1, 1, 0}}}},
		}
		dn.Call(cctx, "blockReport", req, &dnpb.BlockReportResponseProto{})
	})
	attack("oversized names", 100*time.Millisecond, func(r *rand.Rand) {
		cl := rawClient(t, c.nnAddr, "mallory", clientProtocolName)
		defer cl.Close()
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		switch r.IntN(3) {
		case 0:
			cl.Call(cctx, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/tmp" + strings.Repeat("/a", 1000+r.IntN(20000))),
				Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
		case 1:
			cl.Call(cctx, "create", &hdfs.CreateRequestProto{Src: proto.String(fmt.Sprintf("/tmp/m%d", r.IntN(100))),
				Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)}, ClientName: proto.String(strings.Repeat("c", 1<<r.IntN(22))),
				CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false), Replication: proto.Uint32(1), BlockSize: proto.Uint64(128 << 20)},
				&hdfs.CreateResponseProto{})
		case 2:
			cl.Call(cctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(strings.Repeat("/", 1<<r.IntN(20)))}, &hdfs.GetFileInfoResponseProto{})
		}
	})
	attack("slow HTTP readers", 200*time.Millisecond, func(r *rand.Rand) {
		path := []string{"/stacks", "/jmx", "/conf", "/"}[r.IntN(4)]
		if nc, err := net.DialTimeout("tcp", httpAddr, time.Second); err == nil {
			nc.(*net.TCPConn).SetReadBuffer(4 << 10)
			nc.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"))
			go func() { <-ctx.Done(); nc.Close() }()
		}
	})

	// The normal load: our client writes files; the ones whose close
	// succeeded are acknowledged.
	type ackedFile struct {
		name string
		sum  [32]byte
	}
	var mu sync.Mutex
	var acked []ackedFile
	var failed int
	var firstErr error
	fsys, err := client.New(client.Options{Addresses: []string{c.nnAddr}, User: osUser(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(100+w)))
			for i := 0; ctx.Err() == nil && i < 1_000_000; i++ {
				data := make([]byte, r.IntN(1<<20))
				for k := range data {
					data[k] = byte(r.Uint32())
				}
				name := fmt.Sprintf("/load/w%d-%d", w, i)
				wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
				err := fsys.WriteFile(wctx, name, data, false)
				wcancel()
				mu.Lock()
				if err == nil {
					acked = append(acked, ackedFile{name, sha256.Sum256(data)})
				} else if failed++; firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	// The checks while it all runs.
	for ctx.Err() == nil {
		checkNameNodeHealthy(t, c, stockCl)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	wg.Wait()
	checkNameNodeHealthy(t, c, stockCl)
	t.Logf("NameNode peak RSS %d MiB; %d files acknowledged, %d writes failed (first: %v)", peak.stop()>>20, len(acked), failed, firstErr)
	if len(acked) == 0 {
		t.Fatal("no write succeeded during the soak")
	}
	for _, f := range acked {
		rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := fsys.ReadFile(rctx, f.name)
		rcancel()
		if err != nil || sha256.Sum256(got) != f.sum {
			t.Errorf("acknowledged %s: read %d bytes, %v, or its content differs", f.name, len(got), err)
		}
	}
}
