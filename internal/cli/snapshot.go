package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

const lsSnapshottableDirUsage = `Usage: hdfs lsSnapshottableDir
	Get the list of snapshottable directories that are owned by the current user.
	Return all the snapshottable directories if the current user is a super user.
`

// runLsSnapshottableDir is `hdfs lsSnapshottableDir`, printing Hadoop's
// SnapshottableDirectoryStatus lines.
func runLsSnapshottableDir(inv *Invocation) int {
	if len(inv.Args) != 0 {
		fmt.Fprint(inv.Env.Stderr, lsSnapshottableDirUsage)
		return exitFail
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "lsSnapshottableDir: %v\n", err)
		return exitFail
	}
	defer c.Close()
	var resp hdfs.GetSnapshottableDirListingResponseProto
	if err := c.Call(context.Background(), "getSnapshottableDirListing", &hdfs.GetSnapshottableDirListingRequestProto{}, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "lsSnapshottableDir: %s\n", errMessage(err))
		return exitFail
	}
	dirs := resp.GetSnapshottableDirList().GetSnapshottableDirListing()
	if len(dirs) == 0 {
		return exitOK
	}
	width := func(f func(d *hdfs.SnapshottableDirectoryStatusProto) string) int {
		w := 0
		for _, d := range dirs {
			w = max(w, len(f(d)))
		}
		return w
	}
	repl := func(d *hdfs.SnapshottableDirectoryStatusProto) string {
		return strconv.Itoa(int(d.GetDirStatus().GetBlockReplication()))
	}
	owner := func(d *hdfs.SnapshottableDirectoryStatusProto) string { return d.GetDirStatus().GetOwner() }
	group := func(d *hdfs.SnapshottableDirectoryStatusProto) string { return d.GetDirStatus().GetGroup() }
	length := func(d *hdfs.SnapshottableDirectoryStatusProto) string {
		return strconv.FormatUint(d.GetDirStatus().GetLength(), 10)
	}
	num := func(d *hdfs.SnapshottableDirectoryStatusProto) string {
		return strconv.Itoa(int(d.GetSnapshotNumber()))
	}
	quota := func(d *hdfs.SnapshottableDirectoryStatusProto) string { return strconv.Itoa(int(d.GetSnapshotQuota())) }
	wr, wo, wg, wl, wn, wq := width(repl), width(owner), width(group), width(length), width(num), width(quota)
	for _, d := range dirs {
		st := d.GetDirStatus()
		full := string(d.GetParentFullpath())
		switch {
		case full == "" && len(st.GetPath()) == 0:
			full = "/"
		case full == "/":
			full += string(st.GetPath())
		default:
			full += "/" + string(st.GetPath())
		}
		mtime := time.UnixMilli(int64(st.GetModificationTime())).Format("2006-01-02 15:04")
		fmt.Fprintf(inv.Env.Stdout, "d%s %*s %-*s %-*s %*s %s %*s %*s %s\n", permissionString(uint16(st.GetPermission().GetPerm())),
			wr, repl(d), wo, owner(d), wg, group(d), wl, length(d), mtime, wn, num(d), wq, quota(d), full)
	}
	return exitOK
}

// permissionString renders rwxr-xr-x with the sticky bit as t or T.
func permissionString(p uint16) string {
	b := []byte("rwxrwxrwx")
	for i := range b {
		if p&(1<<(8-i)) == 0 {
			b[i] = '-'
		}
	}
	if p&0o1000 != 0 {
		if b[8] == 'x' {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

const lsSnapshotUsage = `Usage: hdfs lsSnapshot <snapshotDir>
	Get the list of snapshots for a snapshottable directory.
`

// runLsSnapshot is `hdfs lsSnapshot DIR`, printing Hadoop's SnapshotStatus
// lines (creation order).
func runLsSnapshot(inv *Invocation) int {
	if len(inv.Args) != 1 {
		fmt.Fprint(inv.Env.Stderr, lsSnapshotUsage)
		return exitFail
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "lsSnapshot: %v\n", err)
		return exitFail
	}
	defer c.Close()
	var resp hdfs.GetSnapshotListingResponseProto
	if err := c.Call(context.Background(), "getSnapshotListing", &hdfs.GetSnapshotListingRequestProto{SnapshotRoot: proto.String(inv.Args[0])}, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "lsSnapshot: %s\n", errMessage(err))
		return exitFail
	}
	snaps := resp.GetSnapshotList().GetSnapshotListing()
	if len(snaps) == 0 {
		fmt.Fprintln(inv.Env.Stdout)
		return exitOK
	}
	width := func(f func(s *hdfs.SnapshotStatusProto) string) int {
		w := 0
		for _, s := range snaps {
			w = max(w, len(f(s)))
		}
		return w
	}
	repl := func(s *hdfs.SnapshotStatusProto) string {
		return strconv.Itoa(int(s.GetDirStatus().GetBlockReplication()))
	}
	owner := func(s *hdfs.SnapshotStatusProto) string { return s.GetDirStatus().GetOwner() }
	group := func(s *hdfs.SnapshotStatusProto) string { return s.GetDirStatus().GetGroup() }
	length := func(s *hdfs.SnapshotStatusProto) string { return strconv.FormatUint(s.GetDirStatus().GetLength(), 10) }
	id := func(s *hdfs.SnapshotStatusProto) string { return strconv.Itoa(int(s.GetSnapshotID())) }
	wr, wo, wg, wl, wi := width(repl), width(owner), width(group), width(length), width(id)
	for _, s := range snaps {
		st := s.GetDirStatus()
		status := "ACTIVE"
		if s.GetIsDeleted() {
			status = "DELETED"
		}
		parent := string(s.GetParentFullpath())
		if parent == "" {
			parent = "/"
		}
		if !strings.HasSuffix(parent, "/") {
			parent += "/"
		}
		mtime := time.UnixMilli(int64(st.GetModificationTime())).Format("2006-01-02 15:04")
		fmt.Fprintf(inv.Env.Stdout, "d%s %*s %-*s %-*s %*s %s %*s %s %s\n", permissionString(uint16(st.GetPermission().GetPerm())),
			wr, repl(s), wo, owner(s), wg, group(s), wl, length(s), mtime, wi, id(s), status, parent+".snapshot/"+string(st.GetPath()))
	}
	return exitOK
}

const snapshotDiffUsage = `Usage: hdfs snapshotDiff <snapshotDir> <from> <to>:
	Get the difference between two snapshots,
	or between a snapshot and the current tree of a directory.
	For <from>/<to>, users can use "." to present the current status,
	and use ".snapshot/snapshot_name" to present a snapshot,
	where ".snapshot/" can be omitted
`

// snapshotName turns a snapshotDiff argument into the name the NameNode
// takes: "" for the current tree ("." or empty), else the name without a
// leading ".snapshot/".
func snapshotName(s string) string {
	if s == "" || s == "." {
		return ""
	}
	return strings.TrimPrefix(s, ".snapshot/")
}

// runSnapshotDiff is `hdfs snapshotDiff DIR FROM TO`, printing Hadoop's
// SnapshotDiffReport.
func runSnapshotDiff(inv *Invocation) int {
	if len(inv.Args) != 3 {
		fmt.Fprint(inv.Env.Stderr, snapshotDiffUsage)
		return exitFail
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "snapshotDiff: %v\n", err)
		return exitFail
	}
	defer c.Close()
	from, to := snapshotName(inv.Args[1]), snapshotName(inv.Args[2])
	var resp hdfs.GetSnapshotDiffReportResponseProto
	req := &hdfs.GetSnapshotDiffReportRequestProto{SnapshotRoot: proto.String(inv.Args[0]), FromSnapshot: proto.String(from), ToSnapshot: proto.String(to)}
	if err := c.Call(context.Background(), "getSnapshotDiffReport", req, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "snapshotDiff: %s\n", errMessage(err))
		return exitFail
	}
	r := resp.GetDiffReport()
	side := func(name string) string {
		if name == "" {
			return "current directory"
		}
		return "snapshot " + name
	}
	fmt.Fprintf(inv.Env.Stdout, "Difference between %s and %s under directory %s:\n", side(r.GetFromSnapshot()), side(r.GetToSnapshot()), r.GetSnapshotRoot())
	rel := func(p []byte) string {
		if len(p) == 0 {
			return "."
		}
		return "./" + string(p)
	}
	for _, e := range r.GetDiffReportEntries() {
		line := e.GetModificationLabel() + "\t" + rel(e.GetFullpath())
		if e.GetModificationLabel() == "R" {
			line += " -> " + rel(e.GetTargetPath())
		}
		fmt.Fprintln(inv.Env.Stdout, line)
	}
	return exitOK
}
