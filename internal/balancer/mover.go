package balancer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// The mover (hdfs mover): it walks the given paths and, for every block
// whose replicas are not on the storage types its file's storage policy asks
// for, moves a replica on a type in excess to a storage of a type that is
// missing, on another DataNode that does not hold the block, with the
// balancer's REPLACE_BLOCK (the NameNode then deletes the moved replica).
// It repeats until every block satisfies its policy, no block can be moved,
// or MoverMaxIterations pass without progress. Moves between two volumes of
// one DataNode are not made: a replica is moved only to another node.

// MoverMaxIterations bounds the iterations of one mover run
// (dfs.mover.retry.max.attempts is 10 for failed moves; an iteration that
// schedules moves counts too).
const MoverMaxIterations = 20

// moverNode is a live DataNode and the room on each of its storage types.
type moverNode struct {
	info *hdfs.DatanodeInfoProto
	room map[hdfs.StorageTypeProto]int64
}

// moverRun is one mover run's state.
type moverRun struct {
	b     *balancer
	nodes map[string]*moverNode // by uuid
	// pending: blocks needing a move; moved: moves made this iteration;
	// stuck: blocks needing a move for which none could be scheduled.
	pending, moved, stuck int
	failed                int
}

// RunMover runs the mover on paths (absolute HDFS paths; "/" when empty)
// and returns its exit status; its last lines go to out as Hadoop's mover
// prints them. cfg needs NameNodes, URI, Authority and User; Sleep is the
// pause between iterations.
func RunMover(ctx context.Context, cfg Config, paths []string, out io.Writer) ExitStatus {
	cfg.fillDefaults()
	cfg.idPath = MoverIDPath
	start := cfg.Clock.Now()
	defer func() {
		now := cfg.Clock.Now()
		PrintTook(out, "Mover", now, now.Sub(start))
	}()
	if len(cfg.NameNodes) == 0 {
		fmt.Fprintln(out, "java.lang.IllegalArgumentException: no NameNode address.  Exiting ...")
		return IllegalArguments
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			fmt.Fprintf(out, "java.lang.IllegalArgumentException: %s is not an absolute path.  Exiting ...\n", p)
			return IllegalArguments
		}
	}
	b, err := connect(ctx, cfg)
	if err != nil {
		if errors.Is(err, ErrAlreadyRunning) {
			fmt.Fprintln(out, "Another Mover is running.  Exiting ...")
			return AlreadyRunning
		}
		fmt.Fprintf(out, "%s.  Exiting ...\n", javaError(err))
		return IOException
	}
	defer b.close()
	noProgress := 0
	for iteration := 0; iteration < MoverMaxIterations; iteration++ {
		r := &moverRun{b: b}
		if err := r.iterate(ctx, paths); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(out, "java.lang.InterruptedException.  Exiting ...")
				return Interrupted
			}
			fmt.Fprintf(out, "%s.  Exiting ...\n", javaError(err))
			return IOException
		}
		cfg.Logger.Info("mover iteration", "iteration", iteration, "pending", r.pending, "moved", r.moved, "stuck", r.stuck, "failed", r.failed)
		switch {
		case r.pending == 0:
			fmt.Fprintln(out, "Mover Successful: all blocks satisfy the specified storage policy. Exiting...")
			return Success
		case r.moved == 0 && r.failed == 0:
			fmt.Fprintln(out, "Some blocks can't be moved. Exiting...")
			return NoMoveBlock
		case r.moved == 0:
			noProgress++
			if noProgress >= 3 {
				fmt.Fprintf(out, "Failed to move some blocks after %d retries. Exiting...\n", noProgress)
				return NoMoveProgress
			}
		default:
			noProgress = 0
		}
		if !sleep(ctx, cfg.Clock, cfg.Sleep, nil) {
			fmt.Fprintln(out, "java.lang.InterruptedException.  Exiting ...")
			return Interrupted
		}
	}
	fmt.Fprintf(out, "Failed to move some blocks after %d retries. Exiting...\n", MoverMaxIterations)
	return NoMoveProgress
}

// iterate is one pass over the paths: every block checked, the moves its
// policy needs made.
func (r *moverRun) iterate(ctx context.Context, paths []string) error {
	if err := r.readNodes(ctx); err != nil {
		return err
	}
	for _, p := range paths {
		if err := r.walk(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// readNodes reads the live DataNodes in service and their storages.
func (r *moverRun) readNodes(ctx context.Context) error {
	var rep hdfs.GetDatanodeStorageReportResponseProto
	if err := r.b.client.Call(ctx, "getDatanodeStorageReport", &hdfs.GetDatanodeStorageReportRequestProto{Type: hdfs.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		return err
	}
	r.nodes = map[string]*moverNode{}
	for _, d := range rep.GetDatanodeStorageReports() {
		info := d.GetDatanodeInfo()
		if info.GetAdminState() != hdfs.DatanodeInfoProto_NORMAL {
			continue
		}
		n := &moverNode{info: info, room: map[hdfs.StorageTypeProto]int64{}}
		for _, s := range d.GetStorageReports() {
			if s.GetFailed() {
				continue
			}
			n.room[s.GetStorage().GetStorageType()] += int64(s.GetRemaining())
		}
		r.nodes[info.GetId().GetDatanodeUuid()] = n
	}
	return nil
}

// walk checks the file at p, or every file below the directory at p.
func (r *moverRun) walk(ctx context.Context, p string) error {
	fi, err := r.b.fs.Stat(ctx, p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return r.checkFile(ctx, p, fi.Status().Replication)
	}
	list, err := r.b.fs.ReadDir(ctx, p)
	if err != nil {
		return err
	}
	for _, c := range list {
		if err := r.walk(ctx, path.Join(p, c.Name())); err != nil {
			return err
		}
	}
	return nil
}

// wantedTypes is the storage type of each of repl replicas under policy
// p (BlockStoragePolicy.chooseStorageTypes): its types in order, the last
// repeated, RAM_DISK left out.
func wantedTypes(p client.StoragePolicy, repl int) []hdfs.StorageTypeProto {
	var out []hdfs.StorageTypeProto
	conv := func(n string) (hdfs.StorageTypeProto, bool) {
		v, ok := hdfs.StorageTypeProto_value[n]
		return hdfs.StorageTypeProto(v), ok && n != "RAM_DISK"
	}
	for _, n := range p.StorageTypes {
		if len(out) == repl {
			break
		}
		if t, ok := conv(n); ok {
			out = append(out, t)
		}
	}
	if k := len(p.StorageTypes); k > 0 {
		if t, ok := conv(p.StorageTypes[k-1]); ok {
			for len(out) < repl {
				out = append(out, t)
			}
		}
	}
	return out
}

// checkFile moves what the blocks of the closed file p need.
func (r *moverRun) checkFile(ctx context.Context, p string, repl uint16) error {
	pol, err := r.b.fs.StoragePolicy(ctx, p)
	if err != nil {
		return err
	}
	var resp hdfs.GetBlockLocationsResponseProto
	req := &hdfs.GetBlockLocationsRequestProto{Src: proto.String(p), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 62)}
	if err := r.b.client.Call(ctx, "getBlockLocations", req, &resp); err != nil {
		return err
	}
	lbs := resp.GetLocations()
	if lbs.GetUnderConstruction() {
		return nil // being written: its blocks are not final
	}
	for _, lb := range lbs.GetBlocks() {
		r.checkBlock(ctx, lb, wantedTypes(pol, int(repl)))
	}
	return nil
}

// checkBlock pairs the block's replicas on types in excess with the types
// it misses and moves each such replica to another node.
func (r *moverRun) checkBlock(ctx context.Context, lb *hdfs.LocatedBlockProto, want []hdfs.StorageTypeProto) {
	if lb.GetCorrupt() || len(lb.GetLocs()) == 0 {
		return
	}
	missing := append([]hdfs.StorageTypeProto(nil), want...)
	var excess []int // indexes of the replicas on types not wanted
	for i := range lb.GetLocs() {
		t := hdfs.StorageTypeProto_DISK
		if i < len(lb.GetStorageTypes()) {
			t = lb.GetStorageTypes()[i]
		}
		found := false
		for j, m := range missing {
			if m == t {
				missing = append(missing[:j], missing[j+1:]...)
				found = true
				break
			}
		}
		if !found {
			excess = append(excess, i)
		}
	}
	if len(missing) == 0 || len(excess) == 0 {
		return
	}
	r.pending++
	holders := map[string]bool{}
	for _, l := range lb.GetLocs() {
		holders[l.GetId().GetDatanodeUuid()] = true
	}
	size := int64(lb.GetB().GetNumBytes())
	movedAny := false
	for k, i := range excess {
		if k >= len(missing) {
			break
		}
		t := missing[k]
		target := r.chooseTarget(holders, t, size)
		if target == nil {
			continue
		}
		src := lb.GetLocs()[i]
		eb := lb.GetB()
		addr := fmt.Sprintf("%s:%d", target.info.GetId().GetIpAddr(), target.info.GetId().GetXferPort())
		err := r.b.replaceBlock(ctx, addr, src, src.GetId().GetDatanodeUuid(), t, eb)
		if err != nil {
			r.failed++
			r.b.cfg.Logger.Warn(fmt.Sprintf("Failed to move blk_%d_%d to %s:%s: %v", eb.GetBlockId(), eb.GetGenerationStamp(), addr, t, err))
			continue
		}
		r.b.cfg.Logger.Info(fmt.Sprintf("Successfully moved blk_%d_%d with size=%d from %s to %s:%s", eb.GetBlockId(),
			eb.GetGenerationStamp(), size, src.GetId().GetIpAddr(), addr, t))
		holders[target.info.GetId().GetDatanodeUuid()] = true
		target.room[t] -= size
		movedAny = true
	}
	if movedAny {
		r.moved++
	} else {
		r.stuck++
	}
}

// chooseTarget is a live node not holding the block with room on type t,
// at random among those.
func (r *moverRun) chooseTarget(holders map[string]bool, t hdfs.StorageTypeProto, size int64) *moverNode {
	var cands []*moverNode
	for uuid, n := range r.nodes {
		if !holders[uuid] && n.room[t] >= size {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[r.b.cfg.Rand.IntN(len(cands))]
}
