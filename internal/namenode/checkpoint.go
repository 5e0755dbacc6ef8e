package namenode

import (
	"context"
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// Images between NameNodes (seed 000 §1, the Standby checkpoint).
//
// Every NameNode serves the image servlet (package imagetransfer) on its
// web server: GET of its images and finalized edit segments (for
// -bootstrapStandby and the Checkpoint Node), and, while active, PUT of a
// new image. A standby takes checkpoints: every
// dfs.namenode.checkpoint.check.period it looks whether
// dfs.namenode.checkpoint.period has passed or dfs.namenode.checkpoint.txns
// transactions were applied since the last image; if so it saves an image
// of what it applied, in its own name dirs, and uploads it to the active,
// which stores it (create, fsync, rename, with its MD5) and applies the
// retention rules: dfs.namenode.num.checkpoints.retained images, and the
// edits no retained image needs beyond dfs.namenode.num.extra.edits.retained.
// A restart of the active then replays only the edits after that image.
//
// A standby's tree changes only by the tailer, and the tailer holds the
// checkpoint lock (namesystem.cpMu) while it applies: the checkpointer takes
// that lock and writes the image without the namesystem lock, so DataNode
// reports and stale reads go on while it writes. A transition to active
// cancels a checkpoint in progress.

// startImageServer mounts the image servlet on the web server.
func (nn *NameNode) startImageServer() error {
	srv, err := imagetransfer.NewServer(nn.cfg.ImageTransfer, imagetransfer.Host{
		FS:        nn.deps.FS,
		ImageDirs: func() []string { return nn.cfg.NameDirs },
		EditsDirs: func() []string {
			var dirs []string
			for _, d := range nn.cfg.EditsDirs {
				dirs = append(dirs, storage.Dir{Root: d}.Current())
			}
			return dirs
		},
		StorageInfo: func() imagetransfer.StorageInfo { return imagetransfer.StorageInfoOf(nn.version) },
		AcceptUploads: func() (bool, string) {
			st := nn.ha.State()
			return st == ha.Active, st.String()
		},
		ImageStored: func(ctx context.Context, s imagetransfer.Stored) {
			nn.deps.Logger.Info("checkpoint uploaded", "txid", s.TxID, "from", s.Remote, "bytes", s.Size)
			nn.purge(s.TxID)
		},
		Logger: nn.deps.Logger,
		Clock:  nn.deps.Clock,
	})
	if err != nil {
		return fmt.Errorf("namenode: image servlet: %w", err)
	}
	nn.images = srv
	nn.web.Handle(imagetransfer.Path, srv)
	return nil
}

// standbyCheckpointer is the standby's checkpoint loop.
func (nn *NameNode) standbyCheckpointer(ctx context.Context) {
	clk := nn.deps.Clock
	t := clk.NewTicker(nn.cfg.CheckpointCheckPeriod)
	defer t.Stop()
	last, _ := nn.newestImage()
	lastTime := clk.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		applied := nn.ns.applied()
		due := applied-last >= nn.cfg.CheckpointTxns ||
			(applied > last && clk.Now().Sub(lastTime) >= nn.cfg.CheckpointPeriod)
		if !due {
			continue
		}
		txid, err := nn.checkpoint(ctx)
		if err != nil {
			if ctx.Err() == nil {
				nn.deps.Logger.Warn("standby checkpoint failed", "err", err)
			}
			continue
		}
		last, lastTime = txid, clk.Now()
	}
}

// checkpoint saves an image of what the standby applied and uploads it to
// the active; it returns the image's txid.
func (nn *NameNode) checkpoint(ctx context.Context) (int64, error) {
	start := nn.deps.Clock.Now()
	txid, err := nn.saveApplied(ctx)
	if err != nil {
		return 0, err
	}
	nn.deps.Logger.Info("standby checkpoint saved", "txid", txid, "took", nn.deps.Clock.Since(start).String())
	if err := nn.uploadImage(ctx, txid); err != nil {
		return txid, err
	}
	nn.purgeImages()
	return txid, nil
}

// saveApplied writes an image of the state at the last applied txid into
// the name dirs, holding the checkpoint lock so that the tailer applies
// nothing meanwhile.
func (nn *NameNode) saveApplied(ctx context.Context) (int64, error) {
	nn.ckptMu.Lock()
	defer nn.ckptMu.Unlock()
	ns := nn.ns
	ns.cpMu.Lock()
	defer ns.cpMu.Unlock()
	txid := ns.applied()
	if newest, _ := nn.newestImage(); newest >= txid {
		return txid, nil // nothing new since the last image
	}
	if nn.images != nil {
		release, err := nn.images.Reserve(txid, "standby checkpoint")
		if err != nil {
			return 0, err
		}
		defer release()
	}
	// The tree is not changed while cpMu is held (only the tailer changes
	// a standby's tree), so it is read without the namesystem lock.
	t := ns.mu.tree
	h := t.ImageHeader(txid)
	h.LayoutVersion = storage.NameNodeLayoutVersion
	h.NamespaceID = nn.version.NamespaceID
	err := fsimage.Save(nn.deps.FS, nn.cfg.NameDirs, h, func(fn func(*fsimage.Inode) error) error {
		return t.Export(func(in *fsimage.Inode) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(in)
		})
	})
	if err != nil {
		var se *fsimage.SaveError
		if !errors.As(err, &se) || len(se.Succeeded) == 0 {
			return 0, fmt.Errorf("namenode: saving the standby checkpoint at txid %d: %w", txid, err)
		}
		nn.deps.Logger.Error("standby checkpoint failed in some name dirs", "err", err)
	}
	return txid, nil
}

// uploadImage sends the image at txid to the other NameNodes; it succeeds
// when the active took it (or already has it or a newer one).
func (nn *NameNode) uploadImage(ctx context.Context, txid int64) error {
	c, err := imagetransfer.NewClient(nn.cfg.ImageTransfer, imagetransfer.ClientOptions{FS: nn.deps.FS, Clock: nn.deps.Clock})
	if err != nil {
		return err
	}
	defer c.Close()
	si := imagetransfer.StorageInfoOf(nn.version)
	var errs []error
	for _, p := range nn.cfg.HA.Peers {
		err := c.UploadImage(ctx, "http://"+p.HTTPAddress, txid, nn.cfg.NameDirs[0], si)
		switch {
		case err == nil:
			nn.deps.Logger.Info("checkpoint uploaded to the active", "nn", p.ID, "txid", txid)
			return nil
		case errors.Is(err, imagetransfer.ErrOlderImage):
			return nil // the active has this image or a newer one
		case errors.Is(err, imagetransfer.ErrNotAccepting):
			continue // a standby
		}
		errs = append(errs, fmt.Errorf("%s: %w", p.ID, err))
	}
	if len(errs) == 0 {
		return errors.New("namenode: no active NameNode took the checkpoint")
	}
	return errors.Join(errs...)
}

// purge applies the retention rules after an image at txid was saved: old
// images, and the edits no retained image needs.
func (nn *NameNode) purge(txid int64) {
	oldest := nn.purgeImages()
	keepFrom := oldest + 1 - nn.cfg.ExtraEditsRetained
	if keepFrom > 1 {
		if err := nn.ns.elog.PurgeBefore(context.Background(), keepFrom); err != nil {
			nn.deps.Logger.Warn("purging old edits", "err", err)
		}
	}
}

// purgeImages removes images beyond dfs.namenode.num.checkpoints.retained
// and returns the oldest kept (a standby purges nothing else: the shared
// edits are the active's to purge).
func (nn *NameNode) purgeImages() int64 {
	oldest, err := fsimage.Purge(nn.deps.FS, nn.cfg.NameDirs, nn.cfg.CheckpointsRetained)
	if err != nil {
		nn.deps.Logger.Warn("purging old images", "err", err)
	}
	return oldest
}
