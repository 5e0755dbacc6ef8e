package ipc

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// FuzzServerConn feeds arbitrary bytes to a server connection: the server
// must neither panic nor hang, and must answer only with well-formed frames.
func FuzzServerConn(f *testing.F) {
	id := []byte("ABCDEFGHIJKLMNOP")
	seed := wire.ClientPreamble().Append(nil)
	seed, _ = wire.AppendRequest(seed, wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
	seed, _ = wire.AppendRequest(seed, wire.RequestHeader(1, id, -1), wire.MethodHeader("getServerDefaults", clientProtocol), &hdfs.GetServerDefaultsRequestProto{})
	seed, _ = wire.AppendRequest(seed, wire.RequestHeader(2, id, -1), wire.MethodHeader("getFileInfo", clientProtocol), &hdfs.GetFileInfoRequestProto{Src: proto.String("/a")})
	f.Add(seed)
	sasl := wire.Preamble{Version: 9, AuthProtocol: wire.AuthSASL}.Append(nil)
	sasl, _ = wire.AppendRequest(sasl, wire.RequestHeader(wire.CallIDSASL, id, -1), nil, &common.RpcSaslProto{State: common.RpcSaslProto_NEGOTIATE.Enum()})
	f.Add(sasl)
	f.Add([]byte("hrpc\x09\x00\x00\xff\xff\xff\xff"))
	// A frame announced at 60 MiB (under the limit) of which 6 bytes come.
	claim, _ := wire.AppendRequest(wire.ClientPreamble().Append(nil), wire.RequestHeader(wire.CallIDConnectionContext, id, -1), nil, wire.ConnectionContext("u", "", clientProtocol))
	f.Add(append(claim, 0x03, 0xc0, 0, 0, 1, 2, 3, 4, 5, 6))

	// The limit is large so that a buffer allocated by an announced length
	// would show in AllocBound; inputs are small.
	srv := NewServer(ServerConfig{Handlers: 2, QueueSizePerHandler: 2, MaxDataLength: 64 << 20})
	svc := srv.Service(clientProtocol)
	Handle(svc, "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: serverDefaults()}, nil
	})
	Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		if req.GetSrc() == "/panic" {
			panic("fuzz")
		}
		return nil, nil
	})
	f.Cleanup(func() { srv.Close() })

	f.Fuzz(func(t *testing.T, data []byte) {
		fc := &fakeConn{r: bytes.NewReader(data), closed: make(chan struct{})}
		// The whole life of the connection: per input byte, decoding plus
		// the handlers' answers (small here); fixed, the connection's
		// goroutines and buffers.
		testtool.AllocBound(t, len(data), 64, 256<<10, func() {
			if !srv.startConn(fc) {
				t.Fatal("server closed")
			}
			<-fc.closed
			waitGone(srv)
		})
		fc.mu.Lock()
		out := bytes.NewReader(fc.out.Bytes())
		fc.mu.Unlock()
		br := bufio.NewReader(out)
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

// waitGone waits until the server has no connection left (the one the
// fuzz input opened has ended), yielding meanwhile.
func waitGone(srv *Server) {
	for srv.Stats().Open > 0 {
		runtime.Gosched()
	}
}

// fakeConn serves a fixed input and records the output.
type fakeConn struct {
	r      *bytes.Reader
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	out    bytes.Buffer
}

func (c *fakeConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *fakeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}
func (c *fakeConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *fakeConn) LocalAddr() net.Addr              { return fakeAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr             { return fakeAddr{} }
func (c *fakeConn) SetDeadline(time.Time) error      { return nil }
func (c *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fakeConn) SetWriteDeadline(time.Time) error { return nil }

type fakeAddr struct{}

func (fakeAddr) Network() string { return "fake" }
func (fakeAddr) String() string  { return "fake:0" }
