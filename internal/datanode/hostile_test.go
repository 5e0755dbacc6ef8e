package datanode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// startDNLogged is startDN with the DataNode's log written to buf.
func startDNLogged(t *testing.T, nn *fakeNN, buf *testtool.Buffer) *DataNode {
	t.Helper()
	cfg := testConfig(nn.addr, t.TempDir())
	dn, err := Start(context.Background(), cfg, Deps{Logger: slog.New(slog.NewTextHandler(buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := dn.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return dn
}

// TestReadBlockRangeRefused: a READ_BLOCK whose length runs past the
// replica, or whose offset + length overflows, is answered ERROR with
// Hadoop's BlockSender message, and no data.
func TestReadBlockRangeRefused(t *testing.T) {
	var logBuf testtool.Buffer
	dn := startDNLogged(t, newFakeNN(t, "CID-test"), &logBuf)
	data := randomData(5000, 3)
	dial(t, dn).writeBlock(71, 1001, nil, data, []int{len(data)}, nil)
	for _, tc := range []struct {
		name     string
		off, len uint64
	}{
		{"length 2^62", 0, 1 << 62},
		{"one byte past the end", 4000, 1001},
		{"offset + length overflows", 10, math.MaxInt64},
		{"offset past the end", 5001, 0},
		{"length above 2^63 from an offset", 10, 1<<63 + 5},
	} {
		c := dial(t, dn)
		req := &hdfs.OpReadBlockProto{Header: &hdfs.ClientOperationHeaderProto{
			BaseHeader: &hdfs.BaseHeaderProto{Block: ext(71, 1001, 5000), Token: emptyToken()}, ClientName: proto.String("c")},
			Offset: proto.Uint64(tc.off), Len: proto.Uint64(tc.len)}
		if err := datatransfer.WriteOp(c.conn, datatransfer.OpReadBlock, req); err != nil {
			t.Fatal(err)
		}
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(c.br, 1<<20, &resp); err != nil {
			t.Fatal(err)
		}
		shownLen := int64(tc.len)
		if shownLen < 0 {
			shownLen = 5000 // Hadoop reads a length above 2^63 as the replica's
		}
		want := fmt.Sprintf("Offset %d and length %d don't match block %s:blk_71_1001 ( blockLen 5000 )", tc.off, shownLen, testPool)
		if resp.GetStatus() != hdfs.Status_ERROR || resp.GetMessage() != want {
			t.Errorf("%s: %v %q, want ERROR %q", tc.name, resp.GetStatus(), resp.GetMessage(), want)
		}
		if rest, _ := io.ReadAll(c.br); len(rest) != 0 {
			t.Errorf("%s: %d bytes after the refusal", tc.name, len(rest))
		}
	}
	if !strings.Contains(logBuf.String(), "level=WARN msg=\"read refused\" remote=127.0.0.1:") {
		t.Errorf("no WARN with the peer for a refused read:\n%s", logBuf.String())
	}
	// The whole replica, asked for exactly, still reads.
	if got := dial(t, dn).readBlock(71, 1001, 0, 5000); !bytes.Equal(got, data) {
		t.Fatal("whole-block read differs")
	}
}

// TestBadOpHeadersLogged: wrong versions and bodies that do not decode
// close the connection and are logged at WARN with the peer, at most
// ratelog.DefaultBurst a minute.
func TestBadOpHeadersLogged(t *testing.T) {
	var logBuf testtool.Buffer
	dn := startDNLogged(t, newFakeNN(t, "CID-test"), &logBuf)
	inputs := [][]byte{
		{0, 27, 81, 0},                      // version 27
		{0, 28, 81, 3, 0xff, 0xff, 0xff},    // READ_BLOCK whose body does not decode
		{0, 28, 81, 0xff, 0xff, 0xff, 0x7f}, // a body announced far over the limit
	}
	for i := range 30 {
		nc, err := net.Dial("tcp", dn.XferAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(waitFor))
		if _, err := nc.Write(inputs[i%len(inputs)]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(nc); err != nil {
			t.Fatalf("input %d: connection not closed: %v", i%len(inputs), err)
		}
		nc.Close()
	}
	out := logBuf.String()
	n := strings.Count(out, "closing connection: bad op")
	if n != 10 {
		t.Fatalf("%d records, want 10 (the rate limit):\n%s", n, out)
	}
	for _, want := range []string{"level=WARN", "remote=127.0.0.1:", "unsupported data transfer version"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckReadRange(t *testing.T) {
	for _, tc := range []struct {
		off, n, length int64
		ok             bool
	}{
		{0, 0, 0, true},
		{0, 10, 10, true},
		{10, 0, 10, true},
		{3, 7, 10, true},
		{3, 8, 10, false},
		{11, 0, 10, false},
		{-1, 1, 10, false},
		{0, -1, 10, false},
		{5, math.MaxInt64, 10, false}, // off + n would overflow
		{math.MaxInt64, 1, math.MaxInt64, false},
	} {
		if err := checkReadRange(tc.off, tc.n, tc.length); (err == nil) != tc.ok {
			t.Errorf("checkReadRange(%d, %d, %d) = %v", tc.off, tc.n, tc.length, err)
		}
	}
}
