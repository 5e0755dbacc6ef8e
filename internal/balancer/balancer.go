// Package balancer is `hdfs balancer`: a client-side tool that moves block
// replicas from over-utilized DataNodes to under-utilized ones until every
// node's utilization is within a threshold of the cluster's average.
//
// It talks to the NameNode over RPC only — ClientProtocol getDatanodeReport
// for the nodes' usage, NamenodeProtocol versionRequest, getBlocks and
// isUpgradeFinalized — and to the DataNodes over DataTransferProtocol: each
// move is a REPLACE_BLOCK sent to the target, which copies the replica from
// a proxy holder with COPY_BLOCK and reports it RECEIVED with the source as
// deletion hint, so that the NameNode removes the source's replica, now in
// excess. The DataNodes throttle the copies at
// dfs.datanode.balance.bandwidthPerSec (dfsadmin -setBalancerBandwidth)
// and refuse moves beyond dfs.datanode.balance.max.concurrent.moves; the
// balancer itself keeps at most that many moves in flight per node.
//
// The decisions are package plan's, a pure core. This package runs
// iterations: read the report, plan, dispatch moves (one goroutine per
// source, one per move), wait for them, print Hadoop's row, sleep
// 2 × dfs.heartbeat.interval + dfs.namenode.redundancy.interval.seconds so
// that the reports catch up, and go again, until the cluster is balanced,
// nothing can be moved, or nothing moved for -idleiterations iterations.
//
// Only one balancer runs at a time: it holds /system/balancer.id open for
// writing (the NameNode's lease says it is alive) and deletes it when it
// ends; a second one fails to append to it and exits. A balancer killed
// outright leaves the file, which the next one reclaims once the NameNode
// has recovered the lease (after the soft limit, a minute). Stopping and
// rerunning is safe: each iteration starts from the NameNode's view.
//
// Every goroutine is owned by Run and ended before it returns.
package balancer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/balancer/plan"
	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/dnconn"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
)

// IDPath is the file a running balancer holds open; MoverIDPath the one
// a running mover holds.
const (
	IDPath      = "/system/balancer.id"
	MoverIDPath = "/system/mover.id"
)

// Protocol names.
const (
	clientProtocol   = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
	namenodeProtocol = "org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol"
)

// ExitStatus is Hadoop's balancer exit status; the process exits with it
// (a negative one as 256 + status).
type ExitStatus int

// Exit statuses.
const (
	Success            ExitStatus = 0
	InProgress         ExitStatus = 1
	AlreadyRunning     ExitStatus = -1
	NoMoveBlock        ExitStatus = -2
	NoMoveProgress     ExitStatus = -3
	IOException        ExitStatus = -4
	IllegalArguments   ExitStatus = -5
	Interrupted        ExitStatus = -6
	UnfinalizedUpgrade ExitStatus = -7
)

// Policy is -policy: what counts as used.
type Policy int

// Policies.
const (
	PolicyDataNode  Policy = iota // DFS used over capacity
	PolicyBlockPool               // the block pool's used space over capacity
)

// Config is one run's settings.
type Config struct {
	// NameNodes are the RPC addresses of the namespace's NameNodes
	// (every NameNode of an HA nameservice); Authority is what the file
	// system's URIs name (host:port or the nameservice) and URI how the
	// table names it (hdfs://...).
	NameNodes []string
	Authority string
	URI       string
	// User is the user the calls are made as (a superuser: getBlocks
	// needs one).
	User string
	// Kerberos, when set, authenticates the NameNode connections
	// (hadoop.security.authentication=kerberos): the logged-in client
	// (dfs.balancer.keytab.file, or the ticket cache) and the NameNode's
	// principal; User is then the client's. Protection is
	// hadoop.rpc.protection.
	Kerberos   *security.Initiator
	Protection security.QOP
	// DataTransfer is the protection of the connections to DataNodes
	// (dfs.data.transfer.protection, dfs.encrypt.data.transfer): the
	// SASL handshake is made with the move's block token, or with a data
	// encryption key made from the NameNode's block keys.
	DataTransfer dtsasl.Config

	Policy    Policy
	Threshold float64 // -threshold, percent (default 10)
	// Include, Exclude and Source are -include, -exclude and -source: host
	// names or addresses, with or without :port. Include nil means every
	// node; Source nil means every node may send.
	Include, Exclude, Source map[string]bool
	// BlockPools is -blockpools; empty means every pool.
	BlockPools []string
	// IdleIterations is -idleiterations (5): iterations in a row without a
	// byte moved before giving up; negative means never.
	IdleIterations   int
	RunDuringUpgrade bool // -runDuringUpgrade
	SortTopNodes     bool // -sortTopNodes

	// MaxConcurrentMoves is dfs.datanode.balance.max.concurrent.moves
	// (100): moves in flight per node.
	MaxConcurrentMoves int
	// GetBlocksSize is dfs.balancer.getBlocks.size (2 GiB),
	// GetBlocksMinSize dfs.balancer.getBlocks.min-block-size (10 MiB).
	GetBlocksSize, GetBlocksMinSize int64
	// MaxSizeToMove is dfs.balancer.max-size-to-move (10 GiB) and
	// BlockSize dfs.blocksize.
	MaxSizeToMove, BlockSize int64
	// MoveTimeout is dfs.balancer.block-move.timeout (0: none beyond the
	// five minutes a DataNode may stay silent).
	MoveTimeout time.Duration
	// MaxNoMoveInterval is dfs.balancer.max-no-move-interval (60 s): a
	// source that finds no move for that long gives up its iteration.
	MaxNoMoveInterval time.Duration
	// MaxIterationTime is dfs.balancer.max-iteration-time (20 min).
	MaxIterationTime time.Duration
	// MovedWinWidth is dfs.balancer.movedWinWidth (90 min): a block moved
	// within it is not moved again.
	MovedWinWidth time.Duration
	// Sleep is the pause between iterations: 2 × dfs.heartbeat.interval +
	// dfs.namenode.redundancy.interval.seconds.
	Sleep time.Duration

	// Observe, when set, is told what each iteration's moves did (the
	// benchmark measures the DataNodes' throttled rate with it).
	Observe func(IterationStats)

	// Stderr takes what Hadoop's balancer prints on standard error
	// (discarded when nil).
	Stderr io.Writer

	// Clock stamps the table (clock.Real when nil); Rand shuffles the
	// nodes (a random seed when nil); Logger takes the details (discarded
	// when nil).
	Clock  clock.Clock
	Rand   *rand.Rand
	Logger *slog.Logger

	// idPath is the file the run holds open (IDPath when empty).
	idPath string
}

// Validate names the first setting that cannot be used.
func (c *Config) Validate() error {
	switch {
	case len(c.NameNodes) == 0:
		return errors.New("balancer: no NameNode address")
	case c.Threshold < 1 || c.Threshold > 100:
		return fmt.Errorf("balancer: Number out of range: threshold = %v", c.Threshold)
	case c.Include != nil && c.Exclude != nil:
		return errors.New("balancer: -exclude and -include options cannot be specified together.")
	case c.MaxConcurrentMoves <= 0:
		return fmt.Errorf("balancer: dfs.datanode.balance.max.concurrent.moves = %d <= 0", c.MaxConcurrentMoves)
	case c.GetBlocksSize <= 0:
		return fmt.Errorf("balancer: dfs.balancer.getBlocks.size = %d <= 0", c.GetBlocksSize)
	case c.GetBlocksMinSize <= 0:
		return fmt.Errorf("balancer: dfs.balancer.getBlocks.min-block-size = %d <= 0", c.GetBlocksMinSize)
	case c.MaxSizeToMove <= 0:
		return fmt.Errorf("balancer: dfs.balancer.max-size-to-move = %d <= 0", c.MaxSizeToMove)
	case c.MaxIterationTime <= 0:
		return fmt.Errorf("balancer: dfs.balancer.max-iteration-time = %v <= 0", c.MaxIterationTime)
	case c.MovedWinWidth <= 0:
		return fmt.Errorf("balancer: dfs.balancer.movedWinWidth = %v <= 0", c.MovedWinWidth)
	}
	return nil
}

// Timeouts of the data path.
const (
	dialTimeout = 60 * time.Second
	// silentLimit is how long a target may stay silent during a move
	// before it is given up (Hadoop: 5 × the 60 s read timeout; the
	// DataNode answers IN_PROGRESS every 30 s).
	silentLimit = 5 * time.Minute
	// errorDelay rests a node after a failed move through it.
	errorDelay = 10 * time.Second
	// minSourceBlocks: a source fetches more blocks below this many.
	minSourceBlocks = 5
)

// fillDefaults sets the real clock, a discarding logger and stderr and a
// seeded random source where cfg leaves them unset.
func (cfg *Config) fillDefaults() {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
}

// Run runs the balancer until it exits and returns its exit status. The
// table goes to out, as Hadoop prints it; details go to the logger. A
// canceled ctx (SIGINT) ends the run after the moves in flight.
func Run(ctx context.Context, cfg Config, out io.Writer) ExitStatus {
	cfg.fillDefaults()
	start := cfg.Clock.Now()
	defer func() {
		now := cfg.Clock.Now()
		PrintTook(out, "Balancing", now, now.Sub(start))
	}()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(out, "java.lang.IllegalArgumentException: %s.  Exiting ...\n", strings.TrimPrefix(err.Error(), "balancer: "))
		return IllegalArguments
	}
	cfg.Logger.Info("balancer starting", "namenodes", cfg.NameNodes, "threshold", cfg.Threshold, "policy", cfg.Policy,
		"idleIterations", cfg.IdleIterations, "maxConcurrentMoves", cfg.MaxConcurrentMoves)
	fmt.Fprintln(out, "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved  NameNode")
	b, err := connect(ctx, cfg)
	if err != nil {
		fmt.Fprintf(out, "%s.  Exiting ...\n", javaError(err))
		if ctx.Err() != nil {
			return Interrupted
		}
		return IOException
	}
	defer b.close()
	for iteration := 0; ; iteration++ {
		if len(cfg.BlockPools) > 0 && !contains(cfg.BlockPools, b.pool) {
			cfg.Logger.Info("Skipping blockpool " + b.pool)
			fmt.Fprintln(out, "The cluster is balanced. Exiting...")
			return Success
		}
		r := b.runIteration(ctx, iteration, out)
		fmt.Fprintf(out, "%-24s %10d  %19s  %18s  %17s  %s\n", javaDate(cfg.Clock.Now()), iteration,
			byteDesc(b.bytesMoved.Load()), byteDesc(r.left), byteDesc(r.moving), cfg.URI)
		switch r.status {
		case InProgress:
		case Success:
			fmt.Fprintln(out, "The cluster is balanced. Exiting...")
			return Success
		default:
			return r.status
		}
		if !sleep(ctx, cfg.Clock, cfg.Sleep, nil) {
			fmt.Fprintln(out, "java.lang.InterruptedException.  Exiting ...")
			return Interrupted
		}
	}
}

// sleep waits d, or until wake is closed; false when ctx ended first.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration, wake <-chan struct{}) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C():
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// javaError prints an error the way the balancer's Java exceptions print.
func javaError(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return "org.apache.hadoop.ipc.RemoteException(" + re.Class + "): " + re.Message
	}
	if errors.Is(err, context.Canceled) {
		return "java.lang.InterruptedException"
	}
	return "java.io.IOException: " + strings.TrimPrefix(err.Error(), "balancer: ")
}

// balancer is one run's connections and counters.
type balancer struct {
	tokens blocktoken.Verifier // keys for the moves' block tokens
	cfg    Config
	client *ipc.Client // ClientProtocol
	nnp    *ipc.Client // NamenodeProtocol
	fs     *client.FileSystem
	idFile *client.Writer
	pool   string
	dialer *dnconn.Dialer

	idle        int          // iterations in a row without a byte moved
	bytesMoved  atomic.Int64 // over the whole run
	blocksMoved atomic.Int64

	mu struct {
		sync.Mutex
		moved map[int64]time.Time // blocks moved, and when
	}
}

// ErrAlreadyRunning: another balancer holds /system/balancer.id.
var ErrAlreadyRunning = errors.New("Another Balancer is running.")

// refreshKeys takes the NameNode's block keys (getBlockKeys), with which
// the balancer issues the REPLACE and COPY tokens of its moves when block
// access tokens are on.
func (b *balancer) refreshKeys(ctx context.Context) error {
	var resp nnpb.GetBlockKeysResponseProto
	if err := b.nnp.Call(ctx, "getBlockKeys", &nnpb.GetBlockKeysRequestProto{}, &resp); err != nil {
		return err
	}
	b.tokens.SetKeys(resp.GetKeys())
	return nil
}

// connect reaches the NameNode and marks the balancer running.
func connect(ctx context.Context, cfg Config) (*balancer, error) {
	if cfg.idPath == "" {
		cfg.idPath = IDPath
	}
	b := &balancer{cfg: cfg, dialer: dnconn.NewDialer("", dialTimeout)}
	b.mu.moved = map[int64]time.Time{}
	b.client = ipc.NewClient(ipc.ClientConfig{Addresses: cfg.NameNodes, User: cfg.User, Protocol: clientProtocol, Logger: cfg.Logger,
		Kerberos: cfg.Kerberos, Protection: cfg.Protection})
	b.nnp = ipc.NewClient(ipc.ClientConfig{Addresses: cfg.NameNodes, User: cfg.User, Protocol: namenodeProtocol, Logger: cfg.Logger,
		Kerberos: cfg.Kerberos, Protection: cfg.Protection})
	var v hdfs.VersionResponseProto
	if err := b.nnp.Call(ctx, "versionRequest", &hdfs.VersionRequestProto{}, &v); err != nil {
		b.close()
		return nil, err
	}
	b.pool = v.GetInfo().GetBlockPoolID()
	if err := b.refreshKeys(ctx); err != nil {
		b.close()
		return nil, err
	}
	opts := client.Options{Addresses: cfg.NameNodes, Authority: cfg.Authority, User: cfg.User}
	if cfg.Kerberos != nil {
		opts.KerberosClient, opts.KerberosServicePrincipal = cfg.Kerberos.Client, cfg.Kerberos.Principal
		opts.RPCProtection = cfg.Protection.String()
	}
	// /system/balancer.id is written through DataNodes like any file:
	// with their streaming port's protection.
	if dt := cfg.DataTransfer; dt.Enabled() {
		if dt.Protection != 0 {
			opts.DataTransferProtection = dt.Protection.String()
		}
		if dt.AES {
			opts.DataTransferCipherSuites = dtsasl.AESCTR
		}
		opts.EncryptDataTransfer = dt.Encrypt
	}
	fs, err := client.New(opts)
	if err != nil {
		b.close()
		return nil, err
	}
	b.fs = fs
	if err := b.markRunning(ctx); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// markRunning takes /system/balancer.id as Hadoop's NameNodeConnector
// does: an existing file is appended to (which fails while another
// balancer holds it open) and deleted, then created again, the host name
// written and flushed, and the file kept open.
func (b *balancer) markRunning(ctx context.Context) error {
	running := func(err error) bool {
		var re *remoteerr.Error
		return errors.As(err, &re) && re.Class == remoteerr.ClassAlreadyBeingCreated
	}
	if _, err := b.fs.Stat(ctx, b.cfg.idPath); err == nil {
		w, err := b.fs.Append(ctx, b.cfg.idPath)
		if err != nil {
			if running(err) {
				return ErrAlreadyRunning
			}
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		if err := b.fs.Remove(ctx, b.cfg.idPath); err != nil {
			return err
		}
	}
	w, err := b.fs.CreateFile(ctx, b.cfg.idPath, client.CreateOptions{CreateParent: true})
	if err != nil {
		if running(err) {
			return ErrAlreadyRunning
		}
		return err
	}
	host, _ := os.Hostname()
	if _, err := w.Write([]byte(host)); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = w.Close()
		return err
	}
	b.idFile = w
	return nil
}

// close ends the run: the id file is closed and deleted.
func (b *balancer) close() {
	if b.idFile != nil {
		if err := b.idFile.Close(); err != nil {
			b.cfg.Logger.Warn("closing "+b.cfg.idPath, "err", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := b.fs.Remove(ctx, b.cfg.idPath); err != nil {
			b.cfg.Logger.Warn("Failed to delete "+b.cfg.idPath, "err", err)
		}
		cancel()
	}
	if b.fs != nil {
		_ = b.fs.Close()
	}
	if b.client != nil {
		_ = b.client.Close()
	}
	if b.nnp != nil {
		_ = b.nnp.Close()
	}
}

// IterationStats are one iteration's moves.
type IterationStats struct {
	Iteration       int
	BytesMoved      int64
	BlocksMoved     int64
	FailedMoves     int64
	First, Last     time.Time // the first move's start, the last one's end
	BytesLeftToMove int64
	BytesBeingMoved int64
}

// iterationResult is what one iteration ends with.
type iterationResult struct {
	status       ExitStatus
	left, moving int64
}

// node is a live DataNode of the report.
type node struct {
	plan.Node
	info *hdfs.DatanodeInfoProto
}

// liveNodes reads the live DataNodes and keeps those that take part: in
// service, included and not excluded.
func (b *balancer) liveNodes(ctx context.Context) (map[string]*node, []plan.Node, error) {
	var rep hdfs.GetDatanodeReportResponseProto
	if err := b.client.Call(ctx, "getDatanodeReport", &hdfs.GetDatanodeReportRequestProto{Type: hdfs.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		return nil, nil, err
	}
	byID := map[string]*node{}
	var list []plan.Node
	for _, d := range rep.GetDi() {
		id := d.GetId()
		n := plan.Node{UUID: id.GetDatanodeUuid(), IP: id.GetIpAddr(), Hostname: id.GetHostName(), XferPort: int(id.GetXferPort()),
			Rack: d.GetLocation(), Capacity: int64(d.GetCapacity()), Used: int64(d.GetDfsUsed()), Remaining: int64(d.GetRemaining())}
		if b.cfg.Policy == PolicyBlockPool {
			n.Used = int64(d.GetBlockPoolUsed())
		}
		switch {
		case d.GetAdminState() != hdfs.DatanodeInfoProto_NORMAL:
			continue // leaving service: neither source nor target
		case b.cfg.Exclude != nil && plan.Matches(b.cfg.Exclude, n):
			continue
		case b.cfg.Include != nil && !plan.Matches(b.cfg.Include, n):
			continue
		}
		byID[n.UUID] = &node{Node: n, info: d}
		list = append(list, n)
	}
	b.cfg.Rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return byID, list, nil
}

// runIteration is Hadoop's runOneIteration.
func (b *balancer) runIteration(ctx context.Context, iteration int, out io.Writer) iterationResult {
	fail := func(err error) iterationResult {
		fmt.Fprintf(out, "%s.  Exiting ...\n", javaError(err))
		if ctx.Err() != nil {
			return iterationResult{status: Interrupted, left: -1, moving: -1}
		}
		return iterationResult{status: IOException, left: -1, moving: -1}
	}
	if iteration > 0 {
		// The NameNode rolls its block keys; moves need the current one.
		if err := b.refreshKeys(ctx); err != nil {
			return fail(err)
		}
	}
	nodes, list, err := b.liveNodes(ctx)
	if err != nil {
		return fail(err)
	}
	p := plan.Params{Threshold: b.cfg.Threshold, MaxSizeToMove: b.cfg.MaxSizeToMove, BlockSize: b.cfg.BlockSize,
		SortTopNodes: b.cfg.SortTopNodes}
	if b.cfg.Source != nil {
		p.Source = func(n plan.Node) bool { return plan.Matches(b.cfg.Source, n) }
	}
	it := plan.Plan(list, p)
	for _, g := range it.Groups {
		b.cfg.Logger.Debug("node", "addr", net.JoinHostPort(g.IP, strconv.Itoa(g.XferPort)), "class", g.Class.String(),
			"utilization", g.Utilization, "maxSize", g.MaxSize)
	}
	if it.BytesLeftToMove == 0 {
		return iterationResult{status: Success}
	}
	b.cfg.Logger.Info("Need to move " + byteDesc(it.BytesLeftToMove) + " to make the cluster balanced.")
	if !b.cfg.RunDuringUpgrade {
		upgrading, err := b.upgrading(ctx)
		if err != nil {
			return fail(err)
		}
		if upgrading {
			msg := "Balancer exiting as upgrade is not finalized, please finalize the HDFS upgrade before running the balancer."
			fmt.Fprintln(b.cfg.Stderr, msg)
			b.cfg.Logger.Error(msg)
			return iterationResult{status: UnfinalizedUpgrade, left: it.BytesLeftToMove, moving: -1}
		}
	}
	if it.BytesToMove == 0 {
		fmt.Fprintln(out, "No block can be moved. Exiting...")
		return iterationResult{status: NoMoveBlock, left: it.BytesLeftToMove}
	}
	b.cfg.Logger.Info("Will move "+byteDesc(it.BytesToMove)+" in this iteration", "tasks", len(it.Tasks))
	st := b.dispatch(ctx, nodes, it)
	st.Iteration, st.BytesLeftToMove, st.BytesBeingMoved = iteration, it.BytesLeftToMove, it.BytesToMove
	if b.cfg.Observe != nil {
		b.cfg.Observe(st)
	}
	moved := st.BytesMoved
	if ctx.Err() != nil {
		fmt.Fprintln(out, "java.lang.InterruptedException.  Exiting ...")
		return iterationResult{status: Interrupted, left: it.BytesLeftToMove, moving: it.BytesToMove}
	}
	if moved > 0 {
		b.idle = 0
	} else {
		b.idle++
		if b.cfg.IdleIterations >= 0 && b.idle >= b.cfg.IdleIterations {
			fmt.Fprintf(out, "No block has been moved for %d iterations. Exiting...\n", b.idle)
			return iterationResult{status: NoMoveProgress, left: it.BytesLeftToMove, moving: it.BytesToMove}
		}
	}
	return iterationResult{status: InProgress, left: it.BytesLeftToMove, moving: it.BytesToMove}
}

// upgrading asks whether an upgrade is waiting to be finalized. A NameNode
// that does not know the call has no upgrade to finalize.
func (b *balancer) upgrading(ctx context.Context) (bool, error) {
	var resp nnpb.IsUpgradeFinalizedResponseProto
	err := b.nnp.Call(ctx, "isUpgradeFinalized", &nnpb.IsUpgradeFinalizedRequestProto{}, &resp)
	if errors.Is(err, remoteerr.ErrNoSuchMethod) || errors.Is(err, remoteerr.ErrUnsupported) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !resp.GetIsUpgradeFinalized(), nil
}

// dispatcher runs one iteration's moves.
type dispatcher struct {
	b        *balancer
	nodes    map[string]*node
	deadline time.Time
	wg       sync.WaitGroup // moves in flight
	moved    atomic.Int64   // bytes moved in this iteration
	blocks   atomic.Int64   // blocks moved in this iteration
	failed   atomic.Int64   // moves that failed

	mu struct {
		sync.Mutex
		first, last time.Time            // the first move's start, the last one's end
		pending     map[string]int       // moves in flight per node (target or proxy)
		rest        map[string]time.Time // nodes resting after a failed move, until
		inFlight    map[int64]bool
		changed     chan struct{} // closed and replaced when a move ends
	}
}

// source is one sender's work.
type source struct {
	uuid      string
	tasks     []plan.Pending
	scheduled int64
	blocks    []plan.Block
}

// dispatch runs the iteration's tasks until they are done, no move is
// possible, or the iteration's time is up, and says what moved.
func (b *balancer) dispatch(ctx context.Context, nodes map[string]*node, it plan.Iteration) IterationStats {
	d := &dispatcher{b: b, nodes: nodes, deadline: b.cfg.Clock.Now().Add(b.cfg.MaxIterationTime)}
	d.mu.pending = map[string]int{}
	d.mu.rest = map[string]time.Time{}
	d.mu.inFlight = map[int64]bool{}
	d.mu.changed = make(chan struct{})
	bySource := map[string]*source{}
	var order []*source
	for _, t := range it.Tasks {
		s := bySource[t.Source]
		if s == nil {
			s = &source{uuid: t.Source}
			bySource[t.Source] = s
			order = append(order, s)
		}
		s.tasks = append(s.tasks, plan.Pending{Target: t.Target, Left: t.Size})
		s.scheduled += t.Size
	}
	var sources sync.WaitGroup
	for _, s := range order {
		sources.Add(1)
		go func() {
			defer sources.Done()
			d.runSource(ctx, s)
		}()
	}
	sources.Wait()
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	return IterationStats{BytesMoved: d.moved.Load(), BlocksMoved: d.blocks.Load(), FailedMoves: d.failed.Load(),
		First: d.mu.first, Last: d.mu.last}
}

// cluster is plan's view of the nodes; d.mu must be held.
func (d *dispatcher) clusterLocked(now time.Time) plan.Cluster {
	return plan.Cluster{
		Rack: func(u string) string {
			if n := d.nodes[u]; n != nil {
				return n.Rack
			}
			return ""
		},
		Free: func(u string) bool {
			return d.mu.pending[u] < d.b.cfg.MaxConcurrentMoves && !now.Before(d.mu.rest[u])
		},
		Moved: func(id int64) bool { return d.mu.inFlight[id] || d.b.movedRecently(id, now) },
	}
}

func (b *balancer) movedRecently(id int64, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.mu.moved[id]
	return ok && now.Sub(t) < b.cfg.MovedWinWidth
}

// runSource is one source's loop (Hadoop's Source.dispatchBlocks).
func (d *dispatcher) runSource(ctx context.Context, s *source) {
	clk := d.b.cfg.Clock
	toReceive := 2 * s.scheduled
	lastMove := clk.Now()
	for s.scheduled > 0 && ctx.Err() == nil && clk.Now().Before(d.deadline) && (len(s.blocks) > 0 || toReceive > 0) {
		m, ok := d.reserve(s)
		if ok {
			lastMove = clk.Now()
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				d.execute(ctx, s.uuid, m)
			}()
			continue
		}
		if len(s.blocks) < minSourceBlocks && toReceive > 0 {
			got, err := d.fetch(ctx, s, min(d.b.cfg.GetBlocksSize, toReceive))
			if err != nil {
				d.b.cfg.Logger.Warn("Exception while getting block list", "source", d.addr(s.uuid), "err", err)
				return
			}
			if got == 0 {
				return
			}
			toReceive -= got
			continue
		}
		if clk.Now().Sub(lastMove) > d.b.cfg.MaxNoMoveInterval {
			d.b.cfg.Logger.Info(fmt.Sprintf("Failed to find a pending move for %d ms.  Skipping %s", clk.Now().Sub(lastMove).Milliseconds(), d.addr(s.uuid)))
			return
		}
		// Wait for a move to end (a slot, or a node back from rest).
		d.mu.Lock()
		changed := d.mu.changed
		d.mu.Unlock()
		sleep(ctx, clk, time.Second, changed)
	}
	if !clk.Now().Before(d.deadline) {
		d.b.cfg.Logger.Info(fmt.Sprintf("The maximum iteration time (%d seconds) has been reached. Stopping %s",
			int64(d.b.cfg.MaxIterationTime/time.Second), d.addr(s.uuid)))
	}
}

// reserve chooses the source's next move and takes its slots.
func (d *dispatcher) reserve(s *source) (plan.Move, bool) {
	now := d.b.cfg.Clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.clusterLocked(now)
	// Blocks moved meanwhile (by other sources) leave the list.
	kept := s.blocks[:0]
	for _, blk := range s.blocks {
		if !c.Moved(blk.ID) {
			kept = append(kept, blk)
		}
	}
	clear(s.blocks[len(kept):])
	s.blocks = kept
	m, ok := plan.ChooseMove(s.uuid, s.tasks, s.blocks, c)
	if !ok {
		return m, false
	}
	d.mu.pending[m.Target]++
	d.mu.pending[m.Proxy]++
	d.mu.inFlight[m.Block.ID] = true
	if d.mu.first.IsZero() {
		d.mu.first = now
	}
	s.blocks = append(s.blocks[:m.BlockIndex], s.blocks[m.BlockIndex+1:]...)
	s.tasks[m.Task].Left -= m.Block.Size
	s.scheduled -= m.Block.Size
	return m, true
}

// fetch asks the NameNode for more of the source's blocks and keeps those
// some task could move; it returns the bytes the NameNode listed. It runs
// under d.mu, which also guards the use of cfg.Rand here.
func (d *dispatcher) fetch(ctx context.Context, s *source, size int64) (int64, error) {
	n := d.nodes[s.uuid]
	var resp nnpb.GetBlocksResponseProto
	req := &nnpb.GetBlocksRequestProto{Datanode: n.info.GetId(), Size: proto.Uint64(uint64(size)),
		MinBlockSize: proto.Uint64(uint64(d.b.cfg.GetBlocksMinSize))}
	if err := d.b.nnp.Call(ctx, "getBlocks", req, &resp); err != nil {
		return 0, err
	}
	now := d.b.cfg.Clock.Now()
	var got int64
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.clusterLocked(now)
	have := map[int64]bool{}
	for _, blk := range s.blocks {
		have[blk.ID] = true
	}
	for _, bl := range resp.GetBlocks().GetBlocks() {
		blk := plan.Block{ID: int64(bl.GetBlock().GetBlockId()), GenStamp: int64(bl.GetBlock().GetGenStamp()),
			Size: int64(bl.GetBlock().GetNumBytes())}
		got += blk.Size
		if have[blk.ID] {
			continue
		}
		for i, u := range bl.GetDatanodeUuids() {
			if d.nodes[u] != nil { // holders outside the iteration are not used
				blk.Holders = append(blk.Holders, u)
			}
			if u == s.uuid && i < len(bl.GetStorageTypes()) {
				blk.Type = int32(bl.GetStorageTypes()[i])
			}
		}
		// Proxies are tried in holder order: shuffled, the copies spread
		// over the holders, each throttled on its own.
		d.b.cfg.Rand.Shuffle(len(blk.Holders), func(i, j int) { blk.Holders[i], blk.Holders[j] = blk.Holders[j], blk.Holders[i] })
		for _, t := range s.tasks {
			if plan.GoodCandidate(s.uuid, t.Target, blk, c) {
				s.blocks = append(s.blocks, blk)
				have[blk.ID] = true
				break
			}
		}
	}
	return got, nil
}

func (d *dispatcher) addr(uuid string) string {
	if n := d.nodes[uuid]; n != nil {
		return net.JoinHostPort(n.IP, strconv.Itoa(n.XferPort))
	}
	return uuid
}

// execute moves one replica and releases its slots.
func (d *dispatcher) execute(ctx context.Context, src string, m plan.Move) {
	err := d.replace(ctx, src, m)
	now := d.b.cfg.Clock.Now()
	d.mu.Lock()
	d.mu.pending[m.Target]--
	d.mu.pending[m.Proxy]--
	delete(d.mu.inFlight, m.Block.ID)
	d.mu.last = now
	if err != nil && ctx.Err() == nil {
		d.mu.rest[m.Target] = now.Add(errorDelay)
		d.mu.rest[m.Proxy] = now.Add(errorDelay)
	}
	close(d.mu.changed)
	d.mu.changed = make(chan struct{})
	d.mu.Unlock()
	if err != nil {
		d.failed.Add(1)
		d.b.cfg.Logger.Warn(fmt.Sprintf("Failed to move blk_%d_%d with size=%d from %s to %s through %s: %v",
			m.Block.ID, m.Block.GenStamp, m.Block.Size, d.addr(src), d.addr(m.Target), d.addr(m.Proxy), err))
		return
	}
	d.b.mu.Lock()
	d.b.mu.moved[m.Block.ID] = now
	d.b.mu.Unlock()
	d.moved.Add(m.Block.Size)
	d.blocks.Add(1)
	d.b.bytesMoved.Add(m.Block.Size)
	d.b.blocksMoved.Add(1)
	d.b.cfg.Logger.Info(fmt.Sprintf("Successfully moved blk_%d_%d with size=%d from %s to %s through %s",
		m.Block.ID, m.Block.GenStamp, m.Block.Size, d.addr(src), d.addr(m.Target), d.addr(m.Proxy)))
}

// replace sends REPLACE_BLOCK to the target and waits for its answer,
// reading its IN_PROGRESS notes on the way.
func (d *dispatcher) replace(ctx context.Context, src string, m plan.Move) error {
	target, proxy := d.nodes[m.Target], d.nodes[m.Proxy]
	// The replica keeps its storage type (Hadoop's balancer moves within
	// one type).
	st := hdfs.StorageTypeProto_DISK
	if m.Block.Type != 0 {
		st = hdfs.StorageTypeProto(m.Block.Type)
	}
	return d.b.replaceBlock(ctx, d.addr(target.UUID), proxy.info, src, st,
		&hdfs.ExtendedBlockProto{PoolId: proto.String(d.b.pool), BlockId: proto.Uint64(uint64(m.Block.ID)),
			GenerationStamp: proto.Uint64(uint64(m.Block.GenStamp)), NumBytes: proto.Uint64(uint64(m.Block.Size))})
}

// replaceBlock has the DataNode at targetAddr copy block eb from proxy onto
// a storage of type st (REPLACE_BLOCK), the NameNode then deleting the
// replica on delHint, and waits for its answer, reading its IN_PROGRESS
// notes on the way.
func (b *balancer) replaceBlock(ctx context.Context, targetAddr string, proxy *hdfs.DatanodeInfoProto, delHint string, st hdfs.StorageTypeProto, eb *hdfs.ExtendedBlockProto) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if b.cfg.MoveTimeout > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, b.cfg.MoveTimeout)
		defer c2()
	}
	tok := b.moveToken(int64(eb.GetBlockId()))
	raw, err := b.dialer.Dial(ctx, targetAddr)
	if err != nil {
		return err
	}
	defer raw.Close()
	conn, err := b.saslClient().Wrap(ctx, raw, b.pool, tok)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	req := &hdfs.OpReplaceBlockProto{
		Header: &hdfs.BaseHeaderProto{
			Block: eb,
			Token: tok,
		},
		DelHint:     proto.String(delHint),
		Source:      proxy,
		StorageType: st.Enum(),
	}
	_ = conn.SetWriteDeadline(time.Now().Add(dialTimeout))
	if err := datatransfer.WriteOp(conn, datatransfer.OpReplaceBlock, req); err != nil {
		return err
	}
	br := bufio.NewReader(conn)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(silentLimit))
		var resp hdfs.BlockOpResponseProto
		if err := datatransfer.ReadDelimited(br, datatransfer.DefaultMaxMessageSize, &resp); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("reading the answer of %s: %w", targetAddr, err)
		}
		switch resp.GetStatus() {
		case hdfs.Status_IN_PROGRESS:
			continue
		case hdfs.Status_SUCCESS:
			return nil
		case hdfs.Status_ERROR_ACCESS_TOKEN:
			return errors.New("block move failed due to access token error")
		}
		return fmt.Errorf("block move is failed: %s", resp.GetMessage())
	}
}

// moveToken is the token of a move: REPLACE and COPY for the block, or the
// empty token when block access tokens are off.
// saslClient is the connecting side of the data transfer SASL handshake
// (nil when data transfer is not protected).
func (b *balancer) saslClient() *dtsasl.Client {
	c := b.cfg.DataTransfer
	if !c.Enabled() {
		return nil
	}
	var key dtsasl.KeySource
	if c.Encrypt {
		key = func(_ context.Context, pool string) (*hdfs.DataEncryptionKeyProto, error) {
			if k := b.tokens.DataEncryptionKey(pool, c.Algorithm, time.Now()); k != nil {
				return k, nil
			}
			return nil, errors.New("balancer: no block keys from the NameNode to make a data encryption key with")
		}
	}
	return dtsasl.NewClient(c, key)
}

func (b *balancer) moveToken(blockID int64) *common.TokenProto {
	if t := b.tokens.Generate(b.cfg.User, b.pool, blockID, blocktoken.Replace|blocktoken.Copy, time.Now()); t != nil {
		return t
	}
	return &common.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}
