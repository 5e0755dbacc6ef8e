package namenode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	nnpb "github.com/hdfsgo/hdfsgo/internal/proto/namenode"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// BootstrapOptions are `hdfs namenode -bootstrapStandby`'s choices.
type BootstrapOptions struct {
	// Force re-formats name dirs that hold something, without asking.
	Force bool
	// Confirm is asked before re-formatting each non-empty name dir; nil
	// (and not Force) refuses.
	Confirm func(dir string) bool
	// SkipSharedEditsCheck does not check that the shared edits hold the
	// transactions after the downloaded image (-skipSharedEditsCheck).
	SkipSharedEditsCheck bool
}

// ErrAlreadyFormatted: -bootstrapStandby found formatted name dirs and was
// not allowed to re-format them.
var ErrAlreadyFormatted = errors.New("namenode: the name directories are already formatted")

// BootstrapStandby makes this NameNode the standby of its nameservice
// (Hadoop's -bootstrapStandby): it asks another NameNode of the
// nameservice for the namespace's identity, formats the local name dirs
// with it, downloads that NameNode's newest image over HTTP, and checks
// that the shared edits hold every transaction after the image, so that
// the standby can start from it and tail the rest. This NameNode must be
// stopped; the other one must be running.
func BootstrapStandby(ctx context.Context, cfg Config, deps Deps, opts BootstrapOptions) error {
	deps.fill(&cfg)
	if !cfg.HA.Enabled {
		return errors.New("namenode: -bootstrapStandby needs an HA nameservice (dfs.nameservices, dfs.ha.namenodes.NS)")
	}
	peer, info, curTxID, err := otherNameNode(ctx, cfg)
	if err != nil {
		return err
	}
	si := info.GetStorageInfo()
	deps.Logger.Info("bootstrapping from another NameNode", "nn", peer.ID, "rpc", peer.RPCAddress, "http", peer.HTTPAddress,
		"clusterID", si.GetClusterID(), "namespaceID", si.GetNamespceID(), "blockPoolID", info.GetBlockPoolID(), "txid", curTxID)
	v := &storage.Version{
		LayoutVersion: int32(si.GetLayoutVersion()),
		NamespaceID:   int32(si.GetNamespceID()),
		ClusterID:     si.GetClusterID(),
		CTime:         int64(si.GetCTime()),
		StorageType:   storage.StorageTypeNameNode,
		BlockPoolID:   info.GetBlockPoolID(),
	}
	if v.LayoutVersion != storage.NameNodeLayoutVersion {
		return fmt.Errorf("namenode: the other NameNode has layout version %d; this one writes %d", v.LayoutVersion, storage.NameNodeLayoutVersion)
	}
	fsys := deps.FS
	dirs := cfg.allDirs()
	locks, err := lockDirs(fsys, dirs)
	if err != nil {
		return err
	}
	defer closeAll(locks)
	for _, d := range dirs {
		a, err := storage.Dir{Root: d}.Analyze(fsys)
		if err != nil {
			return err
		}
		if a.State != storage.StateFormatted {
			continue
		}
		if !opts.Force && (opts.Confirm == nil || !opts.Confirm(d)) {
			return fmt.Errorf("%w: %s (use -force to re-format)", ErrAlreadyFormatted, d)
		}
	}
	now := deps.Clock.Now()
	for _, d := range dirs {
		if err := (storage.Dir{Root: d}).Format(fsys, v, now, true); err != nil {
			return err
		}
	}
	c, err := imagetransfer.NewClient(cfg.ImageTransfer, imagetransfer.ClientOptions{FS: fsys, Clock: deps.Clock})
	if err != nil {
		return err
	}
	defer c.Close()
	want := imagetransfer.StorageInfoOf(v)
	imageTxID, _, err := c.DownloadImage(ctx, "http://"+peer.HTTPAddress, imagetransfer.Latest, cfg.NameDirs,
		imagetransfer.GetOptions{StorageInfo: &want, BootstrapStandby: true})
	if err != nil {
		return fmt.Errorf("namenode: downloading the image from %s: %w", peer.ID, err)
	}
	deps.Logger.Info("downloaded the image", "txid", imageTxID)
	for _, d := range dirs {
		if err := storage.NewNameDir(d).WriteSeenTxID(fsys, imageTxID); err != nil {
			return err
		}
	}
	if opts.SkipSharedEditsCheck {
		return nil
	}
	return checkSharedEdits(ctx, cfg, deps, v, imageTxID, curTxID)
}

// otherNameNode finds a running NameNode of the nameservice, the active one
// first, and returns its namespace info and newest txid.
func otherNameNode(ctx context.Context, cfg Config) (Peer, *hdfs.NamespaceInfoProto, int64, error) {
	type found struct {
		p    Peer
		info *hdfs.NamespaceInfoProto
		txid int64
	}
	var best *found
	var errs []error
	for _, p := range cfg.HA.Peers {
		c := ipc.NewClient(cfg.peerAuth(ipc.ClientConfig{Addresses: []string{p.RPCAddress}, User: cfg.SuperUser,
			Protocol: NamenodeProtocolName, MaxRetries: 2, DialTimeout: 5 * time.Second}))
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var vr hdfs.VersionResponseProto
		err := c.Call(cctx, "versionRequest", &hdfs.VersionRequestProto{}, &vr)
		var tr nnpb.GetTransactionIdResponseProto
		if err == nil {
			err = c.Call(cctx, "getTransactionId", &nnpb.GetTransactionIdRequestProto{}, &tr)
		}
		cancel()
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s at %s: %w", p.ID, p.RPCAddress, err))
			continue
		}
		f := &found{p: p, info: vr.GetInfo(), txid: int64(tr.GetTxId())}
		if best == nil || f.info.GetState() == hdfs.NNHAStatusHeartbeatProto_ACTIVE {
			best = f
		}
	}
	if best == nil {
		return Peer{}, nil, 0, fmt.Errorf("namenode: no other NameNode of %s answered: %w", cfg.HA.Nameservice, errors.Join(errs...))
	}
	return best.p, best.info, best.txid, nil
}

// checkSharedEdits reads the shared edits from the image's txid to curTxID:
// a standby starting from the image needs every one of them. A quorum
// journal shows the segment being written up to what a majority holds, so
// a reader that comes right after a write may see it a moment later: the
// check looks again for up to sharedEditsWait.
func checkSharedEdits(ctx context.Context, cfg Config, deps Deps, v *storage.Version, imageTxID, curTxID int64) error {
	var journals []editlog.Journal
	for _, u := range cfg.HA.SharedEditsDirs {
		j, err := deps.Journals(u, v)
		if err != nil {
			return err
		}
		defer j.Close()
		journals = append(journals, j)
	}
	deadline := deps.Clock.Now().Add(sharedEditsWait)
	for {
		last, err := editlog.ReadOps(ctx, journals, editlog.ReadOptions{From: imageTxID, To: curTxID, InProgress: true},
			func(int64, op.Op) error { return nil })
		if err == nil && last < curTxID {
			err = fmt.Errorf("the edits end at txid %d", last)
		}
		if err == nil {
			return nil
		}
		if deps.Clock.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("namenode: unable to read transaction ids %d-%d from the configured shared edits storage %s: %w",
				imageTxID+1, curTxID, strings.Join(cfg.HA.SharedEditsDirs, ","), err)
		}
		t := deps.Clock.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}

// sharedEditsWait bounds how long -bootstrapStandby waits for the shared
// edits to show the other NameNode's last transaction.
const sharedEditsWait = 10 * time.Second
