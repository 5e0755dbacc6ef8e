package namenode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/blockmgmt"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// The last line of an fsck report ends with one of these; hdfs fsck picks
// its exit status by them (Hadoop's NamenodeFsck constants).
const (
	fsckHealthy     = "is HEALTHY"
	fsckCorrupt     = "is CORRUPT"
	fsckNonexistent = "does not exist"
	fsckFailed      = "FAILED"
)

// fsckSlice is how many directory entries one hold of the namesystem's
// read lock looks at: a walk of a big tree lets writers in between slices.
const fsckSlice = 100

// fsckMaxCorruptFiles bounds one -list-corruptfileblocks answer
// (dfs.corruptfilesreturned.max's default).
const fsckMaxCorruptFiles = 500

// lostFound is where fsck -move puts corrupt files.
const lostFound = "/lost+found"

// fsckOptions are the /fsck query parameters, named as Hadoop's DFSck
// sends them.
type fsckOptions struct {
	path                                     string
	user                                     string
	files, blocks, locations, racks, details bool
	openForWrite, listCorrupt, move, delete  bool
	includeSnapshots, storagePolicies        bool
	blockIDs                                 string
	startAfter                               int
}

func parseFsckOptions(r *http.Request) (fsckOptions, error) {
	q := r.URL.Query()
	o := fsckOptions{path: "/", user: q.Get("ugi")}
	if p := q.Get("path"); p != "" {
		o.path = p
	}
	if !strings.HasPrefix(o.path, "/") {
		return o, fmt.Errorf("path %q is not absolute", o.path)
	}
	has := func(k string) bool { return q.Has(k) }
	o.files, o.blocks, o.locations = has("files"), has("blocks"), has("locations")
	o.racks, o.details, o.openForWrite = has("racks"), has("replicadetails"), has("openforwrite")
	o.listCorrupt, o.move, o.delete = has("listcorruptfileblocks"), has("move"), has("delete")
	o.includeSnapshots, o.storagePolicies = has("includeSnapshots"), has("storagepolicies")
	o.blockIDs = q.Get("blockId")
	if s := q.Get("startblockafter"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return o, fmt.Errorf("startblockafter %q is not a cookie this NameNode gave", s)
		}
		o.startAfter = n
	}
	return o, nil
}

// fsckResult is Hadoop's fsck Result for replicated blocks.
type fsckResult struct {
	missingIDs                                 []string
	missingSize, corruptFiles                  int64
	corruptBlocks, corruptSize                 int64
	excessiveReplicas, missingReplicas         int64
	decommissioned, decommissioning            int64
	enteringMaint, inMaint                     int64
	underMinRepl, overRepl, underRepl, misRepl int64
	minRepl, totalBlocks, expectedReplicas     int64
	openFilesBlocks, totalFiles, openFiles     int64
	totalSize, openFilesSize, totalReplicas    int64
	replication, minReplication                int
}

func (r *fsckResult) healthy() bool { return len(r.missingIDs) == 0 && r.corruptBlocks == 0 }

// javaFloat formats a float as Java's Float.toString does (shortest digits,
// always a fraction, E notation outside [1e-3, 1e7)).
func javaFloat(f float32) string {
	a := f
	if a < 0 {
		a = -a
	}
	if a != 0 && (a < 1e-3 || a >= 1e7) {
		s := strconv.FormatFloat(float64(f), 'E', -1, 32)
		mant, exp, _ := strings.Cut(s, "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(float64(f), 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func fsckPct(part, whole int64) string {
	return javaFloat(float32(part*100) / float32(whole))
}

// String is the "Replicated Blocks:" section, line for line as Hadoop's.
func (r *fsckResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, " Total size:\t%d B", r.totalSize)
	if r.openFilesSize != 0 {
		fmt.Fprintf(&b, " (Total open files size: %d B)", r.openFilesSize)
	}
	fmt.Fprintf(&b, "\n Total files:\t%d", r.totalFiles)
	if r.openFiles != 0 {
		fmt.Fprintf(&b, " (Files currently being written: %d)", r.openFiles)
	}
	fmt.Fprintf(&b, "\n Total blocks (validated):\t%d", r.totalBlocks)
	if r.totalBlocks > 0 {
		fmt.Fprintf(&b, " (avg. block size %d B)", r.totalSize/r.totalBlocks)
	}
	if r.openFilesBlocks != 0 {
		fmt.Fprintf(&b, " (Total open file blocks (not validated): %d)", r.openFilesBlocks)
	}
	if r.corruptFiles > 0 || r.underMinRepl > 0 {
		b.WriteString("\n  ********************************")
		if r.underMinRepl > 0 {
			fmt.Fprintf(&b, "\n  UNDER MIN REPL'D BLOCKS:\t%d", r.underMinRepl)
			if r.totalBlocks > 0 {
				fmt.Fprintf(&b, " (%s %%)", fsckPct(r.underMinRepl, r.totalBlocks))
			}
			fmt.Fprintf(&b, "\n  dfs.namenode.replication.min:\t%d", r.minReplication)
		}
		if r.corruptFiles > 0 {
			fmt.Fprintf(&b, "\n  CORRUPT FILES:\t%d", r.corruptFiles)
			if r.missingSize > 0 {
				fmt.Fprintf(&b, "\n  MISSING BLOCKS:\t%d\n  MISSING SIZE:\t\t%d B", len(r.missingIDs), r.missingSize)
			}
			if r.corruptBlocks > 0 {
				fmt.Fprintf(&b, "\n  CORRUPT BLOCKS: \t%d\n  CORRUPT SIZE:\t\t%d B", r.corruptBlocks, r.corruptSize)
			}
		}
		b.WriteString("\n  ********************************")
	}
	line := func(label string, n int64) {
		fmt.Fprintf(&b, "\n %s%d", label, n)
		if r.totalBlocks > 0 {
			fmt.Fprintf(&b, " (%s %%)", fsckPct(n, r.totalBlocks))
		}
	}
	line("Minimally replicated blocks:\t", r.minRepl)
	line("Over-replicated blocks:\t", r.overRepl)
	line("Under-replicated blocks:\t", r.underRepl)
	line("Mis-replicated blocks:\t\t", r.misRepl)
	avg := float32(0)
	if r.totalBlocks > 0 {
		avg = float32(r.totalReplicas) / float32(r.totalBlocks)
	}
	fmt.Fprintf(&b, "\n Default replication factor:\t%d\n Average block replication:\t%s\n Missing blocks:\t\t%d\n Corrupt blocks:\t\t%d\n Missing replicas:\t\t%d",
		r.replication, javaFloat(avg), len(r.missingIDs), r.corruptBlocks, r.missingReplicas)
	if r.totalReplicas > 0 {
		fmt.Fprintf(&b, " (%s %%)", fsckPct(r.missingReplicas, r.expectedReplicas))
	}
	for _, x := range []struct {
		label string
		n     int64
	}{{"DecommissionedReplicas:\t", r.decommissioned}, {"DecommissioningReplicas:\t", r.decommissioning},
		{"EnteringMaintenanceReplicas:\t", r.enteringMaint}, {"InMaintenanceReplicas:\t", r.inMaint}} {
		if x.n > 0 {
			fmt.Fprintf(&b, "\n %s%d", x.label, x.n)
		}
	}
	return b.String()
}

// fsckECSection is the erasure-coded section of the report: hdfsgo has no
// erasure coding, so it is always empty.
const fsckECSection = " Total size:\t0 B\n Total files:\t0\n Total block groups (validated):\t0\n" +
	" Minimally erasure-coded block groups:\t0\n Over-erasure-coded block groups:\t0\n" +
	" Under-erasure-coded block groups:\t0\n Unsatisfactory placement block groups:\t0\n" +
	" Average block group size:\t0.0\n Missing block groups:\t\t0\n Corrupt block groups:\t\t0\n" +
	" Missing internal blocks:\t0"

// fsckEntry is one child met by the walk, read under one lock hold with,
// for a file, its blocks as the block map knows them.
type fsckEntry struct {
	fi     namespace.FileInfo
	path   string
	blocks []blockmgmt.FsckBlock
}

// fsckRun is one fsck request being answered.
type fsckRun struct {
	nn     *NameNode
	opts   fsckOptions
	caller namespace.Caller
	out    *bufio.Writer
	flush  func()
	res    fsckResult
	dirs   int64
	// internalErr: a -move or -delete failed; the report ends FAILED.
	internalErr error
	// corrupt collects "blk_ID\tpath" lines for -list-corruptfileblocks.
	corrupt []string
}

// handleFsck serves GET /fsck as Hadoop's FsckServlet does: a text report
// streamed as the walk goes.
func (nn *NameNode) handleFsck(w http.ResponseWriter, r *http.Request) {
	opts, err := parseFsckOptions(r)
	if err != nil {
		http.Error(w, "fsck: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case nn.haState() == "standby":
		http.Error(w, "Operation category READ is not supported in state standby", http.StatusForbidden)
		return
	case opts.storagePolicies:
		http.Error(w, "fsck: -storagepolicies is not supported yet: this NameNode has no storage policies", http.StatusNotImplemented)
		return
	case opts.user == "":
		http.Error(w, "fsck: the ugi parameter (the user to run as) is missing", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	f := &fsckRun{nn: nn, opts: opts, out: bufio.NewWriterSize(w, 32<<10)}
	f.flush = func() {
		_ = f.out.Flush()
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
	f.caller = namespace.Caller{User: opts.user, Groups: nn.groups.groups(opts.user)}
	f.res.replication = nn.cfg.Replication
	f.res.minReplication = nn.cfg.Blocks.MinReplication
	remote := r.RemoteAddr
	if h, _, err := net.SplitHostPort(remote); err == nil {
		remote = h
	}
	f.run(r.Context(), remote)
	f.flush()
}

func javaNow(t time.Time) string { return t.Format("Mon Jan 02 15:04:05 MST 2006") }

func (f *fsckRun) run(ctx context.Context, remote string) {
	nn := f.nn
	start := nn.deps.Clock.Now()
	out := f.out
	who := f.opts.user + " (auth:SIMPLE)"
	if f.opts.blockIDs != "" {
		fmt.Fprintf(out, "FSCK started by %s from /%s at %s\n", who, remote, javaNow(start))
		for _, id := range strings.Fields(f.opts.blockIDs) {
			if !strings.Contains(id, "blk_") {
				fmt.Fprintf(out, "Incorrect blockId format: %s\n", id)
				continue
			}
			out.WriteString("\n")
			f.blockIDCheck(ctx, id)
		}
		return
	}
	fmt.Fprintf(out, "FSCK started by %s from /%s for path %s at %s\n", who, remote, f.opts.path, javaNow(start))
	var root namespace.FileInfo
	var err error
	nn.ns.read(func(t *namespace.Tree) { root, err = t.Stat(f.caller, f.opts.path) })
	if errors.Is(err, namespace.ErrNotFound) {
		fmt.Fprintf(out, "\n\nPath '%s' %s", f.opts.path, fsckNonexistent)
		return
	}
	if err == nil {
		if f.opts.listCorrupt {
			err = f.check(ctx, f.opts.path, root)
			if err == nil {
				f.printCorrupt()
				return
			}
		} else {
			err = f.check(ctx, f.opts.path, root)
		}
	}
	if err == nil {
		err = f.internalErr
	}
	if err != nil {
		fmt.Fprintf(out, "FSCK ended at %s in %d milliseconds\n", javaNow(nn.deps.Clock.Now()), nn.deps.Clock.Now().Sub(start).Milliseconds())
		fmt.Fprintln(out, remoteMessage(err))
		fmt.Fprintf(out, "\n\nFsck on path '%s' %s", f.opts.path, fsckFailed)
		return
	}
	status := "HEALTHY"
	if !f.res.healthy() {
		status = "CORRUPT"
	}
	var live, racks int
	nn.ns.readLocked(func() {
		live, racks = nn.ns.mu.bm.NumLiveDatanodes(), nn.ns.mu.bm.NumRacks()
	})
	fmt.Fprintf(out, "\nStatus: %s\n", status)
	fmt.Fprintf(out, " Number of data-nodes:\t%d\n", live)
	fmt.Fprintf(out, " Number of racks:\t\t%d\n", racks)
	fmt.Fprintf(out, " Total dirs:\t\t\t%d\n", f.dirs)
	fmt.Fprintf(out, " Total symlinks:\t\t0\n")
	fmt.Fprintf(out, "\nReplicated Blocks:\n%s\n", f.res.String())
	fmt.Fprintf(out, "\nErasure Coded Block Groups:\n%s\n", fsckECSection)
	end := nn.deps.Clock.Now()
	fmt.Fprintf(out, "FSCK ended at %s in %d milliseconds\n", javaNow(end), end.Sub(start).Milliseconds())
	if f.res.healthy() {
		fmt.Fprintf(out, "\n\nThe filesystem under path '%s' %s", f.opts.path, fsckHealthy)
	} else {
		fmt.Fprintf(out, "\n\nThe filesystem under path '%s' %s", f.opts.path, fsckCorrupt)
	}
}

// remoteMessage is an error's text as a Hadoop tool prints it: the
// message without our package prefixes.
func remoteMessage(err error) string {
	return toRemote(err).Error()
}

// check walks the inode fi at p, checking every file.
func (f *fsckRun) check(ctx context.Context, p string, fi namespace.FileInfo) error {
	_, err := f.walk(ctx, p, fi, func(e fsckEntry) bool {
		if e.fi.IsDir {
			if f.opts.files && !f.opts.listCorrupt {
				fmt.Fprintf(f.out, "%s <dir>\n", e.path)
			}
			f.dirs++
			return true
		}
		f.checkFile(ctx, e)
		return true
	})
	return err
}

// walk calls visit for the inode fi at p and, for a directory, for
// everything below it, depth first in name order, until visit returns
// false (then stopped is true). A directory is read in slices of
// fsckSlice entries, each under one hold of the read lock, so a walk of
// a big tree lets writers in between slices; a file is read with its
// blocks in the same hold.
func (f *fsckRun) walk(ctx context.Context, p string, fi namespace.FileInfo, visit func(fsckEntry) bool) (stopped bool, err error) {
	if !fi.IsDir {
		var e fsckEntry
		var ok bool
		f.nn.ns.readLocked(func() { e, ok = f.readFileLocked(p) })
		if ok && !visit(e) {
			return true, nil
		}
		return false, nil
	}
	if !visit(fsckEntry{fi: fi, path: p}) {
		return true, nil
	}
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		var entries []fsckEntry
		var remaining int
		var err error
		f.nn.ns.readLocked(func() {
			var list []namespace.FileInfo
			list, remaining, err = f.nn.ns.mu.tree.List(f.caller, p, after, fsckSlice)
			if err != nil {
				return
			}
			for _, c := range list {
				cp := path.Join(p, string(c.Name))
				if c.IsDir {
					entries = append(entries, fsckEntry{fi: c, path: cp})
					continue
				}
				if e, ok := f.readFileLocked(cp); ok {
					entries = append(entries, e)
				}
			}
		})
		if errors.Is(err, namespace.ErrNotFound) {
			return false, nil // deleted while the walk went on
		}
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			if e.fi.IsDir {
				if stop, err := f.walk(ctx, e.path, e.fi, visit); stop || err != nil {
					return stop, err
				}
				continue
			}
			if !visit(e) {
				return true, nil
			}
		}
		if len(entries) > 0 {
			after = []byte(path.Base(entries[len(entries)-1].path))
		}
		if remaining == 0 || len(entries) == 0 {
			return f.walkSnapshots(ctx, p, fi, visit)
		}
		f.flush()
	}
}

// walkSnapshots walks DIR/.snapshot after a snapshottable directory's
// children when fsck runs with -includeSnapshots, as Hadoop's fsck does.
func (f *fsckRun) walkSnapshots(ctx context.Context, p string, fi namespace.FileInfo, visit func(fsckEntry) bool) (bool, error) {
	if !f.opts.includeSnapshots || !fi.Snapshottable {
		return false, nil
	}
	sp := path.Join(p, ".snapshot")
	var dot namespace.FileInfo
	var err error
	f.nn.ns.read(func(t *namespace.Tree) { dot, err = t.Stat(f.caller, sp) })
	if err != nil {
		return false, nil
	}
	return f.walk(ctx, sp, dot, visit)
}

// readFileLocked reads the file at p and its blocks; the caller holds the
// read lock.
func (f *fsckRun) readFileLocked(p string) (fsckEntry, bool) {
	fi, blocks, ok := f.nn.ns.mu.tree.File(p)
	if !ok && strings.Contains(p, "/.snapshot/") {
		var err error
		fi, blocks, err = f.nn.ns.mu.tree.FileBlocks(f.caller, p)
		ok = err == nil
	}
	if !ok {
		return fsckEntry{}, false
	}
	now := f.nn.deps.Clock.Now()
	e := fsckEntry{fi: fi, path: p, blocks: make([]blockmgmt.FsckBlock, 0, len(blocks))}
	for _, b := range blocks {
		fb, ok := f.nn.ns.mu.bm.Fsck(b.ID, now)
		if !ok {
			fb = blockmgmt.FsckBlock{Block: blockmgmt.Block(b), Replication: int(fi.Replication)}
		}
		e.blocks = append(e.blocks, fb)
	}
	return e, true
}

func (f *fsckRun) blockName(b blockmgmt.FsckBlock) string {
	return fmt.Sprintf("%s:blk_%d_%d", f.nn.BlockPoolID(), b.ID, b.GenStamp)
}

// checkFile adds one file to the result and prints its lines, as Hadoop's
// collectFileSummary and collectBlocksSummary do.
func (f *fsckRun) checkFile(ctx context.Context, e fsckEntry) {
	out, res, opts := f.out, &f.res, f.opts
	fi := e.fi
	isOpen := fi.UnderConstruction
	if opts.listCorrupt {
		for _, b := range e.blocks {
			if b.State == blockmgmt.Complete && b.Live+b.Decommissioned+b.Decommissioning+b.EnteringMaint+b.InMaint == 0 {
				f.corrupt = append(f.corrupt, fmt.Sprintf("blk_%d\t%s", b.ID, e.path))
			}
		}
		return
	}
	if isOpen && !opts.openForWrite {
		res.openFilesSize += fi.Length
		res.openFilesBlocks += int64(len(e.blocks))
		res.openFiles++
		return
	}
	res.totalFiles++
	res.totalSize += fi.Length
	res.totalBlocks += int64(len(e.blocks))
	switch {
	case opts.openForWrite && isOpen:
		fmt.Fprintf(out, "%s %d bytes, replicated: replication=%d, %d block(s), OPENFORWRITE: ", e.path, fi.Length, fi.Replication, len(e.blocks))
	case opts.files:
		fmt.Fprintf(out, "%s %d bytes, replicated: replication=%d, %d block(s): ", e.path, fi.Length, fi.Replication, len(e.blocks))
	}
	var missing, corrupt, underPerFile, misPerFile int
	var missize, corruptSize int64
	var report strings.Builder
	target := int(fi.Replication)
	for i, b := range e.blocks {
		res.decommissioned += int64(b.Decommissioned)
		res.decommissioning += int64(b.Decommissioning)
		res.enteringMaint += int64(b.EnteringMaint)
		res.inMaint += int64(b.InMaint)
		total := b.Live + b.Decommissioned + b.Decommissioning + b.EnteringMaint + b.InMaint
		res.totalReplicas += int64(total)
		res.expectedReplicas += int64(target)
		if total < res.minReplication {
			res.underMinRepl++
		}
		if b.Live > target {
			res.excessiveReplicas += int64(b.Live - target)
			res.overRepl++
		}
		name := f.blockName(b)
		isCorrupt := b.AllCorrupt && total == 0
		if isCorrupt {
			res.corruptBlocks++
			res.corruptSize += b.NumBytes
			corrupt++
			corruptSize += b.NumBytes
			fmt.Fprintf(out, "\n%s: CORRUPT blockpool %s block blk_%d\n", e.path, f.nn.BlockPoolID(), b.ID)
		}
		if total >= res.minReplication {
			res.minRepl++
		}
		if total < target && total > 0 {
			res.missingReplicas += int64(target - total)
			res.underRepl++
			underPerFile++
			if !opts.files {
				fmt.Fprintf(out, "\n%s: ", e.path)
			}
			fmt.Fprintf(out, " Under replicated %s. Target Replicas is %d but found %d live replica(s), %d decommissioned replica(s), %d decommissioning replica(s).\n",
				name, target, b.Live, b.Decommissioned, b.Decommissioning)
		}
		if b.OneRack && total > 0 {
			res.misRepl++
			misPerFile++
			if !opts.files {
				if underPerFile == 0 {
					fmt.Fprintln(out)
				}
				fmt.Fprintf(out, "%s: ", e.path)
			}
			fmt.Fprintf(out, " Replica placement policy is violated for %s. Block should be additionally replicated on 1 more rack(s). Total number of racks in the cluster: %d\n", name, f.numRacks())
		}
		fmt.Fprintf(&report, "%d. %s len=%d", i, name, b.NumBytes)
		if total == 0 && !isCorrupt && b.State == blockmgmt.Complete {
			report.WriteString(" MISSING!")
			res.missingIDs = append(res.missingIDs, name)
			res.missingSize += b.NumBytes
			missing++
			missize += b.NumBytes
		} else {
			fmt.Fprintf(&report, " Live_repl=%d", b.Live)
			if opts.locations || opts.racks || opts.details {
				report.WriteString("  [") // two spaces, as Hadoop prints
				for j, r := range b.Replicas {
					if j > 0 {
						report.WriteString(", ")
					}
					if opts.racks {
						report.WriteString(r.Rack + "/" + r.Node.XferAddr())
					} else {
						fmt.Fprintf(&report, "DatanodeInfoWithStorage[%s,%s,%s]", r.Node.XferAddr(), r.StorageID, storageTypeName(r.StorageType))
					}
					if opts.details {
						report.WriteString("(" + r.State + ")")
					}
				}
				report.WriteString("]")
			}
		}
		report.WriteString("\n")
	}
	if missing > 0 || corrupt > 0 {
		if !opts.files {
			if missing > 0 {
				fmt.Fprintf(out, "\n%s: MISSING %d blocks of total size %d B.", e.path, missing, missize)
			}
			if corrupt > 0 {
				fmt.Fprintf(out, "\n%s: CORRUPT %d blocks of total size %d B.", e.path, corrupt, corruptSize)
			}
		}
		res.corruptFiles++
		if !isOpen {
			switch {
			case opts.move:
				f.moveToLostFound(ctx, e.path, fi)
			case opts.delete:
				f.deleteCorrupt(ctx, e.path)
			}
		}
	}
	if opts.files {
		switch {
		case missing > 0 || corrupt > 0:
			if missing > 0 {
				fmt.Fprintf(out, " MISSING %d blocks of total size %d B\n", missing, missize)
			}
			if corrupt > 0 {
				fmt.Fprintf(out, " CORRUPT %d blocks of total size %d B\n", corrupt, corruptSize)
			}
		case underPerFile == 0 && misPerFile == 0:
			out.WriteString(" OK\n")
		}
		if opts.blocks {
			out.WriteString(report.String() + "\n")
		}
	}
}

func (f *fsckRun) numRacks() int {
	var n int
	f.nn.ns.readLocked(func() { n = f.nn.ns.mu.bm.NumRacks() })
	return n
}

// storageTypeName names a StorageTypeProto value as Hadoop's StorageType.
func storageTypeName(t int32) string {
	switch t {
	case 2:
		return "SSD"
	case 3:
		return "ARCHIVE"
	case 4:
		return "RAM_DISK"
	case 5:
		return "PROVIDED"
	case 6:
		return "NVDIMM"
	}
	return "DISK"
}

// moveToLostFound moves a corrupt file, whole, to /lost+found with its
// full path below it (creating the directories), through the one apply
// path. Hadoop copies the readable block chains instead; here the file
// keeps every block, the missing ones included.
func (f *fsckRun) moveToLostFound(ctx context.Context, p string, fi namespace.FileInfo) {
	target := lostFound + p
	mkdirs := namespacePlan(func(t *namespace.Tree, now int64) ([]op.Op, error) {
		if lf, err := t.Stat(f.caller, lostFound); err == nil && !lf.IsDir {
			return nil, fmt.Errorf("cannot use %s: a regular file with this name exists", lostFound)
		}
		if _, err := t.Stat(f.caller, target); err == nil {
			return nil, fmt.Errorf("cannot move %s to %s: %s already exists", p, lostFound, target)
		}
		if _, err := t.Stat(f.caller, path.Dir(target)); err == nil {
			return nil, nil
		}
		return t.PlanMkdirs(f.caller, path.Dir(target), 0o755, true, now)
	})
	rename := namespacePlan(func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanRename2(f.caller, p, target, false, now)
	})
	err := f.nn.ns.mutateBlocks(ctx, mkdirs, rename)
	if err != nil {
		f.nn.deps.Logger.Error("fsck: cannot move a corrupt file to "+lostFound, "path", p, "err", err)
		f.internalErr = fmt.Errorf("fsck encountered internal errors! moving %s to %s: %s", p, lostFound, remoteMessage(err))
		return
	}
	f.nn.deps.Logger.Info("fsck: moved corrupt file to "+lostFound, "path", p, "target", target)
}

// deleteCorrupt deletes a corrupt file through the one apply path.
func (f *fsckRun) deleteCorrupt(ctx context.Context, p string) {
	err := f.nn.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		_, ops, err := t.PlanDelete(f.caller, p, true, now)
		return ops, err
	})
	if err != nil {
		f.nn.deps.Logger.Error("fsck: cannot delete a corrupt file", "path", p, "err", err)
		f.internalErr = fmt.Errorf("fsck encountered internal errors! deleting %s: %s", p, remoteMessage(err))
		return
	}
	f.nn.deps.Logger.Info("fsck: deleted corrupt file", "path", p)
}

// printCorrupt answers -list-corruptfileblocks: one page of the blocks
// without a usable replica under the path, after the cookie.
func (f *fsckRun) printCorrupt() {
	all := f.corrupt
	from := min(f.opts.startAfter, len(all))
	page := all[from:min(len(all), from+fsckMaxCorruptFiles)]
	filler := strconv.Itoa(len(page))
	switch {
	case len(page) > 0:
	case f.opts.startAfter == 0:
		filler = "no"
	default:
		filler = "no more"
	}
	fmt.Fprintf(f.out, "Cookie:\t%d\n", from+len(page))
	for _, l := range page {
		fmt.Fprintln(f.out, l)
	}
	fmt.Fprintf(f.out, "\n\nThe filesystem under path '%s' has %s CORRUPT files\n\n", f.opts.path, filler)
}

// blockIDCheck answers -blockId for one block name (blk_ID or blk_ID_GS).
func (f *fsckRun) blockIDCheck(ctx context.Context, name string) {
	out := f.out
	digits := strings.TrimPrefix(name[strings.Index(name, "blk_"):], "blk_")
	if i := strings.IndexByte(digits, '_'); i >= 0 {
		digits = digits[:i]
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		fmt.Fprintf(out, "Incorrect blockId format: %s\n", name)
		return
	}
	var fb blockmgmt.FsckBlock
	var ok bool
	var fileID int64
	f.nn.ns.readLocked(func() {
		fb, ok = f.nn.ns.mu.bm.Fsck(id, f.nn.deps.Clock.Now())
		if bi, found := f.nn.ns.mu.bm.BlockInfo(id); found {
			fileID = bi.FileID
		}
	})
	if !ok {
		fmt.Fprintf(out, "Block %s %s\n", name, fsckNonexistent)
		return
	}
	owner := f.ownerOf(ctx, fileID)
	fmt.Fprintf(out, "Block Id: %s\n", name)
	fmt.Fprintf(out, "Block belongs to: %s\n", owner)
	fmt.Fprintf(out, "No. of Expected Replica: %d\n", fb.Replication)
	fmt.Fprintf(out, "No. of live Replica: %d\n", fb.Live)
	fmt.Fprintf(out, "No. of excess Replica: 0\n")
	fmt.Fprintf(out, "No. of stale Replica: %d\n", fb.Stale)
	fmt.Fprintf(out, "No. of decommissioned Replica: %d\n", fb.Decommissioned)
	fmt.Fprintf(out, "No. of decommissioning Replica: %d\n", fb.Decommissioning)
	fmt.Fprintf(out, "No. of corrupted Replica: %d\n", fb.Corrupt)
	reps := slices.Clone(fb.Replicas)
	for _, r := range reps {
		host := r.Node.Hostname
		if host == "" {
			host = r.Node.IPAddr
		}
		fmt.Fprintf(out, "Block replica on datanode/rack: %s%s ", host, r.Rack)
		switch r.State {
		case "CORRUPT":
			fmt.Fprintf(out, "%s\t ReasonCode: CORRUPTION_REPORTED", fsckCorrupt)
		case "DECOMMISSIONED":
			out.WriteString("is DECOMMISSIONED")
		case "DECOMMISSIONING":
			out.WriteString("is DECOMMISSIONING")
		default:
			out.WriteString(fsckHealthy)
		}
		out.WriteString("\n")
	}
}

// ownerOf finds the path of file fileID: the namespace indexes only open
// files by id, so a closed one is looked for with a sliced walk from /.
func (f *fsckRun) ownerOf(ctx context.Context, fileID int64) string {
	var owner string
	var root namespace.FileInfo
	var err error
	f.nn.ns.readLocked(func() {
		if p, _, ok := f.nn.ns.mu.tree.FileByID(uint64(fileID)); ok {
			owner = p
		}
		root, err = f.nn.ns.mu.tree.Stat(f.caller, "/")
	})
	if owner != "" || err != nil {
		return owner
	}
	_, _ = f.walk(ctx, "/", root, func(e fsckEntry) bool {
		if !e.fi.IsDir && int64(e.fi.ID) == fileID {
			owner = e.path
			return false
		}
		return true
	})
	return owner
}
