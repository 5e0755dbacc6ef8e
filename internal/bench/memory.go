package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// buildTree makes the namespace the create op would leave behind with Close
// set (every file created and completed, no blocks), applying the same ops
// the NameNode logs (Mkdir, Add, Close) straight to a namespace.Tree.
func buildTree(user string, gen names, now int64, features string) (*namespace.Tree, error) {
	tr := namespace.New(namespace.DefaultConfig(user))
	fperm := op.Perm{User: user, Group: "supergroup", Mode: 0o644}
	dperm := op.Perm{User: user, Group: "supergroup", Mode: 0o755}
	made := map[string]bool{"/": true}
	var mkdirs func(p string) error
	mkdirs = func(p string) error {
		if made[p] {
			return nil
		}
		if err := mkdirs(path.Dir(p)); err != nil {
			return err
		}
		made[p] = true
		return tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: p, Mtime: now, Perm: dperm})
	}
	for i := 0; i < gen.n; i++ {
		p := gen.path(i)
		if i%gen.perDir == 0 {
			if err := mkdirs(path.Dir(p)); err != nil {
				return nil, err
			}
		}
		add := &op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: now, Atime: now,
			BlockSize: blockSize, Perm: fperm, ClientName: "memory-client-0", ClientMachine: "127.0.0.1", Overwrite: true}
		if err := tr.Apply(add); err != nil {
			return nil, err
		}
		if err := tr.Apply(&op.Close{Path: p, Mtime: now, Atime: now}); err != nil {
			return nil, err
		}
		var feat op.Op
		switch features {
		case "xattr":
			feat = &op.SetXAttr{Path: p, XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "tag", Value: []byte("value-01")}}}
		case "acl":
			feat = &op.SetACL{Path: p, Entries: []op.ACLEntry{{Type: op.ACLUser, Perm: 6}, {Type: op.ACLUser, Name: "bob", Perm: 4},
				{Type: op.ACLGroup, Perm: 4}, {Type: op.ACLMask, Perm: 4}, {Type: op.ACLOther, Perm: 4}}}
		}
		if feat != nil {
			if err := tr.Apply(feat); err != nil {
				return nil, err
			}
		}
	}
	return tr, nil
}

// memoryLayouts are the values of Options.Layout the memory op takes.
var memoryLayouts = map[string]bool{"": true, "files": true, "blocks": true, "dirs": true}

// memDatanodes are the simulated DataNodes of the blocks layout: each
// registers one storage with the block manager and sends one full block
// report holding every block.
func memDatanodes(n int) []blockmgmt.DatanodeID {
	ids := make([]blockmgmt.DatanodeID, n)
	for i := range ids {
		ids[i] = blockmgmt.DatanodeID{UUID: fmt.Sprintf("memory-dn-%d", i), IPAddr: "127.0.0.1",
			Hostname: "localhost", XferPort: 9866 + i, InfoPort: 9864, IPCPort: 9867}
	}
	return ids
}

// addBlocks gives every file of the tree one block (OP_ADD_BLOCK, then the
// OP_CLOSE naming it, as the NameNode logs a one-block file) and returns
// the block manager holding those blocks with repl replicas each, reported
// by repl simulated DataNodes through full block reports.
func addBlocks(tr *namespace.Tree, gen names, user string, repl int, now time.Time) (*blockmgmt.Manager, error) {
	bm := blockmgmt.New(blockmgmt.DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	report := make([]blockmgmt.ReportedReplica, 0, gen.n)
	for i := 0; i < gen.n; i++ {
		p := gen.path(i)
		b := op.Block{ID: namespace.FirstBlockID + 1 + int64(i), NumBytes: 1 << 20, GenStamp: namespace.FirstGenStamp + 1}
		if err := tr.Apply(&op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: uint16(repl), Mtime: now.UnixMilli(), Atime: now.UnixMilli(),
			BlockSize: blockSize, Perm: op.Perm{User: user, Group: "supergroup", Mode: 0o644}, ClientName: "memory-client-0", ClientMachine: "127.0.0.1"}); err != nil {
			return nil, err
		}
		if err := tr.Apply(&op.AddBlock{Path: p, Last: b}); err != nil {
			return nil, err
		}
		if err := tr.Apply(&op.Close{Path: p, Mtime: now.UnixMilli(), Atime: now.UnixMilli(), Blocks: []op.Block{b}}); err != nil {
			return nil, err
		}
		report = append(report, blockmgmt.ReportedReplica{Block: blockmgmt.Block(b), State: blockmgmt.Finalized})
	}
	// The block map is rebuilt from the namespace as a starting NameNode
	// rebuilds it from its image.
	var err error
	tr.EachFileWithBlocks(func(id uint64, r uint16, _ uint8, blocks []op.Block, uc bool) {
		for _, b := range blocks {
			if e := bm.AddBlock(int64(id), blockmgmt.Block(b), int(r), blockmgmt.Complete, nil); e != nil && err == nil {
				err = e
			}
		}
	})
	if err != nil {
		return nil, err
	}
	bm.SetMaxGenStamp(tr.GenStamp())
	bm.Activate(now)
	for _, id := range memDatanodes(repl) {
		st := blockmgmt.StorageReport{StorageID: "DS-" + id.UUID, Capacity: 1 << 50, Remaining: 1 << 50}
		if err := bm.RegisterDatanode(id, now, st); err != nil {
			return nil, err
		}
		res, err := bm.ProcessFullBlockReport(id.UUID, st.StorageID, report, now)
		if err != nil {
			return nil, err
		}
		if res.Removed != 0 {
			return nil, fmt.Errorf("%w: a full report of %s dropped %d replicas", ErrCheck, id.UUID, res.Removed)
		}
	}
	for bm.PopulateFor(func() bool { return false }) { // what a NameNode's slices would judge
	}
	if n := bm.NumBlocks(); n != gen.n {
		return nil, fmt.Errorf("%w: the block map holds %d blocks, want %d", ErrCheck, n, gen.n)
	}
	if info, ok := bm.BlockInfo(namespace.FirstBlockID + 1); !ok || info.Live != repl {
		return nil, fmt.Errorf("%w: the first block has %d live replicas, want %d", ErrCheck, info.Live, repl)
	}
	return bm, nil
}

// buildDirs makes n empty directories under base, perDir in each parent.
func buildDirs(user string, gen names, now int64) (*namespace.Tree, error) {
	tr := namespace.New(namespace.DefaultConfig(user))
	mkdirs := mkdirsFunc(tr, user, now)
	for i := 0; i < gen.n; i++ {
		if err := mkdirs(gen.path(i)); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// runMemory reports the heap a namespace of opts.Files files (or
// directories) holds.
func runMemory(opts Options, out io.Writer) error {
	gen := newNames(BaseDir+"/"+OpMemory, "ThroughputBench", opts.Files, opts.FilesPerDir)
	switch opts.Features {
	case "", "xattr", "acl", "snapshot":
	default:
		return fmt.Errorf("bench: memory: -features %q: want xattr, acl or snapshot", opts.Features)
	}
	feat := opts.Features
	if feat == "snapshot" {
		feat = ""
	}
	if !memoryLayouts[opts.Layout] {
		return fmt.Errorf("%w: memory: -layout %q: want files, blocks or dirs", ErrBadOptions, opts.Layout)
	}
	repl := opts.Replication
	if repl == 0 {
		repl = DefaultReplication
	}
	before := heapInUse()
	start := time.Now()
	var (
		tr  *namespace.Tree
		bm  *blockmgmt.Manager
		err error
	)
	switch opts.Layout {
	case "dirs":
		tr, err = buildDirs(opts.User, gen, start.UnixMilli())
	case "blocks":
		tr = namespace.New(namespace.DefaultConfig(opts.User))
		mkdirs := mkdirsFunc(tr, opts.User, start.UnixMilli())
		for d := 0; d < gen.numDirs() && err == nil; d++ {
			err = mkdirs(gen.dir(d))
		}
		if err == nil {
			bm, err = addBlocks(tr, gen, opts.User, repl, start)
		}
	default:
		tr, err = buildTree(opts.User, gen, start.UnixMilli(), feat)
	}
	if err != nil {
		return fmt.Errorf("bench: memory: %w", err)
	}
	build := time.Since(start)
	after := heapInUse()
	if opts.MemProfile != nil {
		if err := pprof.WriteHeapProfile(opts.MemProfile); err != nil {
			return fmt.Errorf("bench: memory: heap profile: %w", err)
		}
	}
	files, dirs := tr.NumFiles(), tr.NumDirs()
	runtime.KeepAlive(tr)
	runtime.KeepAlive(bm)
	used := float64(after) - float64(before)

	fmt.Fprintf(out, "\n--- %s inputs ---\nnrFiles = %d\nnrFilesPerDir = %d\n", OpMemory, opts.Files, opts.FilesPerDir)
	switch opts.Layout {
	case "blocks":
		fmt.Fprintf(out, "layout = blocks (one block per file, %d replicas reported by %d DataNodes)\n", repl, repl)
	case "dirs":
		fmt.Fprintf(out, "layout = dirs (empty directories)\n")
	}
	if opts.Features != "" {
		fmt.Fprintf(out, "features = %s (inodes with features: %d, distinct ACLs: %d)\n", opts.Features, tr.NumWithFeatures(), tr.NumACLs())
	}
	fmt.Fprintf(out, "--- %s stats ---\n", OpMemory)
	fmt.Fprintf(out, "# files: %d\n# directories: %d\n", files, dirs)
	if bm != nil {
		fmt.Fprintf(out, "# blocks: %d\n", bm.NumBlocks())
	}
	fmt.Fprintf(out, "Build Time: %d ms (ops applied to the namespace, no RPC, no log)\n", build.Milliseconds())
	fmt.Fprintf(out, "Heap in use by the namespace: %.1f MB\n", used/1e6)
	if opts.Layout == "dirs" {
		fmt.Fprintf(out, "Bytes per directory: %.1f (heap / directories)\n", used/float64(dirs))
	} else {
		fmt.Fprintf(out, "Bytes per file: %.1f (heap / files, directories included)\n", used/float64(files))
	}
	fmt.Fprintf(out, "Bytes per inode: %.1f\n", used/float64(files+dirs))
	if opts.Features == "snapshot" {
		return snapshotCosts(tr, opts, gen, after, out)
	}
	return nil
}

// snapshotCosts takes snapshots of the directory holding every file and
// reports their time and memory: creating one (against applying one
// mkdir, measured alike), then the memory that changing and deleting
// files after it costs, per file.
func snapshotCosts(tr *namespace.Tree, opts Options, gen names, heap uint64, out io.Writer) error {
	c := namespace.Caller{User: opts.User}
	root := BaseDir + "/" + OpMemory
	apply := func(ops []op.Op, err error) error {
		if err != nil {
			return err
		}
		for _, o := range ops {
			if err := tr.Apply(o); err != nil {
				return err
			}
		}
		return nil
	}
	now := time.Now().UnixMilli()
	if err := apply(tr.PlanAllowSnapshot(c, root)); err != nil {
		return fmt.Errorf("bench: memory: %w", err)
	}
	// Each snapshot is planned and applied as the NameNode does; the
	// fastest of k is reported, as for the mkdir beside it.
	const k = 20
	var snap, mkdir time.Duration
	for i := 0; i < k; i++ {
		t0 := time.Now()
		_, ops, err := tr.PlanCreateSnapshot(c, root, fmt.Sprint("s", i), 0, now+int64(i))
		if err := apply(ops, err); err != nil {
			return fmt.Errorf("bench: memory: snapshot: %w", err)
		}
		if d := time.Since(t0); i == 0 || d < snap {
			snap = d
		}
		t0 = time.Now()
		if err := apply(tr.PlanMkdirs(c, fmt.Sprintf("%s/mkdir-%d", root, i), 0o755, false, now)); err != nil {
			return fmt.Errorf("bench: memory: mkdir: %w", err)
		}
		if d := time.Since(t0); i == 0 || d < mkdir {
			mkdir = d
		}
	}
	afterSnaps := heapInUse()
	v0 := tr.NumSnapshotVersions()
	// Change every 100th file (its permission), then delete every 100th
	// other file: each change saves one version of the file, and of its
	// directory for the delete.
	changed, deleted := 0, 0
	for i := 0; i < gen.n; i += 100 {
		if err := apply(tr.PlanSetPermission(c, gen.path(i), 0o600)); err != nil {
			return fmt.Errorf("bench: memory: chmod: %w", err)
		}
		changed++
	}
	afterChange := heapInUse()
	v1 := tr.NumSnapshotVersions()
	for i := 50; i < gen.n; i += 100 {
		_, ops, err := tr.PlanDelete(c, gen.path(i), false, now)
		if err := apply(ops, err); err != nil {
			return fmt.Errorf("bench: memory: delete: %w", err)
		}
		deleted++
	}
	afterDelete := heapInUse()
	v2 := tr.NumSnapshotVersions()
	runtime.KeepAlive(tr)
	fmt.Fprintf(out, "--- snapshots of %s (%d files below) ---\n", root, gen.n)
	fmt.Fprintf(out, "Create snapshot: %.1f us (fastest of %d; plan + apply)\n", float64(snap.Nanoseconds())/1e3, k)
	fmt.Fprintf(out, "Mkdir, measured alike: %.1f us; snapshot / mkdir = %.2f\n", float64(mkdir.Nanoseconds())/1e3, float64(snap)/float64(mkdir))
	fmt.Fprintf(out, "Heap of %d snapshots (and %d mkdirs) of an unchanged tree: %.0f bytes (%d inode versions saved)\n", k, k,
		float64(afterSnaps)-float64(heap), v0)
	fmt.Fprintf(out, "Chmod of %d files after the snapshots: %.1f bytes per file (%d versions saved)\n", changed,
		(float64(afterChange)-float64(afterSnaps))/float64(changed), v1-v0)
	fmt.Fprintf(out, "Delete of %d files after the snapshots: %.1f bytes per file, kept for the snapshots (%d versions saved)\n", deleted,
		(float64(afterDelete)-float64(afterChange))/float64(deleted), v2-v1)
	return nil
}

// mkdirsFunc returns a function that applies the OP_MKDIRs creating a
// directory and its missing parents, remembering what it made.
func mkdirsFunc(tr *namespace.Tree, user string, now int64) func(p string) error {
	dperm := op.Perm{User: user, Group: "supergroup", Mode: 0o755}
	made := map[string]bool{"/": true}
	var mkdirs func(p string) error
	mkdirs = func(p string) error {
		if made[p] {
			return nil
		}
		if err := mkdirs(path.Dir(p)); err != nil {
			return err
		}
		made[p] = true
		return tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: p, Mtime: now, Perm: dperm})
	}
	return mkdirs
}
