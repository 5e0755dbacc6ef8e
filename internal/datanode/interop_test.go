package datanode

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"os"
	"sync"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"google.golang.org/protobuf/proto"
)

// fakeNamespace serves the handful of ClientProtocol calls the stock Go
// client makes to write and read whole files, on the fake NameNode. complete
// succeeds only once every replica of the last block was reported RECEIVED
// with the length the client wrote, which a DataNode must have done before
// acknowledging the block's last packet.
type fakeNamespace struct {
	nn        *fakeNN
	blockSize int64
	locs      []*hdfs.DatanodeInfoProto

	mu struct {
		sync.Mutex
		nextID int64
		files  map[string]*fakeFile
	}
}

type fakeFile struct {
	blocks []*hdfs.ExtendedBlockProto
	done   bool
}

func (ns *fakeNamespace) status(f *fakeFile) *hdfs.HdfsFileStatusProto {
	var n uint64
	for _, b := range f.blocks {
		n += b.GetNumBytes()
	}
	return &hdfs.HdfsFileStatusProto{
		FileType: hdfs.HdfsFileStatusProto_IS_FILE.Enum(), Path: []byte{}, Length: proto.Uint64(n),
		Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)}, Owner: proto.String("hdfs"), Group: proto.String("supergroup"),
		ModificationTime: proto.Uint64(0), AccessTime: proto.Uint64(0),
		BlockReplication: proto.Uint32(uint32(len(ns.locs))), Blocksize: proto.Uint64(uint64(ns.blockSize)), FileId: proto.Uint64(16386),
	}
}

func (ns *fakeNamespace) located(b *hdfs.ExtendedBlockProto, off int64) *hdfs.LocatedBlockProto {
	return &hdfs.LocatedBlockProto{B: b, Offset: proto.Uint64(uint64(off)), Locs: ns.locs, Corrupt: proto.Bool(false), BlockToken: emptyToken()}
}

// setLength records the length the client reports for one of its blocks.
func (ns *fakeNamespace) setLengthLocked(f *fakeFile, b *hdfs.ExtendedBlockProto) {
	for _, fb := range f.blocks {
		if b != nil && fb.GetBlockId() == b.GetBlockId() {
			fb.NumBytes = proto.Uint64(b.GetNumBytes())
		}
	}
}

// allReceived reports whether every location reported b RECEIVED with its
// length.
func (ns *fakeNamespace) allReceived(b *hdfs.ExtendedBlockProto) bool {
	got := map[string]bool{}
	for _, e := range ns.nn.ibrsNow() {
		if e.block == int64(b.GetBlockId()) && e.status == dnpb.ReceivedDeletedBlockInfoProto_RECEIVED && e.len == int64(b.GetNumBytes()) {
			got[e.uuid] = true
		}
	}
	for _, l := range ns.locs {
		if !got[l.GetId().GetDatanodeUuid()] {
			return false
		}
	}
	return true
}

func serveNamespace(nn *fakeNN, blockSize int64, locs []*hdfs.DatanodeInfoProto) *fakeNamespace {
	ns := &fakeNamespace{nn: nn, blockSize: blockSize, locs: locs}
	ns.mu.nextID = 1073741825
	ns.mu.files = map[string]*fakeFile{}
	svc := nn.srv.Service("org.apache.hadoop.hdfs.protocol.ClientProtocol")
	ipc.Handle(svc, "getServerDefaults", func(ctx context.Context, req *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
			BlockSize: proto.Uint64(uint64(blockSize)), BytesPerChecksum: proto.Uint32(512), WritePacketSize: proto.Uint32(65536),
			Replication: proto.Uint32(uint32(len(locs))), FileBufferSize: proto.Uint32(4096), EncryptDataTransfer: proto.Bool(false),
			ChecksumType: hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum()}}, nil
	})
	ipc.Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		if f := ns.mu.files[req.GetSrc()]; f != nil {
			return &hdfs.GetFileInfoResponseProto{Fs: ns.status(f)}, nil
		}
		return &hdfs.GetFileInfoResponseProto{}, nil
	})
	ipc.Handle(svc, "create", func(ctx context.Context, req *hdfs.CreateRequestProto) (*hdfs.CreateResponseProto, error) {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		f := &fakeFile{}
		ns.mu.files[req.GetSrc()] = f
		return &hdfs.CreateResponseProto{Fs: ns.status(f)}, nil
	})
	ipc.Handle(svc, "renewLease", func(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
		return &hdfs.RenewLeaseResponseProto{}, nil
	})
	ipc.Handle(svc, "addBlock", func(ctx context.Context, req *hdfs.AddBlockRequestProto) (*hdfs.AddBlockResponseProto, error) {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		f := ns.mu.files[req.GetSrc()]
		ns.setLengthLocked(f, req.GetPrevious())
		var off int64
		for _, b := range f.blocks {
			off += int64(b.GetNumBytes())
		}
		b := ext(ns.mu.nextID, 1001, 0)
		ns.mu.nextID++
		f.blocks = append(f.blocks, b)
		return &hdfs.AddBlockResponseProto{Block: ns.located(proto.Clone(b).(*hdfs.ExtendedBlockProto), off)}, nil
	})
	ipc.Handle(svc, "updateBlockForPipeline", func(ctx context.Context, req *hdfs.UpdateBlockForPipelineRequestProto) (*hdfs.UpdateBlockForPipelineResponseProto, error) {
		return &hdfs.UpdateBlockForPipelineResponseProto{Block: ns.located(req.GetBlock(), 0)}, nil
	})
	ipc.Handle(svc, "complete", func(ctx context.Context, req *hdfs.CompleteRequestProto) (*hdfs.CompleteResponseProto, error) {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		f := ns.mu.files[req.GetSrc()]
		ns.setLengthLocked(f, req.GetLast())
		ok := req.GetLast() == nil || ns.allReceived(req.GetLast())
		f.done = ok
		return &hdfs.CompleteResponseProto{Result: proto.Bool(ok)}, nil
	})
	ipc.Handle(svc, "getBlockLocations", func(ctx context.Context, req *hdfs.GetBlockLocationsRequestProto) (*hdfs.GetBlockLocationsResponseProto, error) {
		ns.mu.Lock()
		defer ns.mu.Unlock()
		f := ns.mu.files[req.GetSrc()]
		if f == nil {
			return &hdfs.GetBlockLocationsResponseProto{}, nil
		}
		lbs := &hdfs.LocatedBlocksProto{UnderConstruction: proto.Bool(!f.done), IsLastBlockComplete: proto.Bool(f.done)}
		var off int64
		for _, b := range f.blocks {
			lbs.Blocks = append(lbs.Blocks, ns.located(b, off))
			off += int64(b.GetNumBytes())
		}
		lbs.FileLength = proto.Uint64(uint64(off))
		return &hdfs.GetBlockLocationsResponseProto{Locations: lbs}, nil
	})
	return ns
}

// TestStockClientWriteRead writes and reads files with the stock Go client
// (github.com/colinmarc/hdfs/v2) through a pipeline of three DataNodes.
func TestStockClientWriteRead(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn), startDN(t, nn)}
	const blockSize = 1 << 20
	serveNamespace(nn, blockSize, []*hdfs.DatanodeInfoProto{info(dns[0]), info(dns[1]), info(dns[2])})
	c, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{nn.addr}, User: "hdfs"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	data := randomData(2*blockSize+300_000, 16)
	w, err := c.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	for pos, i := 0, 0; pos < len(data); i++ {
		n := min([]int{100, 700, 1, 65_536, 200_000, 3}[i%6], len(data)-pos)
		if _, err := w.Write(data[pos : pos+n]); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := w.Flush(); err != nil { // unaligned packets
				t.Fatal(err)
			}
		}
		pos += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err) // includes complete returning false: a replica not reported before the last ack
	}

	r, err := c.Open("/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes back, differing from the %d written", len(got), len(data))
	}
	buf := make([]byte, 999)
	for _, off := range []int64{0, 1, 511, 513, blockSize - 10, blockSize, 2*blockSize + 299_000} {
		n, err := r.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			t.Fatalf("ReadAt %d: %v", off, err)
		}
		if !bytes.Equal(buf[:n], data[off:off+int64(n)]) {
			t.Fatalf("ReadAt %d: wrong bytes", off)
		}
	}
	sum, err := r.Checksum()
	if err != nil {
		t.Fatal(err)
	}
	ck := datatransfer.DefaultChecksum()
	var blockMD5s [][md5.Size]byte
	for off := 0; off < len(data); off += blockSize {
		blockMD5s = append(blockMD5s, datatransfer.BlockChecksumMD5(ck.Compute(nil, data[off:min(off+blockSize, len(data))])))
	}
	want := datatransfer.FileChecksumMD5MD5CRC(blockMD5s)
	if !bytes.Equal(sum, want[:]) {
		t.Fatalf("file checksum %x, want %x", sum, want)
	}
	if _, err := c.Stat("/f"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat("/missing"); !os.IsNotExist(err) {
		t.Fatalf("Stat of a missing file: %v", err)
	}
}

// TestStockClientConcurrentWriters: several files written at once through
// the same DataNodes; each complete succeeds at the first call, so every
// finished block was reported before its last ack despite shared report
// calls.
func TestStockClientConcurrentWriters(t *testing.T) {
	nn := newFakeNN(t, "CID-test")
	dns := []*DataNode{startDN(t, nn), startDN(t, nn)}
	serveNamespace(nn, 256<<10, []*hdfs.DatanodeInfoProto{info(dns[0]), info(dns[1])})
	c, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{nn.addr}, User: "hdfs"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The stock client caches the server defaults without a lock on first
	// use; fetch them once before sharing the client between goroutines.
	if _, err := c.ServerDefaults(); err != nil {
		t.Fatal(err)
	}
	const writers = 6
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			name := "/g" + string(rune('a'+i))
			w, err := c.Create(name)
			if err != nil {
				errs <- err
				return
			}
			data := randomData(600_000, 100+i)
			if _, err := w.Write(data); err != nil {
				errs <- err
				return
			}
			errs <- w.Close()
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range writers {
		got, err := c.ReadFile("/g" + string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, randomData(600_000, 100+i)) {
			t.Fatalf("file %d reads back wrong", i)
		}
	}
}
