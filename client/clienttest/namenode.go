package clienttest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// clientProtocol is the RPC protocol name (client.ClientProtocol).
const clientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// BlockPool is the block pool id of every block.
const BlockPool = "BP-1-127.0.0.1-1"

// Config configures a Cluster. Zero values take the defaults noted.
type Config struct {
	DataNodes   int                       // default 1
	BlockSize   int64                     // server default block size, default 128 MiB
	Replication uint16                    // server default replication, default 3
	Checksum    datatransfer.DataChecksum // server default checksum, default CRC32C/512
	// Now stamps inodes; nil means a fixed time.
	Now func() time.Time
}

// Cluster is a running NameNode and its DataNodes.
type Cluster struct {
	cfg  Config
	srv  *ipc.Server
	l    net.Listener
	done chan struct{}
	dns  []*DataNode

	// CompleteFalse is how many complete calls are still to be answered
	// with result=false.
	CompleteFalse atomic.Int32

	mu struct {
		sync.Mutex
		inodes  map[string]*inode
		nextID  uint64
		nextBlk uint64
		gs      uint64
		calls   []string
		bad     []string // "blk_<id> <dn addr>" of reportBadBlocks
		renewed int
	}
}

type inode struct {
	dir          bool
	id           uint64
	perm         uint32
	owner, group string
	mtime, atime uint64
	repl         uint32
	blockSize    uint64
	blocks       []*block
	holder       string // lease holder while under construction
}

type block struct {
	id, gs, numBytes uint64
	dns              []int // indices of the DataNodes holding it
}

func (n *inode) length() uint64 {
	var l uint64
	for _, b := range n.blocks {
		l += b.numBytes
	}
	return l
}

// Start starts a NameNode and cfg.DataNodes DataNodes on 127.0.0.1.
func Start(cfg Config) (*Cluster, error) {
	if cfg.DataNodes <= 0 {
		cfg.DataNodes = 1
	}
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = 128 << 20
	}
	if cfg.Replication == 0 {
		cfg.Replication = 3
	}
	if cfg.Checksum.BytesPerChecksum == 0 {
		cfg.Checksum = datatransfer.DefaultChecksum()
	}
	c := &Cluster{cfg: cfg, done: make(chan struct{})}
	c.mu.inodes = map[string]*inode{"/": {dir: true, perm: 0o755, owner: "hdfs", group: "supergroup", id: 16385}}
	c.mu.nextID = 16386
	c.mu.nextBlk = 1073741825
	c.mu.gs = 1001
	for i := 0; i < cfg.DataNodes; i++ {
		dn, err := startDataNode(c, i)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.dns = append(c.dns, dn)
	}
	c.srv = ipc.NewServer(ipc.ServerConfig{Handlers: 4})
	c.register(c.srv.Service(clientProtocol))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.Close()
		return nil, err
	}
	c.l = l
	go func() {
		defer close(c.done)
		_ = c.srv.Serve(l)
	}()
	return c, nil
}

// Addr returns the NameNode's RPC address.
func (c *Cluster) Addr() string { return c.l.Addr().String() }

// DataNode returns DataNode i.
func (c *Cluster) DataNode(i int) *DataNode { return c.dns[i] }

// Close stops every server and waits for their goroutines.
func (c *Cluster) Close() {
	if c.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.srv.Shutdown(ctx)
		cancel()
		<-c.done
	}
	for _, dn := range c.dns {
		dn.close()
	}
}

// Calls returns "method src" of every NameNode call so far.
func (c *Cluster) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.mu.calls...)
}

// BadBlocks returns the reports received: "blk_<id> <datanode address>".
func (c *Cluster) BadBlocks() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.mu.bad...)
}

// Renewals returns how many renewLease calls arrived.
func (c *Cluster) Renewals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.renewed
}

// Mkdir creates a directory and its parents, owned by owner.
func (c *Cluster) Mkdir(p, owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mkdirsLocked(path.Clean(p), 0o755, owner)
}

func (c *Cluster) nowMs() uint64 {
	if c.cfg.Now != nil {
		return uint64(c.cfg.Now().UnixMilli())
	}
	return uint64(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC).UnixMilli())
}

func (c *Cluster) recordLocked(method, src string) {
	c.mu.calls = append(c.mu.calls, strings.TrimSpace(method+" "+src))
}

func user(ctx context.Context) string {
	cl, _ := ipc.CallerFromContext(ctx)
	return cl.User
}

func (c *Cluster) mkdirsLocked(p string, perm uint32, owner string) error {
	if n := c.mu.inodes[p]; n != nil {
		if !n.dir {
			return remoteerr.New(remoteerr.ClassFileAlreadyExists, "Path is not a directory: %s", p)
		}
		return nil
	}
	if p != "/" {
		if err := c.mkdirsLocked(path.Dir(p), perm, owner); err != nil {
			return err
		}
	}
	c.mu.nextID++
	c.mu.inodes[p] = &inode{dir: true, id: c.mu.nextID, perm: perm, owner: owner, group: "supergroup", mtime: c.nowMs(), atime: c.nowMs()}
	return nil
}

func (c *Cluster) statusLocked(local string, n *inode) *hdfs.HdfsFileStatusProto {
	t := hdfs.HdfsFileStatusProto_IS_FILE
	if n.dir {
		t = hdfs.HdfsFileStatusProto_IS_DIR
	}
	s := &hdfs.HdfsFileStatusProto{
		FileType:         t.Enum(),
		Path:             []byte(local),
		Length:           proto.Uint64(n.length()),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(n.perm)},
		Owner:            proto.String(n.owner),
		Group:            proto.String(n.group),
		ModificationTime: proto.Uint64(n.mtime),
		AccessTime:       proto.Uint64(n.atime),
		FileId:           proto.Uint64(n.id),
		ChildrenNum:      proto.Int32(-1),
	}
	if !n.dir {
		s.BlockReplication = proto.Uint32(n.repl)
		s.Blocksize = proto.Uint64(n.blockSize)
	}
	return s
}

func (c *Cluster) fileLocked(p string) (*inode, error) {
	n := c.mu.inodes[p]
	if n == nil {
		return nil, remoteerr.FileNotFound(p)
	}
	if n.dir {
		return nil, remoteerr.New(remoteerr.ClassFileNotFound, "Path is not a file: %s", p)
	}
	return n, nil
}

func (c *Cluster) register(svc *ipc.Service) {
	ipc.Handle(svc, "getServerDefaults", func(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
		ct := hdfs.ChecksumTypeProto(c.cfg.Checksum.Type)
		return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
			BlockSize: proto.Uint64(uint64(c.cfg.BlockSize)), BytesPerChecksum: proto.Uint32(uint32(c.cfg.Checksum.BytesPerChecksum)),
			WritePacketSize: proto.Uint32(65536), Replication: proto.Uint32(uint32(c.cfg.Replication)),
			FileBufferSize: proto.Uint32(4096), ChecksumType: &ct,
		}}, nil
	})
	ipc.Handle(svc, "getFileInfo", func(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.recordLocked("getFileInfo", req.GetSrc())
		n := c.mu.inodes[path.Clean(req.GetSrc())]
		if n == nil {
			return &hdfs.GetFileInfoResponseProto{}, nil
		}
		return &hdfs.GetFileInfoResponseProto{Fs: c.statusLocked("", n)}, nil
	})
	ipc.Handle(svc, "getListing", func(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p := path.Clean(req.GetSrc())
		n := c.mu.inodes[p]
		if n == nil {
			return &hdfs.GetListingResponseProto{}, nil
		}
		dl := &hdfs.DirectoryListingProto{PartialListing: []*hdfs.HdfsFileStatusProto{}, RemainingEntries: proto.Uint32(0)}
		if !n.dir {
			dl.PartialListing = append(dl.PartialListing, c.statusLocked("", n))
			return &hdfs.GetListingResponseProto{DirList: dl}, nil
		}
		var names []string
		for q := range c.mu.inodes {
			if q != p && path.Dir(q) == p {
				names = append(names, path.Base(q))
			}
		}
		sort.Strings(names)
		after := string(req.GetStartAfter())
		for _, nm := range names {
			if nm > after {
				dl.PartialListing = append(dl.PartialListing, c.statusLocked(nm, c.mu.inodes[path.Join(p, nm)]))
			}
		}
		return &hdfs.GetListingResponseProto{DirList: dl}, nil
	})
	ipc.Handle(svc, "mkdirs", func(ctx context.Context, req *hdfs.MkdirsRequestProto) (*hdfs.MkdirsResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p := path.Clean(req.GetSrc())
		if !req.GetCreateParent() && c.mu.inodes[path.Dir(p)] == nil {
			return nil, remoteerr.FileNotFound(path.Dir(p))
		}
		if err := c.mkdirsLocked(p, req.GetMasked().GetPerm()&0o1777, user(ctx)); err != nil {
			return nil, err
		}
		return &hdfs.MkdirsResponseProto{Result: proto.Bool(true)}, nil
	})
	ipc.Handle(svc, "delete", func(ctx context.Context, req *hdfs.DeleteRequestProto) (*hdfs.DeleteResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p := path.Clean(req.GetSrc())
		if c.mu.inodes[p] == nil {
			return &hdfs.DeleteResponseProto{Result: proto.Bool(false)}, nil
		}
		for q := range c.mu.inodes {
			if strings.HasPrefix(q, p+"/") {
				if !req.GetRecursive() {
					return nil, remoteerr.New(remoteerr.ClassPathIsNotEmptyDir, "`%s is non empty': Directory is not empty", p)
				}
				delete(c.mu.inodes, q)
			}
		}
		delete(c.mu.inodes, p)
		return &hdfs.DeleteResponseProto{Result: proto.Bool(true)}, nil
	})
	ipc.Handle(svc, "rename2", func(ctx context.Context, req *hdfs.Rename2RequestProto) (*hdfs.Rename2ResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		src, dst := path.Clean(req.GetSrc()), path.Clean(req.GetDst())
		if c.mu.inodes[src] == nil {
			return nil, remoteerr.FileNotFound(src)
		}
		if c.mu.inodes[dst] != nil && !req.GetOverwriteDest() {
			return nil, remoteerr.AlreadyExists(dst)
		}
		for q, n := range c.mu.inodes {
			if q == src || strings.HasPrefix(q, src+"/") {
				delete(c.mu.inodes, q)
				c.mu.inodes[dst+strings.TrimPrefix(q, src)] = n
			}
		}
		return &hdfs.Rename2ResponseProto{}, nil
	})
	ipc.Handle(svc, "setPermission", func(ctx context.Context, req *hdfs.SetPermissionRequestProto) (*hdfs.SetPermissionResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := c.mu.inodes[path.Clean(req.GetSrc())]
		if n == nil {
			return nil, remoteerr.FileNotFound(req.GetSrc())
		}
		n.perm = req.GetPermission().GetPerm() & 0o1777
		return &hdfs.SetPermissionResponseProto{}, nil
	})
	ipc.Handle(svc, "setTimes", func(ctx context.Context, req *hdfs.SetTimesRequestProto) (*hdfs.SetTimesResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := c.mu.inodes[path.Clean(req.GetSrc())]
		if n == nil {
			return nil, remoteerr.FileNotFound(req.GetSrc())
		}
		if int64(req.GetMtime()) >= 0 {
			n.mtime = req.GetMtime()
		}
		if int64(req.GetAtime()) >= 0 {
			n.atime = req.GetAtime()
		}
		return &hdfs.SetTimesResponseProto{}, nil
	})
	ipc.Handle(svc, "setReplication", func(ctx context.Context, req *hdfs.SetReplicationRequestProto) (*hdfs.SetReplicationResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		n, err := c.fileLocked(path.Clean(req.GetSrc()))
		if err != nil {
			return nil, err
		}
		n.repl = req.GetReplication()
		// Replicas appear at once, up to the number of DataNodes.
		for _, b := range n.blocks {
			b.dns = b.dns[:0]
			for i := 0; i < len(c.dns) && i < int(n.repl); i++ {
				b.dns = append(b.dns, i)
			}
		}
		return &hdfs.SetReplicationResponseProto{Result: proto.Bool(true)}, nil
	})
	ipc.Handle(svc, "renewLease", func(ctx context.Context, req *hdfs.RenewLeaseRequestProto) (*hdfs.RenewLeaseResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.mu.renewed++
		return &hdfs.RenewLeaseResponseProto{}, nil
	})
	ipc.Handle(svc, "isFileClosed", func(ctx context.Context, req *hdfs.IsFileClosedRequestProto) (*hdfs.IsFileClosedResponseProto, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		n, err := c.fileLocked(path.Clean(req.GetSrc()))
		if err != nil {
			return nil, err
		}
		return &hdfs.IsFileClosedResponseProto{Result: proto.Bool(n.holder == "")}, nil
	})
	ipc.Handle(svc, "create", c.create)
	ipc.Handle(svc, "append", c.append)
	ipc.Handle(svc, "addBlock", c.addBlock)
	ipc.Handle(svc, "abandonBlock", c.abandonBlock)
	ipc.Handle(svc, "complete", c.complete)
	ipc.Handle(svc, "fsync", c.fsync)
	ipc.Handle(svc, "getBlockLocations", c.getBlockLocations)
	ipc.Handle(svc, "updateBlockForPipeline", c.updateBlockForPipeline)
	ipc.Handle(svc, "updatePipeline", c.updatePipeline)
	ipc.Handle(svc, "reportBadBlocks", c.reportBadBlocks)
	ipc.Handle(svc, "getAdditionalDatanode", c.getAdditionalDatanode)
	ipc.Handle(svc, "truncate", c.truncate)
	ipc.Handle(svc, "recoverLease", c.recoverLease)
}

func (c *Cluster) create(ctx context.Context, req *hdfs.CreateRequestProto) (*hdfs.CreateResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("create", p)
	if n := c.mu.inodes[p]; n != nil {
		if n.dir {
			return nil, remoteerr.New(remoteerr.ClassFileAlreadyExists, "%s already exists as a directory", p)
		}
		if req.GetCreateFlag()&uint32(hdfs.CreateFlagProto_OVERWRITE) == 0 {
			return nil, remoteerr.AlreadyExists(p)
		}
	}
	parent := c.mu.inodes[path.Dir(p)]
	if parent == nil {
		if !req.GetCreateParent() {
			return nil, remoteerr.FileNotFound(path.Dir(p))
		}
		if err := c.mkdirsLocked(path.Dir(p), 0o755, user(ctx)); err != nil {
			return nil, err
		}
	} else if !parent.dir {
		return nil, remoteerr.New(remoteerr.ClassParentNotDirectory, "Parent path is not a directory: %s", path.Dir(p))
	}
	c.mu.nextID++
	n := &inode{id: c.mu.nextID, perm: req.GetMasked().GetPerm() & 0o1777, owner: user(ctx), group: "supergroup",
		mtime: c.nowMs(), atime: c.nowMs(), repl: req.GetReplication(), blockSize: req.GetBlockSize(), holder: req.GetClientName()}
	c.mu.inodes[p] = n
	return &hdfs.CreateResponseProto{Fs: c.statusLocked("", n)}, nil
}

func (c *Cluster) append(ctx context.Context, req *hdfs.AppendRequestProto) (*hdfs.AppendResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("append", p)
	n, err := c.fileLocked(p)
	if err != nil {
		return nil, err
	}
	if n.holder != "" {
		return nil, remoteerr.New(remoteerr.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s: file is already being written by %s", p, req.GetClientName(), n.holder)
	}
	n.holder = req.GetClientName()
	resp := &hdfs.AppendResponseProto{Stat: c.statusLocked("", n)}
	if k := len(n.blocks); k > 0 && n.blocks[k-1].numBytes < n.blockSize {
		resp.Block = c.locatedLocked(n, k-1)
	}
	return resp, nil
}

func (c *Cluster) leaseLocked(p, holder string) (*inode, error) {
	n, err := c.fileLocked(p)
	if err != nil {
		return nil, err
	}
	if n.holder != holder {
		return nil, remoteerr.New(remoteerr.ClassLeaseExpired, "No lease on %s: %s does not hold a lease", p, holder)
	}
	return n, nil
}

// commitLocked takes a block length the client reports.
func commitLocked(n *inode, b *hdfs.ExtendedBlockProto) error {
	if b == nil {
		return nil
	}
	for _, x := range n.blocks {
		if x.id == b.GetBlockId() {
			x.numBytes = b.GetNumBytes()
			return nil
		}
	}
	return remoteerr.New(remoteerr.ClassIOException, "block blk_%d is not a block of the file", b.GetBlockId())
}

func (c *Cluster) addBlock(ctx context.Context, req *hdfs.AddBlockRequestProto) (*hdfs.AddBlockResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("addBlock", p)
	n, err := c.leaseLocked(p, req.GetClientName())
	if err != nil {
		return nil, err
	}
	if err := commitLocked(n, req.GetPrevious()); err != nil {
		return nil, err
	}
	excluded := map[string]bool{}
	for _, e := range req.GetExcludeNodes() {
		excluded[e.GetId().GetDatanodeUuid()] = true
	}
	b := &block{id: c.mu.nextBlk, gs: c.mu.gs}
	c.mu.nextBlk++
	c.mu.gs++
	for i, dn := range c.dns {
		if len(b.dns) < int(max(n.repl, 1)) && !excluded[dn.uuid] {
			b.dns = append(b.dns, i)
		}
	}
	if len(b.dns) == 0 {
		return nil, remoteerr.New(remoteerr.ClassIOException, "File %s could only be written to 0 of the 1 minReplication nodes.", p)
	}
	n.blocks = append(n.blocks, b)
	return &hdfs.AddBlockResponseProto{Block: c.locatedLocked(n, len(n.blocks)-1)}, nil
}

func (c *Cluster) abandonBlock(ctx context.Context, req *hdfs.AbandonBlockRequestProto) (*hdfs.AbandonBlockResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("abandonBlock", p)
	n, err := c.leaseLocked(p, req.GetHolder())
	if err != nil {
		return nil, err
	}
	if k := len(n.blocks); k > 0 && n.blocks[k-1].id == req.GetB().GetBlockId() {
		n.blocks = n.blocks[:k-1]
	}
	return &hdfs.AbandonBlockResponseProto{}, nil
}

func (c *Cluster) complete(ctx context.Context, req *hdfs.CompleteRequestProto) (*hdfs.CompleteResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("complete", p)
	n, err := c.leaseLocked(p, req.GetClientName())
	if err != nil {
		return nil, err
	}
	if err := commitLocked(n, req.GetLast()); err != nil {
		return nil, err
	}
	if c.CompleteFalse.Load() > 0 {
		c.CompleteFalse.Add(-1)
		return &hdfs.CompleteResponseProto{Result: proto.Bool(false)}, nil
	}
	n.holder = ""
	n.mtime = c.nowMs()
	return &hdfs.CompleteResponseProto{Result: proto.Bool(true)}, nil
}

func (c *Cluster) fsync(ctx context.Context, req *hdfs.FsyncRequestProto) (*hdfs.FsyncResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("fsync", p)
	n, err := c.leaseLocked(p, req.GetClient())
	if err != nil {
		return nil, err
	}
	if k := len(n.blocks); k > 0 && req.GetLastBlockLength() >= 0 {
		n.blocks[k-1].numBytes = uint64(req.GetLastBlockLength())
	}
	return &hdfs.FsyncResponseProto{}, nil
}

func (c *Cluster) locatedLocked(n *inode, i int) *hdfs.LocatedBlockProto {
	var off uint64
	for _, b := range n.blocks[:i] {
		off += b.numBytes
	}
	b := n.blocks[i]
	lb := &hdfs.LocatedBlockProto{
		B:          &hdfs.ExtendedBlockProto{PoolId: proto.String(BlockPool), BlockId: proto.Uint64(b.id), GenerationStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(b.numBytes)},
		Offset:     proto.Uint64(off),
		Corrupt:    proto.Bool(false),
		BlockToken: &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")},
	}
	for _, d := range b.dns {
		lb.Locs = append(lb.Locs, c.dns[d].info())
		lb.StorageIDs = append(lb.StorageIDs, "DS-"+c.dns[d].uuid)
		lb.StorageTypes = append(lb.StorageTypes, hdfs.StorageTypeProto_DISK)
	}
	return lb
}

func (c *Cluster) getBlockLocations(ctx context.Context, req *hdfs.GetBlockLocationsRequestProto) (*hdfs.GetBlockLocationsResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("getBlockLocations", p)
	n, err := c.fileLocked(p)
	if err != nil {
		return nil, err
	}
	uc := n.holder != ""
	lbs := &hdfs.LocatedBlocksProto{UnderConstruction: proto.Bool(uc), IsLastBlockComplete: proto.Bool(!uc), Blocks: []*hdfs.LocatedBlockProto{}}
	complete := len(n.blocks)
	if uc && complete > 0 {
		complete--
		lbs.LastBlock = c.locatedLocked(n, complete)
	}
	var length uint64
	for _, b := range n.blocks[:complete] {
		length += b.numBytes
	}
	lbs.FileLength = proto.Uint64(length)
	start, end := req.GetOffset(), req.GetOffset()+req.GetLength()
	var off uint64
	for i, b := range n.blocks[:complete] {
		if off+b.numBytes > start && off < end {
			lbs.Blocks = append(lbs.Blocks, c.locatedLocked(n, i))
		}
		off += b.numBytes
	}
	if !uc && len(n.blocks) > 0 {
		lbs.LastBlock = c.locatedLocked(n, len(n.blocks)-1)
	}
	return &hdfs.GetBlockLocationsResponseProto{Locations: lbs}, nil
}

func (c *Cluster) updateBlockForPipeline(ctx context.Context, req *hdfs.UpdateBlockForPipelineRequestProto) (*hdfs.UpdateBlockForPipelineResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordLocked("updateBlockForPipeline", "")
	lb := &hdfs.LocatedBlockProto{
		B:          proto.Clone(req.GetBlock()).(*hdfs.ExtendedBlockProto),
		Offset:     proto.Uint64(0),
		Corrupt:    proto.Bool(false),
		BlockToken: &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")},
	}
	lb.B.GenerationStamp = proto.Uint64(c.mu.gs)
	c.mu.gs++
	return &hdfs.UpdateBlockForPipelineResponseProto{Block: lb}, nil
}

func (c *Cluster) updatePipeline(ctx context.Context, req *hdfs.UpdatePipelineRequestProto) (*hdfs.UpdatePipelineResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordLocked("updatePipeline", "")
	for _, n := range c.mu.inodes {
		for _, b := range n.blocks {
			if b.id == req.GetOldBlock().GetBlockId() {
				b.gs = req.GetNewBlock().GetGenerationStamp()
				b.numBytes = req.GetNewBlock().GetNumBytes()
				b.dns = b.dns[:0]
				for _, id := range req.GetNewNodes() {
					for i, dn := range c.dns {
						if dn.uuid == id.GetDatanodeUuid() {
							b.dns = append(b.dns, i)
						}
					}
				}
				return &hdfs.UpdatePipelineResponseProto{}, nil
			}
		}
	}
	return nil, errors.New("updatePipeline: unknown block")
}

func (c *Cluster) reportBadBlocks(ctx context.Context, req *hdfs.ReportBadBlocksRequestProto) (*hdfs.ReportBadBlocksResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, lb := range req.GetBlocks() {
		for _, l := range lb.GetLocs() {
			c.mu.bad = append(c.mu.bad, fmt.Sprintf("blk_%d %s:%d", lb.GetB().GetBlockId(), l.GetId().GetIpAddr(), l.GetId().GetXferPort()))
		}
	}
	return &hdfs.ReportBadBlocksResponseProto{}, nil
}

// truncate cuts the file at once. It answers true when the new length is
// on a block boundary; otherwise false, as a NameNode that starts a block
// recovery does, although the cut has already happened.
func (c *Cluster) truncate(ctx context.Context, req *hdfs.TruncateRequestProto) (*hdfs.TruncateResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("truncate", p)
	n, err := c.fileLocked(p)
	if err != nil {
		return nil, err
	}
	if n.holder != "" {
		return nil, remoteerr.New(remoteerr.ClassAlreadyBeingCreated, "Failed to TRUNCATE_FILE %s: file is being written", p)
	}
	want := req.GetNewLength()
	if want > n.length() {
		return nil, remoteerr.New(remoteerr.ClassHadoopIllegalArg, "Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", n.length(), want)
	}
	var off uint64
	onBoundary := true
	keep := n.blocks[:0]
	for _, b := range n.blocks {
		switch {
		case off+b.numBytes <= want:
			keep = append(keep, b)
		case off < want:
			b.numBytes = want - off
			for _, d := range b.dns {
				c.dns[d].cut(b.id, int(b.numBytes))
			}
			keep = append(keep, b)
			onBoundary = false
		}
		off += b.numBytes
	}
	n.blocks = keep
	return &hdfs.TruncateResponseProto{Result: proto.Bool(onBoundary)}, nil
}

func (c *Cluster) recoverLease(ctx context.Context, req *hdfs.RecoverLeaseRequestProto) (*hdfs.RecoverLeaseResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := path.Clean(req.GetSrc())
	c.recordLocked("recoverLease", p)
	n, err := c.fileLocked(p)
	if err != nil {
		return nil, err
	}
	n.holder = ""
	return &hdfs.RecoverLeaseResponseProto{Result: proto.Bool(true)}, nil
}

// getAdditionalDatanode picks DataNodes outside existings and excludes,
// lowest index first, and answers with existings followed by them.
func (c *Cluster) getAdditionalDatanode(ctx context.Context, req *hdfs.GetAdditionalDatanodeRequestProto) (*hdfs.GetAdditionalDatanodeResponseProto, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordLocked("getAdditionalDatanode", path.Clean(req.GetSrc()))
	skip := map[string]bool{}
	for _, d := range append(append([]*hdfs.DatanodeInfoProto{}, req.GetExistings()...), req.GetExcludes()...) {
		skip[d.GetId().GetDatanodeUuid()] = true
	}
	lb := &hdfs.LocatedBlockProto{
		B: req.GetBlk(), Offset: proto.Uint64(0), Corrupt: proto.Bool(false),
		BlockToken: &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")},
	}
	for _, d := range req.GetExistings() {
		lb.Locs = append(lb.Locs, d)
		lb.StorageIDs = append(lb.StorageIDs, "DS-"+d.GetId().GetDatanodeUuid())
		lb.StorageTypes = append(lb.StorageTypes, hdfs.StorageTypeProto_DISK)
	}
	added := 0
	for _, dn := range c.dns {
		if added < int(req.GetNumAdditionalNodes()) && !skip[dn.uuid] {
			lb.Locs = append(lb.Locs, dn.info())
			lb.StorageIDs = append(lb.StorageIDs, "DS-"+dn.uuid)
			lb.StorageTypes = append(lb.StorageTypes, hdfs.StorageTypeProto_DISK)
			added++
		}
	}
	if added == 0 {
		return nil, remoteerr.New(remoteerr.ClassIOException, "no additional datanode available")
	}
	return &hdfs.GetAdditionalDatanodeResponseProto{Block: lb}, nil
}
