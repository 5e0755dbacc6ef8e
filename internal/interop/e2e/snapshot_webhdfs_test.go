package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

// listingEntry is one entry of a SnapshotDiffReportListing's lists.
type listingEntry struct {
	DirID       uint64  `json:"dirId"`
	FileID      uint64  `json:"fileId"`
	IsReference bool    `json:"isReference"`
	SourcePath  string  `json:"sourcePath"`
	TargetPath  *string `json:"targetPath"`
}

// TestWebHDFSSnapshotListingsCurl: curl against a NameNode process:
// GETSNAPSHOTTABLEDIRECTORYLIST (null before any directory allows
// snapshots, as HDFS answers) and GETSNAPSHOTDIFFLISTING (Hadoop's
// oldsnapshotname and snapshotname) paged two entries at a time by
// following lastPath and lastIndex, in Hadoop's JSON shapes; and
// GETSNAPSHOTDIFF with Hadoop's parameters.
func TestWebHDFSSnapshotListingsCurl(t *testing.T) {
	testtool.Require(t, "curl", curlInstall)
	parallel(t)
	port := freePort(t, "127.0.0.1")
	startCluster(t, 1, map[string]string{
		"dfs.namenode.http-address":               fmt.Sprintf("127.0.0.1:%d", port),
		"dfs.namenode.snapshotdiff.listing.limit": "2",
	})
	base := fmt.Sprintf("http://127.0.0.1:%d/webhdfs/v1", port)
	u := "user.name=" + osUser(t) // the NameNode's user: the superuser

	if out := string(curl(t, base+"/?op=GETSNAPSHOTTABLEDIRECTORYLIST&"+u)); out != "{\"SnapshottableDirectoryList\":null}\n" {
		t.Fatalf("GETSNAPSHOTTABLEDIRECTORYLIST with none: %q", out)
	}
	for _, d := range []string{"/s/a", "/s/b", "/s/c"} {
		if out := string(curl(t, "-X", "PUT", base+d+"?op=MKDIRS&"+u)); out != "{\"boolean\":true}\n" {
			t.Fatalf("MKDIRS %s: %q", d, out)
		}
	}
	curl(t, "-X", "PUT", base+"/s?op=ALLOWSNAPSHOT&"+u)
	curl(t, "-X", "PUT", base+"/s?op=CREATESNAPSHOT&snapshotname=s1&"+u)
	curl(t, "-X", "PUT", base+"/s/n?op=MKDIRS&"+u)
	curl(t, "-X", "DELETE", base+"/s/b?op=DELETE&recursive=true&"+u)
	curl(t, "-X", "PUT", base+"/s/c?op=RENAME&destination=/s/a/c2&"+u)

	var list struct {
		SnapshottableDirectoryList []struct {
			DirStatus struct {
				PathSuffix string `json:"pathSuffix"`
				Type       string `json:"type"`
				FileID     uint64 `json:"fileId"`
			} `json:"dirStatus"`
			ParentFullPath string `json:"parentFullPath"`
			SnapshotNumber int    `json:"snapshotNumber"`
			SnapshotQuota  int    `json:"snapshotQuota"`
		}
	}
	out := curl(t, base+"/?op=GETSNAPSHOTTABLEDIRECTORYLIST&"+u)
	if err := json.Unmarshal(out, &list); err != nil || len(list.SnapshottableDirectoryList) != 1 {
		t.Fatalf("GETSNAPSHOTTABLEDIRECTORYLIST: %v %s", err, out)
	}
	if d := list.SnapshottableDirectoryList[0]; d.DirStatus.PathSuffix != "s" || d.DirStatus.Type != "DIRECTORY" || d.ParentFullPath != "/" ||
		d.SnapshotNumber != 1 || d.SnapshotQuota != 65536 {
		t.Fatalf("GETSNAPSHOTTABLEDIRECTORYLIST: %+v", d)
	}
	id := func(p string) uint64 {
		var st struct {
			FileStatus struct {
				FileID uint64 `json:"fileId"`
			}
		}
		if err := json.Unmarshal(curl(t, base+p+"?op=GETFILESTATUS&"+u), &st); err != nil {
			t.Fatal(err)
		}
		return st.FileStatus.FileID
	}
	sID, aID := list.SnapshottableDirectoryList[0].DirStatus.FileID, id("/s/a")

	var modify, create, del []listingEntry
	start, index := "", -1
	pages := 0
	for ; pages < 10; pages++ {
		q := fmt.Sprintf("/s?op=GETSNAPSHOTDIFFLISTING&oldsnapshotname=s1&snapshotname=&snapshotdiffstartpath=%s&snapshotdiffindex=%d&%s", start, index, u)
		var page struct {
			L *struct {
				CreateList, DeleteList, ModifyList []listingEntry
				IsFromEarlier                      *bool   `json:"isFromEarlier"`
				LastIndex                          *int    `json:"lastIndex"`
				LastPath                           *string `json:"lastPath"`
			} `json:"SnapshotDiffReportListing"`
		}
		out := curl(t, base+q)
		if err := json.Unmarshal(out, &page); err != nil || page.L == nil || page.L.IsFromEarlier == nil || !*page.L.IsFromEarlier ||
			page.L.LastIndex == nil || page.L.LastPath == nil || page.L.CreateList == nil || page.L.DeleteList == nil || page.L.ModifyList == nil {
			t.Fatalf("GETSNAPSHOTDIFFLISTING page %d: %v %s", pages, err, out)
		}
		modify, create, del = append(modify, page.L.ModifyList...), append(create, page.L.CreateList...), append(del, page.L.DeleteList...)
		if *page.L.LastIndex == -1 {
			break
		}
		start, index = *page.L.LastPath, *page.L.LastIndex
	}
	if out := string(curl(t, base+"/s?op=GETSNAPSHOTDIFF&oldsnapshotname=s1&snapshotname=&"+u)); out !=
		`{"SnapshotDiffReport":{"diffList":[{"sourcePath":"","type":"MODIFY"},{"sourcePath":"n","type":"CREATE"},{"sourcePath":"b","type":"DELETE"},`+
			`{"sourcePath":"c","targetPath":"a/c2","type":"RENAME"},{"sourcePath":"a","type":"MODIFY"}],"fromSnapshot":"s1","snapshotRoot":"/s","toSnapshot":""}}`+"\n" {
		t.Fatalf("GETSNAPSHOTDIFF: %s", out)
	}
	// Five entries (the root and a modified, n created, b deleted, c
	// renamed) two at a time: three pages.
	if pages != 2 {
		t.Fatalf("%d pages after the first, want 2", pages)
	}
	str := func(s string) *string { return &s }
	wantModify := []listingEntry{{sID, sID, false, "", nil}, {aID, aID, false, "a", nil}}
	wantCreate := []listingEntry{{sID, id("/s/n"), false, "n", nil}, {aID, id("/s/a/c2"), true, "a/c2", nil}}
	wantDelete := []listingEntry{{sID, del[0].FileID, false, "b", nil}, {sID, id("/s/a/c2"), true, "c", str("a/c2")}}
	for _, c := range []struct {
		name      string
		got, want []listingEntry
	}{{"modifyList", modify, wantModify}, {"createList", create, wantCreate}, {"deleteList", del, wantDelete}} {
		if a, b := fmt.Sprint(entriesText(c.got)), fmt.Sprint(entriesText(c.want)); a != b {
			t.Errorf("%s: %s, want %s", c.name, a, b)
		}
	}
}

func entriesText(es []listingEntry) []string {
	var out []string
	for _, e := range es {
		tp := "-"
		if e.TargetPath != nil {
			tp = *e.TargetPath
		}
		out = append(out, fmt.Sprintf("dir=%d file=%d ref=%v %q→%s", e.DirID, e.FileID, e.IsReference, e.SourcePath, tp))
	}
	return out
}
