package namenode_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// TestSnapshotDiffReportListingRPC: getSnapshotDiffReportListing over RPC,
// one entry a reply (dfs.namenode.snapshotdiff.listing.limit=1), followed
// by its cursor to the end; and getQuotaUsage counting a directory the
// snapshot keeps after its delete.
func TestSnapshotDiffReportListingRPC(t *testing.T) {
	nn := nntest.New(t, conf.KeyValue{Key: conf.DFSNameNodeSnapshotDiffListingLimit, Value: "1"})
	c := rpcClient(t, nn.Addr, nn.SuperUser(), namenode.ClientProtocolName)
	mkdir := func(p string) {
		t.Helper()
		if err := call(t, c, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(p), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)},
			CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("/s/a")
	mkdir("/s/b")
	if err := call(t, c, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/s")}, &hdfs.AllowSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "createSnapshot", &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String("/s"), SnapshotName: proto.String("s1")},
		&hdfs.CreateSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	mkdir("/s/n")
	if err := call(t, c, "delete", &hdfs.DeleteRequestProto{Src: proto.String("/s/b"), Recursive: proto.Bool(true)}, &hdfs.DeleteResponseProto{}); err != nil {
		t.Fatal(err)
	}

	var lines []string
	cur := &hdfs.SnapshotDiffReportCursorProto{StartPath: []byte{}, Index: proto.Int32(-1)}
	for page := 0; ; page++ {
		if page == 10 {
			t.Fatalf("no last page after 10: %v", lines)
		}
		resp := &hdfs.GetSnapshotDiffReportListingResponseProto{}
		if err := call(t, c, "getSnapshotDiffReportListing", &hdfs.GetSnapshotDiffReportListingRequestProto{SnapshotRoot: proto.String("/s"),
			FromSnapshot: proto.String("s1"), ToSnapshot: proto.String(""), Cursor: cur}, resp); err != nil {
			t.Fatal(err)
		}
		r := resp.GetDiffReport()
		n := len(r.GetModifiedEntries()) + len(r.GetCreatedEntries()) + len(r.GetDeletedEntries())
		if n > 1 || !r.GetIsFromEarlier() {
			t.Fatalf("page %d: %v", page, r)
		}
		for k, es := range map[string][]*hdfs.SnapshotDiffReportListingEntryProto{"M": r.GetModifiedEntries(), "+": r.GetCreatedEntries(), "-": r.GetDeletedEntries()} {
			for _, e := range es {
				lines = append(lines, fmt.Sprintf("%s %q", k, e.GetFullpath()))
			}
		}
		cur = r.GetCursor()
		if cur.GetIndex() == -1 {
			break
		}
	}
	if got := strings.Join(lines, ", "); got != `M "", + "n", - "b"` {
		t.Fatalf("entries: %s", got)
	}

	// /s, /s/a, /s/n live; /s/b kept by the snapshot.
	u := &hdfs.GetQuotaUsageResponseProto{}
	if err := call(t, c, "getQuotaUsage", &hdfs.GetQuotaUsageRequestProto{Path: proto.String("/s")}, u); err != nil {
		t.Fatal(err)
	}
	if got := u.GetUsage().GetFileAndDirectoryCount(); got != 4 {
		t.Fatalf("getQuotaUsage counts %d names, want 4 (the deleted /s/b kept by s1)", got)
	}
}
