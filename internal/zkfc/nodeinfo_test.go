package zkfc_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
	"github.com/hdfsgo/hdfsgo/internal/zkfc"
)

// TestNodeInfoGolden: the bytes are ActiveNodeInfo's fields 1-5 in order,
// as Hadoop's controller writes them (strings length-delimited, ports as
// varints), so either controller reads the other's lock and breadcrumb.
func TestNodeInfoGolden(t *testing.T) {
	n := zkfc.NodeInfo{Nameservice: "ns1", NameNodeID: "nn1", Host: "localhost", Port: 8020, ZKFCPort: 8019}
	want := "0a036e7331" + "12036e6e31" + "1a096c6f63616c686f7374" + "20d43e" + "28d33e"
	got := n.Encode()
	if hex.EncodeToString(got) != want {
		t.Fatalf("encoded %x\nwant    %s", got, want)
	}
	back, err := zkfc.DecodeNodeInfo(got)
	if err != nil || back != n {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for _, bad := range [][]byte{
		nil,              // nothing: required fields missing
		got[:len(got)-3], // zkfcPort missing
		{0x0a, 0x7f},     // truncated
		zkfc.NodeInfo{Nameservice: "ns1", NameNodeID: "nn1", Host: "h", Port: 0}.Encode(), // no port
		bytes.Repeat([]byte{0}, 5000),
	} {
		if _, err := zkfc.DecodeNodeInfo(bad); !errors.Is(err, zkfc.ErrBadZNodeData) {
			t.Errorf("DecodeNodeInfo(%x): %v", bad, err)
		}
	}
}

// FuzzDecodeNodeInfo: znode data is outside input (anyone with write
// access to ZooKeeper): decoding never panics, allocates in proportion to
// the data, and whatever decodes encodes back to something that decodes
// to the same.
func FuzzDecodeNodeInfo(f *testing.F) {
	f.Add(zkfc.NodeInfo{Nameservice: "ns1", NameNodeID: "nn1", Host: "localhost", Port: 8020, ZKFCPort: 8019}.Encode())
	f.Add([]byte{0x0a, 0x03, 'n', 's', '1'})
	f.Add([]byte{0x2a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var n zkfc.NodeInfo
		var err error
		testtool.AllocBound(t, len(b), 16, 16<<10, func() { n, err = zkfc.DecodeNodeInfo(b) })
		if err != nil {
			return
		}
		again, err := zkfc.DecodeNodeInfo(n.Encode())
		if err != nil || again != n {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", n, again, err)
		}
	})
}
