package ipc

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
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

	srv := NewServer(ServerConfig{Handlers: 2, QueueSizePerHandler: 2, MaxDataLength: 1 << 16})
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
		if !srv.startConn(fc) {
			t.Fatal("server closed")
		}
		<-fc.closed
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
