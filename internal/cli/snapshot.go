package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

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
