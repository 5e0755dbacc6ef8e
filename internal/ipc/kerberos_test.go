package ipc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// kerberosServer starts a server that requires Kerberos with the given
// protection; getFileInfo answers the caller's user, principal and
// protection as the file's owner, group and symlink.
func kerberosServer(t *testing.T, kdc *krbtest.KDC, q security.QOP) string {
	t.Helper()
	srv := NewServer(ServerConfig{Kerberos: kdc.Acceptor("nn", q)})
	svc := srv.Service(clientProtocol)
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		c, _ := CallerFromContext(ctx)
		st := &hdfs.HdfsFileStatusProto{FileType: hdfs.HdfsFileStatusProto_IS_FILE.Enum(), Path: []byte(req.GetSrc()),
			Length: proto.Uint64(0), Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
			ModificationTime: proto.Uint64(0), AccessTime: proto.Uint64(0),
			Owner: proto.String(c.User), Group: proto.String(c.Principal), Symlink: []byte(c.QOP.String())}
		return &hdfs.GetFileInfoResponseProto{Fs: st}, nil
	})
	addr := startServer(t, srv)
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort("localhost", port)
}

func TestKerberosRPC(t *testing.T) {
	kdc := krbtest.Start(t)
	aliceKT := kdc.AddPrincipal("alice")
	alice := kdc.ClientFromCCache(kdc.Kinit("alice", aliceKT))
	for _, q := range []security.QOP{security.QOPAuthentication, security.QOPIntegrity, security.QOPPrivacy,
		security.QOPAuthentication | security.QOPPrivacy} {
		t.Run(q.String(), func(t *testing.T) {
			addr := kerberosServer(t, kdc, q)
			c := NewClient(ClientConfig{Addresses: []string{addr}, Protocol: clientProtocol, MaxRetries: -1,
				Kerberos: &security.Initiator{Client: alice, Principal: "nn/_HOST@" + krbtest.Realm}})
			defer c.Close()
			// Concurrent calls, some large, share the protected connection.
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					src := "/f" + strings.Repeat("x", i*5000)
					var resp hdfs.GetFileInfoResponseProto
					if err := c.Call(context.Background(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: &src}, &resp); err != nil {
						errs <- err
						return
					}
					fs := resp.GetFs()
					if fs.GetOwner() != "alice" || fs.GetGroup() != "alice@"+krbtest.Realm || string(fs.GetSymlink()) != q.Highest().String() {
						errs <- errors.New("caller seen as " + fs.GetOwner() + " " + fs.GetGroup() + " " + string(fs.GetSymlink()))
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestKerberosRefusals(t *testing.T) {
	kdc := krbtest.Start(t)
	aliceKT := kdc.AddPrincipal("alice")
	alice := kdc.ClientFromCCache(kdc.Kinit("alice", aliceKT))
	addr := kerberosServer(t, kdc, security.QOPPrivacy)
	call := func(cfg ClientConfig) error {
		cfg.Addresses, cfg.Protocol, cfg.MaxRetries = []string{addr}, clientProtocol, -1
		c := NewClient(cfg)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		src := "/"
		return c.Call(ctx, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: &src}, &hdfs.GetFileInfoResponseProto{})
	}
	// A SIMPLE client gets Hadoop's message.
	if err := call(ClientConfig{User: "hdfs"}); err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
		t.Errorf("SIMPLE client: %v", err)
	}
	// A client that accepts only authentication meets a privacy server.
	if err := call(ClientConfig{Protection: security.QOPAuthentication,
		Kerberos: &security.Initiator{Client: alice, Principal: "nn/_HOST@" + krbtest.Realm}}); !errors.Is(err, ErrNoCommonProtection) {
		t.Errorf("protection mismatch: %v", err)
	}
	// A ticket for the wrong service principal.
	kdc.AddPrincipal("other/localhost")
	if err := call(ClientConfig{Kerberos: &security.Initiator{Client: alice, Principal: "other/_HOST@" + krbtest.Realm}}); err == nil ||
		!strings.Contains(err.Error(), "ticket for other/localhost@"+krbtest.Realm+", but this server is nn/_HOST@") {
		t.Errorf("wrong principal: %v", err)
	}
	// A principal the KDC does not know.
	if err := call(ClientConfig{Kerberos: &security.Initiator{Client: alice, Principal: "nobody/_HOST@" + krbtest.Realm}}); err == nil ||
		!strings.Contains(err.Error(), "no Kerberos ticket for nobody/localhost@") {
		t.Errorf("unknown principal: %v", err)
	}
}

// FuzzKerberosSASL feeds arbitrary bytes after a SASL preamble to a server
// that requires Kerberos (with an empty keytab): whatever arrives —
// truncated, oversized or out-of-order SASL messages, forged tokens — no
// call may reach a handler and every answer must be a well-formed frame.
func FuzzKerberosSASL(f *testing.F) {
	id := []byte("ABCDEFGHIJKLMNOP")
	pre := wire.Preamble{Version: 9, AuthProtocol: wire.AuthSASL}.Append(nil)
	neg, _ := wire.AppendRequest(nil, wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum()})
	ini, _ := wire.AppendRequest(nil, wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_INITIATE.Enum(),
		Token: []byte{0x60, 0x10, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01, 0x00, 0x6e, 0x00},
		Auths: []*common.RpcSaslProto_SaslAuth{{Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI")}}})
	wrap, _ := wire.AppendRequest(nil, wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_WRAP.Enum(), Token: []byte{5, 4, 0, 0xff}})
	call, _ := wire.AppendRequest(nil, wire.RequestHeader(1, id, -1), wire.MethodHeader("getFileInfo", clientProtocol), &hdfs.GetFileInfoRequestProto{Src: proto.String("/a")})
	f.Add(append(append([]byte(nil), neg...), ini...))
	f.Add(append(append([]byte(nil), neg...), call...))
	f.Add(append(append([]byte(nil), wrap...), call...))
	f.Add(append(append([]byte(nil), neg...), 0x7f, 0xff, 0xff, 0xff, 1, 2))
	rules, _ := security.ParseRules("DEFAULT")
	srv := NewServer(ServerConfig{Handlers: 2, QueueSizePerHandler: 2, MaxDataLength: 1 << 20,
		Kerberos: &security.Acceptor{Keytab: keytab.New(), Principal: "nn/_HOST@R", Rules: rules, DefaultRealm: "R", Protection: security.QOPPrivacy}})
	svc := srv.Service(clientProtocol)
	var reached atomic.Int64
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		reached.Add(1)
		return nil, nil
	})
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := &fakeConn{r: bytes.NewReader(append(append([]byte(nil), pre...), data...)), closed: make(chan struct{})}
		testtool.AllocBound(t, len(data), 64, 256<<10, func() {
			if !srv.startConn(fc) {
				t.Fatal("server closed")
			}
			<-fc.closed
			waitGone(srv)
		})
		if reached.Load() != 0 {
			t.Fatal("a call reached a handler without authentication")
		}
		fc.mu.Lock()
		br := bufio.NewReader(bytes.NewReader(fc.out.Bytes()))
		fc.mu.Unlock()
		for {
			frame, err := wire.ReadFrame(br, 1<<20, nil)
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("server wrote a broken frame: %v", err)
			}
			if _, err := wire.DecodeResponse(frame); err != nil {
				t.Fatalf("server wrote an undecodable response: %v", err)
			}
		}
	})
}

// BenchmarkKerberosRPC compares SIMPLE with Kerberos at each
// hadoop.rpc.protection level in one run: 16 callers on one connection
// call a method whose request carries a path of 100 bytes or 16 KiB.
// cpu-us/call is the process's user+system CPU time (client and server
// both run here) per call.
func BenchmarkKerberosRPC(b *testing.B) {
	kdc := krbtest.Start(b)
	aliceKT := kdc.AddPrincipal("alice")
	alice := kdc.ClientFromCCache(kdc.Kinit("alice", aliceKT))
	for _, size := range []int{100, 16 << 10} {
		for _, mode := range []string{"simple", "authentication", "integrity", "privacy"} {
			b.Run(fmt.Sprintf("path=%dB/%s", size, mode), func(b *testing.B) {
				cfg := ServerConfig{}
				ccfg := ClientConfig{Protocol: clientProtocol, User: "alice"}
				if mode != "simple" {
					q, _ := security.ParseProtection("mode", mode)
					cfg.Kerberos = kdc.Acceptor("nn", q)
					ccfg.Kerberos = &security.Initiator{Client: alice, Principal: "nn/_HOST@" + krbtest.Realm}
				}
				srv := NewServer(cfg)
				Handle(srv.Service(clientProtocol), "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
					return &hdfs.GetFileInfoResponseProto{}, nil
				})
				_, port, _ := net.SplitHostPort(startServer(b, srv))
				ccfg.Addresses = []string{net.JoinHostPort("localhost", port)}
				c := NewClient(ccfg)
				defer c.Close()
				src := "/" + strings.Repeat("p", size-1)
				req := &hdfs.GetFileInfoRequestProto{Src: &src}
				ctx := context.Background()
				if err := c.Call(ctx, "getFileInfo", req, &hdfs.GetFileInfoResponseProto{}); err != nil {
					b.Fatal(err)
				}
				const callers = 16
				b.ResetTimer()
				cpu0 := cpuTime()
				start := time.Now()
				var wg sync.WaitGroup
				for i := range callers {
					n := b.N / callers
					if i < b.N%callers {
						n++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						var resp hdfs.GetFileInfoResponseProto
						for range n {
							if err := c.Call(ctx, "getFileInfo", req, &resp); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/call")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
