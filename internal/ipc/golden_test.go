package ipc

import (
	"bytes"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc/wire"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestClientBytesMatchStockClient captures what Client writes and compares
// it with the bytes the stock Go client writes for the same call (preamble,
// connection context, call 1 getFileInfo{"/_test/foo.txt"}).
func TestClientBytesMatchStockClient(t *testing.T) {
	const (
		id       = "4142434445464748494a4b4c4d4e4f50"
		protoHex = "6f72672e6170616368652e6861646f6f702e686466732e70726f746f636f6c2e436c69656e7450726f746f636f6c"
	)
	want, err := hex.DecodeString(strings.ReplaceAll(
		"68727063 09 00 00"+
			"00000055 18 080210001805 2210"+id+"3b 1209 0a07 676f6864667331 1a2e"+protoHex+
			"0000006a 18 080210001802 2210"+id+"3f 0a0b 67657446696c65496e666f 122e"+protoHex+"1801"+
			"10 0a0e 2f5f746573742f666f6f2e747874", " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer nc.Close()
		// Guards against a hang if the client wrote fewer bytes than expected.
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, len(want))
		n, _ := io.ReadFull(nc, buf)
		got <- buf[:n]
		h := &common.RpcResponseHeaderProto{CallId: proto.Uint32(1), Status: common.RpcResponseHeaderProto_SUCCESS.Enum()}
		resp, _ := wire.AppendResponse(nil, h, &hdfs.GetFileInfoResponseProto{})
		nc.Write(resp)
		nc.SetReadDeadline(time.Time{})
		io.Copy(io.Discard, nc)
	}()
	c := NewClient(ClientConfig{Addresses: []string{l.Addr().String()}, User: "gohdfs1",
		Protocol: clientProtocol, ClientID: []byte("ABCDEFGHIJKLMNOP")})
	var r hdfs.GetFileInfoResponseProto
	callErr := c.Call(t.Context(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/_test/foo.txt")}, &r)
	c.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("client wrote\n%x\nwant\n%x", b, want)
	}
	if callErr != nil {
		t.Fatal(callErr)
	}
}
