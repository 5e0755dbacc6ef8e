package zkfc

import (
	"encoding/hex"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// NodeInfo names an active NameNode as its failover controller writes it
// in the lock and breadcrumb znodes: Hadoop's ActiveNodeInfo, so that
// Hadoop's controllers and ours read each other's.
//
//	field 1 nameserviceId string   (required)
//	field 2 namenodeId    string   (required)
//	field 3 hostname      string   (required) the RPC host, as Java's getHostName
//	field 4 port          int32    (required) the RPC port
//	field 5 zkfcPort      int32    (required) the controller's ZKFCProtocol port
type NodeInfo struct {
	Nameservice string
	NameNodeID  string
	Host        string
	Port        int
	ZKFCPort    int
}

// maxNodeInfo bounds the data read from a znode: an ActiveNodeInfo is a
// few dozen bytes; more is not one.
const maxNodeInfo = 4096

// Encode is the znode data: the fields in order, as Java writes them, so
// that the same NameNode's data is the same bytes every time.
func (n NodeInfo) Encode() []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&hdfs.ActiveNodeInfo{
		NameserviceId: proto.String(n.Nameservice),
		NamenodeId:    proto.String(n.NameNodeID),
		Hostname:      proto.String(n.Host),
		Port:          proto.Int32(int32(n.Port)),
		ZkfcPort:      proto.Int32(int32(n.ZKFCPort)),
	})
	if err != nil {
		panic(err) // every field is set; a message of strings and ints always encodes
	}
	return b
}

// DecodeNodeInfo reads znode data. Anything that is not a complete
// ActiveNodeInfo with ports in range is an ErrBadZNodeData naming the
// bytes (in hex, as Hadoop's "Invalid data in ZK").
func DecodeNodeInfo(b []byte) (NodeInfo, error) {
	if len(b) > maxNodeInfo {
		return NodeInfo{}, fmt.Errorf("%w: Invalid data in ZK: %d bytes, more than an ActiveNodeInfo holds", ErrBadZNodeData, len(b))
	}
	var m hdfs.ActiveNodeInfo
	if err := proto.Unmarshal(b, &m); err != nil {
		return NodeInfo{}, fmt.Errorf("%w: Invalid data in ZK: %s", ErrBadZNodeData, hex.EncodeToString(b))
	}
	n := NodeInfo{Nameservice: m.GetNameserviceId(), NameNodeID: m.GetNamenodeId(), Host: m.GetHostname(),
		Port: int(m.GetPort()), ZKFCPort: int(m.GetZkfcPort())}
	if n.Port <= 0 || n.Port > 65535 || n.ZKFCPort < 0 || n.ZKFCPort > 65535 || n.Host == "" {
		return NodeInfo{}, fmt.Errorf("%w: Invalid data in ZK: %s (address %s:%d, controller port %d)",
			ErrBadZNodeData, hex.EncodeToString(b), n.Host, n.Port, n.ZKFCPort)
	}
	return n, nil
}

func (n NodeInfo) String() string {
	return fmt.Sprintf("nameserviceId: %q namenodeId: %q hostname: %q port: %d zkfcPort: %d",
		n.Nameservice, n.NameNodeID, n.Host, n.Port, n.ZKFCPort)
}
