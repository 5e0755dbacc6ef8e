package bench

import (
	"context"
	"fmt"
	"io"
	"path"
	"runtime"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// editsBatchBytes is how much encoded edit log the offline build writes at
// a time.
const editsBatchBytes = 1 << 20

// runRestartOffline is the restart op with Offline set: the NameNode's
// directory is written without RPC, as a NameNode would have left it. The
// directory is formatted; opts.Files completed empty files are applied to a
// namespace.Tree with the ops the NameNode logs (OP_MKDIR, OP_ADD,
// OP_CLOSE), saved as the image; then opts.Edits more ops of the same kinds
// (new files, OP_ADD and OP_CLOSE each) go into one finalized edit-log
// segment after it. The op times a start of the NameNode on that
// directory until it answers getFileInfo, then saveNamespace over RPC, then
// a start with everything in the image.
func runRestartOffline(ctx context.Context, opts Options, out io.Writer) error {
	if len(opts.Addrs) > 0 {
		return fmt.Errorf("%w: restart measures an in-process NameNode only (no -fs hdfs://)", ErrBadOptions)
	}
	tg := &target{opts: &opts}
	defer tg.close()
	if err := tg.formatLocal(ctx); err != nil {
		return err
	}
	editFiles := opts.Edits / 2
	base := BaseDir + "/" + OpRestart
	gen := newNames(base, "ThroughputBench", opts.Files+editFiles, opts.FilesPerDir)

	switch opts.Layout {
	case "", "files", "blocks":
	default:
		return fmt.Errorf("%w: restart: -layout %q: want files or blocks", ErrBadOptions, opts.Layout)
	}
	buildStart := time.Now()
	st, err := writeOfflineState(tg.cfg, gen, opts.Files, opts.Edits, opts.User, opts.Layout == "blocks")
	if err != nil {
		return fmt.Errorf("bench: restart: %w", err)
	}
	build := time.Since(buildStart)
	runtime.GC()

	fmt.Fprintf(out, "\n--- %s inputs ---\nnrFiles = %d (in the image) + %d (in the edits)\nnrFilesPerDir = %d\n", OpRestart, opts.Files, st.editFiles, opts.FilesPerDir)
	if opts.Layout == "blocks" {
		fmt.Fprintf(out, "layout = blocks (one complete block per file, no DataNode)\n")
	}
	fmt.Fprintf(out, "Build Time: %d ms (ops applied to a namespace, no RPC; image saved at txid %d, %d edits after it)\n", build.Milliseconds(), st.imageTxID, st.lastTxID-st.imageTxID)
	fmt.Fprintf(out, "Image Save Time: %d ms (fsimage.Save of the built namespace, %d inodes, one name dir)\n", st.save.Milliseconds(), st.inodes)
	fmt.Fprintf(out, "Last txid: %d\n", st.lastTxID)

	total := opts.Files + st.editFiles
	mixed, err := timeRestart(ctx, tg, base, total)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s stats (image + edits) ---\n", OpRestart)
	mixed.print(out, tg.dir)

	start := time.Now()
	var holds0 int64
	parts, err := saveNamespaceTimed(ctx, tg.admin, func() { _, holds0 = tg.nn.WriteLockHoldMax(true) })
	if err != nil {
		return fmt.Errorf("bench: restart: %w", err)
	}
	hold, holds := tg.nn.WriteLockHoldMax(false)
	fmt.Fprintf(out, "saveNamespace Time: %d ms (over RPC: %v; leaving: %d holds of the write lock, the longest %.1f ms)\n",
		time.Since(start).Milliseconds(), parts, holds-holds0, float64(hold.Microseconds())/1e3)
	imageOnly, err := timeRestart(ctx, tg, base, total)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s stats (image only) ---\n", OpRestart)
	imageOnly.print(out, tg.dir)
	return nil
}

// offlineState is what writeOfflineState wrote.
type offlineState struct {
	imageTxID, lastTxID int64
	inodes              int64
	editFiles           int
	save                time.Duration
}

// writeOfflineState fills the formatted name dir of cfg: an image of the
// first imageFiles files of gen and a segment of about edits ops creating
// the next ones; with blocks every file gets one block (OP_ALLOCATE_BLOCK_ID
// and OP_ADD_BLOCK before its OP_CLOSE, after one OP_SET_GENSTAMP_V2).
func writeOfflineState(cfg namenode.Config, gen names, imageFiles, edits int, user string, blocks bool) (offlineState, error) {
	var st offlineState
	fsys := vfs.Default
	nameDir := cfg.NameDirs[0]
	var hdr fsimage.Header
	if _, err := fsimage.Load(fsys, cfg.NameDirs, func(h fsimage.Header, r *fsimage.Reader) error {
		hdr = h
		for {
			if _, err := r.Next(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}); err != nil {
		return st, err
	}
	tcfg := namespace.DefaultConfig(user)
	tcfg.SuperUser, tcfg.SuperGroup = cfg.SuperUser, cfg.SuperGroup
	tr := namespace.New(tcfg)
	now := time.Now().UnixMilli()
	txid := hdr.TxID

	// apply applies o and, once the image is written, logs it.
	var (
		logging bool
		batch   []byte
		first   int64
		j       *editlog.FileJournal
	)
	apply := func(o op.Op) error {
		if err := tr.Apply(o); err != nil {
			return err
		}
		txid++
		if !logging {
			return nil
		}
		var err error
		if len(batch) == 0 {
			first = txid
		}
		if batch, err = editlog.EncodeRecord(batch, txid, o); err != nil {
			return err
		}
		if len(batch) >= editsBatchBytes {
			err = j.Write(context.Background(), batch, first, txid)
			batch = batch[:0]
		}
		return err
	}
	mkdirs := func(p string) error { return nil }
	{
		made := map[string]bool{"/": true}
		dperm := op.Perm{User: user, Group: "supergroup", Mode: 0o755}
		var md func(p string) error
		md = func(p string) error {
			if made[p] {
				return nil
			}
			if err := md(path.Dir(p)); err != nil {
				return err
			}
			made[p] = true
			return apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: p, Mtime: now, Perm: dperm})
		}
		mkdirs = md
	}
	fperm := op.Perm{User: user, Group: "supergroup", Mode: 0o644}
	create := func(i int) error {
		p := gen.path(i)
		if i%gen.perDir == 0 {
			if err := mkdirs(path.Dir(p)); err != nil {
				return err
			}
		}
		if err := apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: now, Atime: now,
			BlockSize: blockSize, Perm: fperm, ClientName: "restart-client-0", ClientMachine: "127.0.0.1"}); err != nil {
			return err
		}
		if !blocks {
			return apply(&op.Close{Path: p, Mtime: now, Atime: now})
		}
		b := op.Block{ID: tr.NextBlockID(), NumBytes: 1 << 20, GenStamp: tr.GenStamp()}
		if err := apply(&op.AllocateBlockID{BlockID: b.ID}); err != nil {
			return err
		}
		if err := apply(&op.AddBlock{Path: p, Last: b}); err != nil {
			return err
		}
		return apply(&op.Close{Path: p, Mtime: now, Atime: now, Blocks: []op.Block{b}})
	}
	if blocks {
		if err := apply(&op.SetGenstamp{GenStamp: tr.NextGenStamp()}); err != nil {
			return st, err
		}
	}
	for i := 0; i < imageFiles; i++ {
		if err := create(i); err != nil {
			return st, err
		}
	}
	st.imageTxID = txid
	st.inodes = tr.NumInodes()
	h := tr.ImageHeader(txid)
	h.LayoutVersion, h.NamespaceID, h.Delegation = hdr.LayoutVersion, hdr.NamespaceID, hdr.Delegation
	saveStart := time.Now()
	if err := fsimage.Save(fsys, cfg.NameDirs, h, tr.Export); err != nil {
		return st, err
	}
	st.save = time.Since(saveStart)

	if edits > 0 {
		j = editlog.NewFileJournal(fsys, storage.Dir{Root: nameDir}.Current())
		defer j.Close()
		segFirst := txid + 1
		if err := j.StartSegment(context.Background(), segFirst); err != nil {
			return st, err
		}
		logging = true
		if err := apply(&op.StartLogSegment{}); err != nil {
			return st, err
		}
		// Two ops a file (four with blocks, and an OP_MKDIR per new
		// directory), until the segment holds about edits ops.
		for i := imageFiles; txid-segFirst+1 < int64(edits)-1 && i < gen.n; i++ {
			if err := create(i); err != nil {
				return st, err
			}
			st.editFiles++
		}
		if err := apply(&op.EndLogSegment{}); err != nil {
			return st, err
		}
		if len(batch) > 0 {
			if err := j.Write(context.Background(), batch, first, txid); err != nil {
				return st, err
			}
		}
		if err := j.FinalizeSegment(context.Background(), segFirst, txid); err != nil {
			return st, err
		}
	}
	st.lastTxID = txid
	if err := storage.NewNameDir(nameDir).WriteSeenTxID(fsys, txid); err != nil {
		return st, err
	}
	return st, nil
}
