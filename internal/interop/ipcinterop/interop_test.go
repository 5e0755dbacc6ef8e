package ipcinterop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"testing"

	stock "github.com/colinmarc/hdfs/v2"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

func TestStockClientServerDefaultsAndStat(t *testing.T) {
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2})
	svc := srv.Service(clientProtocol)
	var mu sync.Mutex
	var users []string
	ipc.Handle(svc, "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		if c, ok := ipc.CallerFromContext(ctx); ok {
			mu.Lock()
			users = append(users, c.User)
			mu.Unlock()
		}
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
			BlockSize:           proto.Uint64(134217728),
			BytesPerChecksum:    proto.Uint32(512),
			WritePacketSize:     proto.Uint32(65536),
			Replication:         proto.Uint32(3),
			FileBufferSize:      proto.Uint32(4096),
			EncryptDataTransfer: proto.Bool(false),
			TrashInterval:       proto.Uint64(0),
			ChecksumType:        hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
		}}, nil
	})
	ipc.Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		switch req.GetSrc() {
		case "/denied":
			return nil, fmt.Errorf("getFileInfo %s: %w", req.GetSrc(), fs.ErrPermission)
		case "/bad":
			return nil, fmt.Errorf("getFileInfo %s: %w", req.GetSrc(), fs.ErrInvalid)
		}
		return &hdfs.GetFileInfoResponseProto{}, nil // fs absent: no such file
	})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, ipc.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()

	client, err := stock.NewClient(stock.ClientOptions{Addresses: []string{l.Addr().String()}, User: "gohdfs1"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	d, err := client.ServerDefaults()
	if err != nil {
		t.Fatalf("ServerDefaults: %v", err)
	}
	want := stock.ServerDefaults{BlockSize: 134217728, BytesPerChecksum: 512, WritePacketSize: 65536,
		Replication: 3, FileBufferSize: 4096}
	if d != want {
		t.Fatalf("defaults %+v, want %+v", d, want)
	}

	for _, tc := range []struct {
		path string
		want error
	}{
		{"/nope", os.ErrNotExist},
		{"/denied", os.ErrPermission},
		{"/bad", os.ErrInvalid},
	} {
		_, err := client.Stat(tc.path)
		if !errors.Is(err, tc.want) {
			t.Errorf("Stat(%s) = %v, want %v", tc.path, err, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(users) != 1 || users[0] != "gohdfs1" {
		t.Fatalf("users seen %v", users)
	}
}
