package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/blocklist"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	dnpb "github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	hstorage "github.com/hdfsgo/hdfsgo/internal/storage"
)

// OpBlockReport is NNThroughputBenchmark's blockReport: simulated DataNodes
// register with the NameNode over DatanodeProtocol, files are written to
// them (addBlock, then an incremental report from every target, as a
// pipeline would), and each timed operation is one node's full block report
// of its BlocksPerReport replicas.
const OpBlockReport = "blockReport"

// Defaults of the blockReport op's options (Hadoop's).
const (
	DefaultDatanodes       = 10
	DefaultBlocksPerReport = 100
	DefaultBlocksPerFile   = 10
	// reportedLength is the length every simulated replica has.
	reportedLength = 1024
	// filesInFlight is how many files a preparing thread writes at once:
	// one incremental report per node covers a block of each.
	filesInFlight = 64
)

// simNode is one simulated DataNode.
type simNode struct {
	reg     *dnpb.DatanodeRegistrationProto
	storage *hdfs.DatanodeStorageProto
	c       *ipc.Client
	mu      sync.Mutex
	blocks  []blocklist.Replica
}

type reportRun struct {
	opts    *Options
	tg      *target
	nodes   []*simNode
	byUUID  map[string]*simNode
	buffers bool // the NameNode advertised the buffers encoding
	repl    int
	pool    string
}

func runBlockReport(ctx context.Context, opts Options, out io.Writer) error {
	if opts.Datanodes == 0 {
		opts.Datanodes = DefaultDatanodes
	}
	if opts.BlocksPerReport == 0 {
		opts.BlocksPerReport = DefaultBlocksPerReport
	}
	if opts.BlocksPerFile == 0 {
		opts.BlocksPerFile = DefaultBlocksPerFile
	}
	if opts.Datanodes < 1 || opts.BlocksPerReport < 1 || opts.BlocksPerFile < 1 {
		return fmt.Errorf("%w: -datanodes, -blocksPerReport and -blocksPerFile must be positive", ErrBadOptions)
	}
	tg, err := openTarget(ctx, &opts)
	if err != nil {
		return err
	}
	defer tg.close()
	r := &reportRun{opts: &opts, tg: tg, byUUID: map[string]*simNode{}, repl: min(3, opts.Datanodes)}
	fmt.Fprintf(out, "NameNode: %s (%s), user %s, %s\n", tg.addrs[0], tg.kind(), opts.User, connMode(&opts))
	stop, err := r.start(ctx)
	if err != nil {
		return err
	}
	defer stop()

	base := BaseDir + "/" + OpBlockReport
	if err := (&opRun{tg: tg, base: base}).clean(ctx); err != nil {
		return err
	}
	total := (opts.Datanodes*opts.BlocksPerReport + r.repl - 1) / r.repl
	files := (total + opts.BlocksPerFile - 1) / opts.BlocksPerFile
	total = files * opts.BlocksPerFile
	prep := time.Now()
	if err := r.write(ctx, base, files); err != nil {
		return fmt.Errorf("bench: blockReport: writing %d blocks: %w", total, err)
	}
	prepTime := time.Since(prep)
	var replicas int
	for _, n := range r.nodes {
		replicas += len(n.blocks)
	}

	reports := make([][]*dnpb.StorageBlockReportProto, len(r.nodes))
	for i, n := range r.nodes {
		reports[i] = []*dnpb.StorageBlockReportProto{r.encode(n)}
	}
	if tg.nn != nil {
		tg.nn.WriteLockHoldMax(true)
	}
	st, err := tg.timed(ctx, opts.Files, func(ctx context.Context, _ *ipc.Client, _, i int) error {
		n := r.nodes[i%len(r.nodes)]
		var resp dnpb.BlockReportResponseProto
		return n.c.Call(ctx, "blockReport", &dnpb.BlockReportRequestProto{
			Registration: n.reg, BlockPoolId: proto.String(r.pool), Reports: reports[i%len(r.nodes)],
			Context: &dnpb.BlockReportContextProto{TotalRpcs: proto.Int32(1), CurRpc: proto.Int32(0), Id: proto.Int64(int64(i)), LeaseId: proto.Uint64(0)},
		}, &resp)
	})
	if err != nil {
		return fmt.Errorf("bench: blockReport: %w", err)
	}
	var reported int
	for i := range st.ops {
		reported += len(r.nodes[i%len(r.nodes)].blocks)
	}
	if !opts.KeepResults {
		if err := (&opRun{tg: tg, base: base}).clean(ctx); err != nil {
			return err
		}
	}
	enc := "blocksBuffers"
	if !r.buffers {
		enc = "long list (the NameNode does not advertise buffers)"
	}
	if opts.LegacyReport {
		enc = "long list (-legacyReport)"
	}
	fmt.Fprintf(out, "\n--- %s inputs ---\n", OpBlockReport)
	fmt.Fprintf(out, "reports = %d\nnrThreads = %d\ndatanodes = %d\nblocksPerReport = %d\nblocksPerFile = %d\nreplication = %d\nencoding = %s\n",
		opts.Files, opts.Threads, opts.Datanodes, opts.BlocksPerReport, opts.BlocksPerFile, r.repl, enc)
	fmt.Fprintf(out, "Prepared %d blocks (%d replicas) in %d files in %.1f s\n", total, replicas, files, prepTime.Seconds())
	fmt.Fprintf(out, "--- %s stats ---\n", OpBlockReport)
	fmt.Fprintf(out, "# operations: %d\n", st.ops)
	fmt.Fprintf(out, "Elapsed Time: %d ms\n", st.elapsed.Milliseconds())
	fmt.Fprintf(out, "Ops per sec: %.1f\n", st.opsPerSec())
	fmt.Fprintf(out, "Average Time: %s ms\n", ms(st.average()))
	p50, p99, p999, _ := st.percentiles(nil)
	fmt.Fprintf(out, "Latency p50 / p99 / p99.9: %s / %s / %s ms\n", ms(p50), ms(p99), ms(p999))
	if st.elapsed > 0 {
		fmt.Fprintf(out, "Replicas reported per sec: %.0f\n", float64(reported)/st.elapsed.Seconds())
	}
	if tg.nn != nil {
		m, n := tg.nn.WriteLockHoldMax(false)
		fmt.Fprintf(out, "Longest namesystem write lock hold during the reports: %s ms (%d holds since start)\n", ms(m), n)
	}
	return nil
}

// start registers the simulated nodes and keeps them heartbeating; stop
// ends the heartbeats and closes their connections.
func (r *reportRun) start(ctx context.Context) (stop func(), err error) {
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	hbCtx, stopHB := context.WithCancel(ctx)
	var hb sync.WaitGroup
	hb.Add(1)
	go func() { defer hb.Done(); r.heartbeats(hbCtx) }()
	return func() {
		stopHB()
		hb.Wait()
		for _, n := range r.nodes {
			n.c.Close()
		}
	}, nil
}

// register makes the simulated nodes known to the NameNode.
func (r *reportRun) register(ctx context.Context) error {
	var pool string
	layoutVersion := int32(hstorage.DataNodeLayoutVersion) // negative; carried as uint32 like Java's int
	for i := range r.opts.Datanodes {
		c := ipc.NewClient(ipc.ClientConfig{Addresses: r.tg.addrs, User: r.opts.User, Protocol: namenode.DatanodeProtocolName, MaxRetries: -1})
		var vr hdfs.VersionResponseProto
		if err := c.Call(ctx, "versionRequest", &hdfs.VersionRequestProto{}, &vr); err != nil {
			c.Close()
			return fmt.Errorf("bench: versionRequest: %w", err)
		}
		ns := vr.GetInfo()
		pool = ns.GetBlockPoolID()
		r.buffers = ns.GetCapabilities()&blocklist.CapabilityBlockReportBuffers != 0
		uuid := fmt.Sprintf("bench-dn-%d", i)
		reg := &dnpb.DatanodeRegistrationProto{
			DatanodeID: &hdfs.DatanodeIDProto{
				IpAddr: proto.String(fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250)), HostName: proto.String(uuid), DatanodeUuid: proto.String(uuid),
				XferPort: proto.Uint32(9866), InfoPort: proto.Uint32(9864), IpcPort: proto.Uint32(9867),
			},
			StorageInfo: &hdfs.StorageInfoProto{
				LayoutVersion: proto.Uint32(uint32(layoutVersion)), NamespceID: proto.Uint32(ns.GetStorageInfo().GetNamespceID()),
				ClusterID: proto.String(ns.GetStorageInfo().GetClusterID()), CTime: proto.Uint64(ns.GetStorageInfo().GetCTime()),
			},
			Keys: &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(false), KeyUpdateInterval: proto.Uint64(0), TokenLifeTime: proto.Uint64(0),
				CurrentKey: &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0), KeyBytes: []byte{}}},
			SoftwareVersion: proto.String("3.3.6"),
		}
		var rr dnpb.RegisterDatanodeResponseProto
		if err := c.Call(ctx, "registerDatanode", &dnpb.RegisterDatanodeRequestProto{Registration: reg}, &rr); err != nil {
			c.Close()
			return fmt.Errorf("bench: registerDatanode %s: %w", uuid, err)
		}
		n := &simNode{reg: rr.GetRegistration(), c: c,
			storage: &hdfs.DatanodeStorageProto{StorageUuid: proto.String("DS-" + uuid), State: hdfs.DatanodeStorageProto_NORMAL.Enum(), StorageType: hdfs.StorageTypeProto_DISK.Enum()}}
		r.nodes = append(r.nodes, n)
		r.byUUID[uuid] = n
	}
	r.pool = pool
	return r.heartbeatAll(ctx)
}

// heartbeatAll sends one heartbeat from every node: a node's storage and
// its free space are known to placement from its first one.
func (r *reportRun) heartbeatAll(ctx context.Context) error {
	for _, n := range r.nodes {
		var resp dnpb.HeartbeatResponseProto
		err := n.c.Call(ctx, "sendHeartbeat", &dnpb.HeartbeatRequestProto{
			Registration: n.reg,
			Reports: []*hdfs.StorageReportProto{{StorageUuid: n.storage.StorageUuid, Storage: n.storage,
				Capacity: proto.Uint64(1 << 50), DfsUsed: proto.Uint64(0), Remaining: proto.Uint64(1 << 50), BlockPoolUsed: proto.Uint64(0)}},
		}, &resp)
		if err != nil {
			return fmt.Errorf("bench: sendHeartbeat: %w", err)
		}
	}
	return nil
}

// heartbeats keeps the nodes alive until ctx ends.
func (r *reportRun) heartbeats(ctx context.Context) {
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.heartbeatAll(ctx); err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("bench heartbeat", "err", err)
			}
		}
	}
}

// encode is node n's full report in the encoding the NameNode reads best.
func (r *reportRun) encode(n *simNode) *dnpb.StorageBlockReportProto {
	rep := &dnpb.StorageBlockReportProto{Storage: n.storage}
	if r.buffers && !r.opts.LegacyReport {
		rep.BlocksBuffers, _ = blocklist.EncodeBuffers(n.blocks)
		rep.NumberOfBlocks = proto.Uint64(uint64(len(n.blocks)))
	} else {
		rep.Blocks = blocklist.EncodeLongs(n.blocks)
		rep.NumberOfBlocks = proto.Uint64(uint64(len(n.blocks)))
	}
	return rep
}

// write writes files of BlocksPerFile blocks under base: each thread keeps
// up to filesInFlight files open and, round after round, adds a block to
// each, then tells every target node in one incremental report per node.
func (r *reportRun) write(ctx context.Context, base string, files int) error {
	gen := newNames(base, "ThroughputBench", files, max(r.opts.FilesPerDir, 1))
	t := r.opts.Threads
	first := split(files, t)
	errs := make(chan error, t)
	var wg sync.WaitGroup
	for th := range t {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := r.tg.client(th)
			client := clientName(OpBlockReport, th)
			for lo := first[th]; lo < first[th+1]; lo += filesInFlight {
				hi := min(lo+filesInFlight, first[th+1])
				if err := r.writeFiles(ctx, c, client, gen, lo, hi); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

type openFile struct {
	src  string
	id   uint64
	last *hdfs.ExtendedBlockProto
}

func (r *reportRun) writeFiles(ctx context.Context, c *ipc.Client, client string, gen names, lo, hi int) error {
	fs := make([]openFile, 0, hi-lo)
	for i := lo; i < hi; i++ {
		src := gen.path(i)
		var cr hdfs.CreateResponseProto
		if err := c.Call(ctx, "create", &hdfs.CreateRequestProto{
			Src: proto.String(src), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)}, ClientName: proto.String(client),
			CreateFlag: proto.Uint32(0x01 | 0x02), CreateParent: proto.Bool(true), Replication: proto.Uint32(uint32(r.repl)), BlockSize: proto.Uint64(blockSize),
		}, &cr); err != nil {
			return fmt.Errorf("create %s: %w", src, err)
		}
		fs = append(fs, openFile{src: src, id: cr.GetFs().GetFileId()})
	}
	for range r.opts.BlocksPerFile {
		got := map[*simNode][]*dnpb.ReceivedDeletedBlockInfoProto{}
		for k := range fs {
			f := &fs[k]
			var resp hdfs.AddBlockResponseProto
			if err := c.Call(ctx, "addBlock", &hdfs.AddBlockRequestProto{Src: proto.String(f.src), ClientName: proto.String(client), Previous: f.last, FileId: proto.Uint64(f.id)}, &resp); err != nil {
				return fmt.Errorf("addBlock %s: %w", f.src, err)
			}
			lb := resp.GetBlock()
			b := proto.Clone(lb.GetB()).(*hdfs.ExtendedBlockProto)
			b.NumBytes = proto.Uint64(reportedLength)
			f.last = b
			for _, loc := range lb.GetLocs() {
				n := r.byUUID[loc.GetId().GetDatanodeUuid()]
				if n == nil {
					return fmt.Errorf("%w: addBlock chose %s, not a simulated node", ErrCheck, loc.GetId().GetDatanodeUuid())
				}
				got[n] = append(got[n], &dnpb.ReceivedDeletedBlockInfoProto{
					Block:  &hdfs.BlockProto{BlockId: b.BlockId, GenStamp: b.GenerationStamp, NumBytes: b.NumBytes},
					Status: dnpb.ReceivedDeletedBlockInfoProto_RECEIVED.Enum(),
				})
			}
		}
		for n, items := range got {
			var resp dnpb.BlockReceivedAndDeletedResponseProto
			if err := n.c.Call(ctx, "blockReceivedAndDeleted", &dnpb.BlockReceivedAndDeletedRequestProto{
				Registration: n.reg, BlockPoolId: proto.String(r.pool),
				Blocks: []*dnpb.StorageReceivedDeletedBlocksProto{{StorageUuid: n.storage.StorageUuid, Storage: n.storage, Blocks: items}},
			}, &resp); err != nil {
				return fmt.Errorf("blockReceivedAndDeleted: %w", err)
			}
			n.mu.Lock()
			for _, it := range items {
				n.blocks = append(n.blocks, blocklist.Replica{ID: int64(it.Block.GetBlockId()), NumBytes: reportedLength, GenStamp: int64(it.Block.GetGenStamp()), State: blocklist.Finalized})
			}
			n.mu.Unlock()
		}
	}
	for _, f := range fs {
		for {
			var resp hdfs.CompleteResponseProto
			if err := c.Call(ctx, "complete", &hdfs.CompleteRequestProto{Src: proto.String(f.src), ClientName: proto.String(client), Last: f.last, FileId: proto.Uint64(f.id)}, &resp); err != nil {
				return fmt.Errorf("complete %s: %w", f.src, err)
			}
			if resp.GetResult() {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
