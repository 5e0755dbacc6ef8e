package namenode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/backup"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// The helpers' Checkpointer thread (seed 000 §2.3).
//
// Every dfs.namenode.checkpoint.check.period the checkpointer looks whether
// a checkpoint is due: dfs.namenode.checkpoint.period since the last one, or
// dfs.namenode.checkpoint.txns transactions the NameNode logged beyond the
// helper's newest image; a fresh helper (no image yet) and a Backup Node
// that is not IN_SYNC checkpoint at once. A Backup Node also registers
// again at every look: that is how it finds out that the active dropped its
// stream, and how it joins again. A checkpoint:
//
//  1. Backup Node: freeze the namespace at the next roll;
//  2. startCheckpoint (Secondary: rollEditLog): the active rolls its log
//     and answers with its signature (ACT_SHUTDOWN: stop, the node is of
//     another namespace); the signature must match this node's storage;
//  3. Backup Node: wait until the roll reached it (JOURNAL_ONLY);
//  4. getEditLogManifest(last applied + 1): the finalized segments;
//  5. the gap path: when the first segment starts after the last applied
//     txid + 1 (the active purged what this node lacks), or the node has
//     no image yet, or the last merge failed, download the active's newest
//     image and load it in place of the namespace;
//  6. download the segments (GET /imagetransfer) into every edits dir and
//     roll forward through the one apply path (a failure here is a merge
//     error: the next attempt reloads the image; more than
//     dfs.namenode.checkpoint.max-retries in a row stop the node);
//  7. save the image of the last applied txid in every checkpoint dir
//     (saveApplied, the standby's code);
//  8. upload it with HTTP PUT when the command asks (needToReturnImage);
//  9. endCheckpoint (not the Secondary);
//  10. Backup Node: converge with its journal spool (backupnode.go);
//  11. apply retention to the checkpoint dirs.
//
// A Backup Node rolls forward with nothing to download: it is IN_SYNC up
// to the roll, so the manifest after its last applied txid is empty.
type checkpointer struct {
	role       Role
	nn         *NameNode // set once the node is built
	active     *ipc.Client
	activeAddr string
	activeHTTP string // http://host:port of the active's image servlet
	images     *imagetransfer.Client
	bn         *backupNode // a Backup Node's journal side; nil otherwise
	// fresh: no image yet; the first checkpoint downloads one. Owned by
	// the checkpoint loop (the only caller of doCheckpoint once started).
	fresh bool

	mu struct {
		sync.Mutex
		last        time.Time // last checkpoint done (the start time before any)
		lastTxID    int64     // its txid
		lastTook    time.Duration
		lastSize    int64
		done        int64 // checkpoints done
		failures    int64
		downloads   int64 // images downloaded (the gap path)
		mergeErrors int   // in a row
		lastErr     string
	}
}

func newCheckpointer(role Role, cfg *Config, deps *Deps) (*checkpointer, error) {
	k := cfg.Checkpoint
	images, err := imagetransfer.NewClient(cfg.ImageTransfer, imagetransfer.ClientOptions{FS: deps.FS, Clock: deps.Clock})
	if err != nil {
		return nil, err
	}
	c := &checkpointer{
		role:       role,
		activeAddr: k.ActiveRPCAddress,
		activeHTTP: "http://" + k.ActiveHTTPAddress,
		images:     images,
		active: ipc.NewClient(cfg.peerAuth(ipc.ClientConfig{Addresses: []string{k.ActiveRPCAddress}, User: cfg.SuperUser,
			Protocol: NamenodeProtocolName, MaxRetries: 3, DialTimeout: min(k.Timeout, 10*time.Second), Logger: deps.Logger})),
	}
	c.mu.last = deps.Clock.Now()
	return c, nil
}

func (c *checkpointer) closeClients() {
	c.active.Close()
	c.images.Close()
}

// close ends the helper's dealings with the active: a registered node says
// it is going away (errorReport FATAL, so the active drops a Backup Node's
// stream at once), then the clients are closed.
func (c *checkpointer) close(ctx context.Context) {
	if c.nn != nil && c.nn.addr != nil && c.role != RoleSecondary && !c.nn.cfg.Testing.NoErrorReport {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.active.Call(cctx, "errorReport", &nnpb.ErrorReportRequestProto{Registration: c.nn.registration(),
			ErrorCode: proto.Uint32(errorFatal), Msg: proto.String("Shutting down.")}, &nnpb.ErrorReportResponseProto{})
		cancel()
		if err != nil {
			c.nn.deps.Logger.Warn("failed to report to the NameNode", "err", err)
		}
	}
	c.closeClients()
}

// call makes one NamenodeProtocol call on the active, bounded by the
// helpers' timeout.
func (c *checkpointer) call(ctx context.Context, method string, req, resp proto.Message) error {
	t := time.Minute
	if c.nn != nil {
		t = c.nn.cfg.Checkpoint.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	if err := c.active.Call(ctx, method, req, resp); err != nil {
		return fmt.Errorf("namenode: %s on the NameNode at %s: %w", method, c.activeAddr, err)
	}
	return nil
}

// handshake asks the active for the namespace's identity (versionRequest).
func (c *checkpointer) handshake(ctx context.Context) (*hdfs.NamespaceInfoProto, error) {
	var resp hdfs.VersionResponseProto
	if err := c.call(ctx, "versionRequest", &hdfs.VersionRequestProto{}, &resp); err != nil {
		return nil, err
	}
	info := resp.GetInfo()
	if info.GetState() != hdfs.NNHAStatusHeartbeatProto_ACTIVE {
		return nil, fmt.Errorf("namenode: the NameNode at %s is not active (%v)", c.activeAddr, info.GetState())
	}
	return info, nil
}

// register registers with the active (registerSubordinateNamenode); the
// active must answer as a NameNode.
func (c *checkpointer) register(ctx context.Context) error {
	var resp nnpb.RegisterResponseProto
	if err := c.call(ctx, "registerSubordinateNamenode", &nnpb.RegisterRequestProto{Registration: c.nn.registration()}, &resp); err != nil {
		return err
	}
	if r := resp.GetRegistration(); roleOf(r.GetRole()) != RoleNameNode {
		return fmt.Errorf("namenode: Name-node %s is not active. Shutting down.", c.activeAddr)
	}
	return nil
}

// run is the checkpoint loop.
func (c *checkpointer) run(ctx context.Context) {
	nn := c.nn
	clk := nn.deps.Clock
	t := clk.NewTicker(nn.cfg.CheckpointCheckPeriod)
	defer t.Stop()
	first := true
	for {
		if due, why := c.due(ctx, first); due {
			nn.deps.Logger.Info("checkpoint due", "why", why)
			if err := c.doCheckpoint(ctx); err != nil && ctx.Err() == nil {
				c.failed(err)
			}
		}
		first = false
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// due says whether a checkpoint is due now, and why.
func (c *checkpointer) due(ctx context.Context, first bool) (bool, string) {
	nn := c.nn
	if c.bn != nil {
		if !first { // the start registered already
			if err := c.register(ctx); err != nil && ctx.Err() == nil {
				nn.deps.Logger.Warn("registering with the NameNode", "err", err)
			}
		}
		if st := c.bn.state(); st != backup.InSync {
			return true, "the Backup Node is " + st.String()
		}
	}
	if c.fresh {
		return true, "no image yet"
	}
	if first && c.role == RoleBackup {
		return true, "start-up"
	}
	if nn.deps.Clock.Since(c.lastTime()) >= nn.cfg.CheckpointPeriod {
		return true, "dfs.namenode.checkpoint.period passed"
	}
	n, err := c.uncheckpointed(ctx)
	if err != nil {
		if ctx.Err() == nil {
			nn.deps.Logger.Warn("asking the NameNode for its transaction id", "err", err)
		}
		return false, ""
	}
	if n >= nn.cfg.CheckpointTxns {
		return true, fmt.Sprintf("%d uncheckpointed transactions", n)
	}
	return false, ""
}

// uncheckpointed is how many transactions the active logged beyond this
// node's newest image (countUncheckpointedTxns).
func (c *checkpointer) uncheckpointed(ctx context.Context) (int64, error) {
	var resp nnpb.GetTransactionIdResponseProto
	if err := c.call(ctx, "getTransactionId", &nnpb.GetTransactionIdRequestProto{}, &resp); err != nil {
		return 0, err
	}
	newest, err := c.nn.newestImage()
	if err != nil {
		return 0, err
	}
	return max(0, int64(resp.GetTxId())-newest), nil
}

// errShutdown: the active told this node to shut down.
var errShutdown = errors.New("namenode: the NameNode requested shutdown")

// mergeError marks a failure to roll forward: the next attempt reloads the
// image.
type mergeError struct{ err error }

func (e *mergeError) Error() string { return e.err.Error() }
func (e *mergeError) Unwrap() error { return e.err }

// failed records a failed checkpoint and stops the node when it cannot go
// on: the active told it to, or merges failed too often.
func (c *checkpointer) failed(err error) {
	nn := c.nn
	merges := c.noteFailure(err)
	switch {
	case errors.Is(err, errShutdown):
		nn.ns.stop(err, nn.role.String()+" stopping at the NameNode's request")
	case merges > nn.cfg.Checkpoint.MaxRetries:
		nn.ns.stop(fmt.Errorf("namenode: merging failed %d times: %w", merges, err), "Merging failed too often; stopping")
	default:
		nn.deps.Logger.Error("Exception in doCheckpoint", "err", err)
	}
}

// doCheckpoint takes one checkpoint (see the type's doc for the steps).
func (c *checkpointer) doCheckpoint(ctx context.Context) error {
	nn := c.nn
	ns := nn.ns
	log := nn.deps.Logger
	start := nn.deps.Clock.Now()
	if c.bn != nil {
		c.bn.freeze()
	}
	sig, needReturn, err := c.start(ctx)
	if err != nil {
		return err
	}
	if c.bn != nil {
		if err := c.bn.waitFrozen(ctx, nn.cfg.Checkpoint.Timeout); err != nil {
			return err
		}
	}
	if err := checkSignature(sig, nn.version); err != nil {
		return err
	}
	applied := ns.applied()
	var mresp nnpb.GetEditLogManifestResponseProto
	if err := c.call(ctx, "getEditLogManifest", &nnpb.GetEditLogManifestRequestProto{SinceTxId: proto.Uint64(uint64(applied + 1))}, &mresp); err != nil {
		return err
	}
	logs := mresp.GetManifest().GetLogs()
	mostRecent := int64(sig.GetMostRecentCheckpointTxId())
	reload := c.mergeErrors() > 0
	gap := len(logs) > 0 && int64(logs[0].GetStartTxId()) > applied+1
	if c.fresh || reload || gap || (len(logs) == 0 && mostRecent > applied) {
		log.Info("Unable to roll forward using only logs. Downloading image", "txid", mostRecent,
			"lastApplied", applied, "fresh", c.fresh, "afterMergeError", reload)
		if err := c.loadActiveImage(ctx, mostRecent); err != nil {
			return err
		}
		c.fresh = false
		applied = ns.applied()
	}
	if len(logs) > 0 {
		if int64(logs[0].GetStartTxId()) > applied+1 {
			return fmt.Errorf("namenode: No logs to roll forward from %d (the NameNode's edits start at %d)", applied, logs[0].GetStartTxId())
		}
		si := imagetransfer.StorageInfoOf(nn.version)
		for _, l := range logs {
			if int64(l.GetEndTxId()) <= applied {
				continue
			}
			for _, d := range nn.cfg.EditsDirs {
				if err := c.images.DownloadEdits(ctx, c.activeHTTP, int64(l.GetStartTxId()), int64(l.GetEndTxId()),
					storage.Dir{Root: d}.Current(), imagetransfer.GetOptions{StorageInfo: &si}); err != nil {
					return fmt.Errorf("namenode: downloading edits %d-%d: %w", l.GetStartTxId(), l.GetEndTxId(), err)
				}
			}
		}
		to := int64(logs[len(logs)-1].GetEndTxId())
		last, n, err := ns.catchUp(ctx, editlog.ReadOptions{To: to}, ns.elog.ReadOps)
		if err == nil && last < to {
			err = fmt.Errorf("the edits end at txid %d, the manifest at %d", last, to)
		}
		if err != nil {
			return &mergeError{fmt.Errorf("namenode: rolling forward to txid %d: %w", to, err)}
		}
		log.Info("rolled forward", "edits", n, "lastApplied", last)
	}
	if c.bn != nil {
		c.bn.applied(ns.applied())
	}
	c.noteMerged()

	txid, err := nn.saveApplied(ctx)
	if err != nil {
		return err
	}
	if needReturn {
		err := c.images.UploadImage(ctx, c.activeHTTP, txid, nn.cfg.NameDirs[0], imagetransfer.StorageInfoOf(nn.version))
		switch {
		case errors.Is(err, imagetransfer.ErrOlderImage):
			log.Info("the NameNode has this image or a newer one", "txid", txid)
		case err != nil:
			return fmt.Errorf("namenode: uploading image %d: %w", txid, err)
		default:
			log.Info("image uploaded to the NameNode", "txid", txid)
		}
	}
	if c.role != RoleSecondary {
		if err := c.call(ctx, "endCheckpoint", &nnpb.EndCheckpointRequestProto{Registration: nn.registration(), Signature: sig},
			&nnpb.EndCheckpointResponseProto{}); err != nil {
			return err
		}
	}
	if c.bn != nil {
		if err := c.bn.converge(ctx); err != nil {
			return fmt.Errorf("namenode: converging with the journal spool: %w", err)
		}
	}
	nn.purge(txid)
	var size int64
	if fi, err := nn.deps.FS.Stat(storage.NewNameDir(nn.cfg.NameDirs[0]).ImagePath(txid)); err == nil {
		size = fi.Size()
	}
	took := nn.deps.Clock.Since(start)
	c.noteDone(txid, took, size)
	log.Info("Checkpoint completed", "txid", txid, "took", took.String(), "imageSize", size)
	return nil
}

// start begins a checkpoint on the active: startCheckpoint (a Backup or
// Checkpoint Node) or rollEditLog (the Secondary).
func (c *checkpointer) start(ctx context.Context) (sig *hdfs.CheckpointSignatureProto, needReturn bool, err error) {
	if c.role == RoleSecondary {
		var resp nnpb.RollEditLogResponseProto
		if err := c.call(ctx, "rollEditLog", &nnpb.RollEditLogRequestProto{}, &resp); err != nil {
			return nil, false, err
		}
		return resp.GetSignature(), true, nil
	}
	var resp nnpb.StartCheckpointResponseProto
	if err := c.call(ctx, "startCheckpoint", &nnpb.StartCheckpointRequestProto{Registration: c.nn.registration()}, &resp); err != nil {
		return nil, false, err
	}
	cmd := resp.GetCommand()
	switch cmd.GetAction() {
	case actShutdown:
		return nil, false, fmt.Errorf("%w: Name-node %s requested shutdown.", errShutdown, c.activeAddr)
	case actCheckpoint:
		cc := cmd.GetCheckpointCmd()
		if cc == nil {
			return nil, false, fmt.Errorf("namenode: startCheckpoint: a checkpoint command without its signature")
		}
		return cc.GetSignature(), cc.GetNeedToReturnImage(), nil
	}
	return nil, false, fmt.Errorf("namenode: Unsupported NamenodeCommand: %d", cmd.GetAction())
}

// loadActiveImage downloads the active's image txid into every checkpoint
// dir and loads it in place of the namespace (the gap path).
func (c *checkpointer) loadActiveImage(ctx context.Context, txid int64) error {
	nn := c.nn
	ns := nn.ns
	si := imagetransfer.StorageInfoOf(nn.version)
	if _, _, err := c.images.DownloadImage(ctx, c.activeHTTP, txid, nn.cfg.NameDirs, imagetransfer.GetOptions{StorageInfo: &si}); err != nil {
		return fmt.Errorf("namenode: downloading image %d: %w", txid, err)
	}
	nn.deps.Logger.Info("Loading image", "txid", txid)
	tree, got, err := loadTree(nn.deps.FS, &nn.cfg, nn.version.NamespaceID)
	if err != nil {
		return err
	}
	if got != txid {
		return fmt.Errorf("namenode: loaded image %d, downloaded %d", got, txid)
	}
	c.noteDownload()
	if c.bn != nil {
		if err := c.bn.reloaded(txid); err != nil {
			return err
		}
	}
	ns.cpMu.Lock()
	defer ns.cpMu.Unlock()
	ns.writeLocked(func() {
		ns.resetLocked(tree)
		ns.mu.bm.Activate(nn.deps.Clock.Now())
		ns.mu.bm.SetStandby(true, nn.deps.Clock.Now())
	})
	ns.setApplied(txid)
	return nil
}

// status is what the web pages show of the checkpointer.
type checkpointStatus struct {
	last                 time.Time
	lastTxID             int64
	lastTook             time.Duration
	lastSize             int64
	done, failures       int64
	downloads            int64
	lastErr              string
	journal              string // a Backup Node's journal state
	applied, journalLast int64
}

func (c *checkpointer) status() checkpointStatus {
	s := c.counters()
	s.applied = c.nn.ns.applied()
	if c.bn != nil {
		s.journal, s.journalLast = c.bn.describe()
	}
	return s
}

func (c *checkpointer) counters() checkpointStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return checkpointStatus{last: c.mu.last, lastTxID: c.mu.lastTxID, lastTook: c.mu.lastTook, lastSize: c.mu.lastSize,
		done: c.mu.done, failures: c.mu.failures, downloads: c.mu.downloads, lastErr: c.mu.lastErr}
}

func (c *checkpointer) noteDownload() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.downloads++
}

// CheckpointStats are a helper's checkpoint counters since it started.
type CheckpointStats struct {
	// Done and Failed count checkpoints; ImagesDownloaded the images
	// fetched from the NameNode in place of the namespace (the gap path).
	Done, Failed, ImagesDownloaded int64
	// LastTxID is the txid of the last checkpoint's image (0: none yet).
	LastTxID int64
}

// CheckpointStats returns a helper's checkpoint counters (zero on a
// NameNode).
func (nn *NameNode) CheckpointStats() CheckpointStats {
	if nn.helper == nil {
		return CheckpointStats{}
	}
	s := nn.helper.counters()
	return CheckpointStats{Done: s.done, Failed: s.failures, ImagesDownloaded: s.downloads, LastTxID: s.lastTxID}
}

func (c *checkpointer) lastTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.last
}

// noteFailure counts a failed checkpoint; it returns the merge errors in a
// row.
func (c *checkpointer) noteFailure(err error) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.failures++
	c.mu.lastErr = err.Error()
	var me *mergeError
	if errors.As(err, &me) {
		c.mu.mergeErrors++
	}
	return c.mu.mergeErrors
}

func (c *checkpointer) mergeErrors() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.mergeErrors
}

func (c *checkpointer) noteMerged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.mergeErrors = 0
}

func (c *checkpointer) noteDone(txid int64, took time.Duration, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.last, c.mu.lastTxID, c.mu.lastTook, c.mu.lastSize = c.nn.deps.Clock.Now(), txid, took, size
	c.mu.done++
	c.mu.lastErr = ""
}
