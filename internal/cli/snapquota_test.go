package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSnapshotDataCountsAgainstQuota: through a real cluster, a file that a
// snapshot holds keeps counting against its directory's quotas after -rm,
// with Hadoop's messages, and stops counting after -deleteSnapshot; -count
// -q, -count -s, -du and -du -x show it as Hadoop does.
func TestSnapshotDataCountsAgainstQuota(t *testing.T) {
	r := newShellRig(t)
	const kb600 = 600 << 10
	r.ok(t, "", "dfs", "-mkdir", "/q")
	r.ok(t, strings.Repeat("x", kb600), "dfs", "-D", "dfs.blocksize=1048576", "-D", "dfs.replication=1", "-put", "-", "/q/f")
	r.ok(t, "", "dfsadmin", "-setQuota", "3", "/q")
	r.ok(t, "", "dfsadmin", "-setSpaceQuota", "1572864", "/q")
	r.ok(t, "", "dfsadmin", "-allowSnapshot", "/q")
	r.ok(t, "", "dfs", "-createSnapshot", "/q", "s1")
	r.ok(t, "", "dfs", "-rm", "-skipTrash", "/q/f")

	// Quota columns %12s %15s %15s %15s, then the counts; the file the
	// snapshot keeps is in both.
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s /q\n", "3", "1", "1.5 M", "936 K", "1", "1", "600 K"),
		"", "dfs", "-count", "-q", "-h", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s /q\n", "3", "1", "1.5 M", "936 K"), "", "dfs", "-count", "-u", "-h", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %12s %18s %12s %12s %12s %12s /q\n", "1", "1", "614400", "614400", "1", "0", "614400"),
		"", "dfs", "-count", "-s", "/q")
	r.want(t, 0, fmt.Sprintf("%12s %12s %18s /q\n", "1", "0", "0"), "", "dfs", "-count", "-x", "/q")
	r.want(t, 0, "614400  614400  /q\n", "", "dfs", "-du", "-s", "/q")
	r.want(t, 0, "0  0  /q\n", "", "dfs", "-du", "-s", "-x", "/q")

	// 600 K kept + a new block's 1 M reservation > 1.5 M.
	out, errOut, code := r.run(t, strings.Repeat("x", kb600), "dfs", "-D", "dfs.blocksize=1048576", "-D", "dfs.replication=1", "-put", "-", "/q/g")
	if want := "The DiskSpace quota of /q is exceeded: quota = 1572864 B = 1.50 MB but diskspace consumed = 1662976 B = 1.59 MB"; code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("put over the space quota: exit %d %q %q, want %q", code, out, errOut, want)
	}
	r.ok(t, "", "dfs", "-rm", "-f", "-skipTrash", "/q/g")
	r.ok(t, "", "dfs", "-touchz", "/q/e")
	r.want(t, 1, "", "touchz: The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4\n",
		"dfs", "-touchz", "/q/e2")

	// After a restart from a saved image, and again from the edit log
	// alone, the NameNode counts the same.
	for _, save := range []bool{true, false} {
		if save {
			r.ok(t, "", "dfsadmin", "-safemode", "enter")
			r.ok(t, "", "dfsadmin", "-saveNamespace")
			r.ok(t, "", "dfsadmin", "-safemode", "leave")
		} else {
			r.ok(t, "", "dfs", "-rm", "-skipTrash", "/q/e")
			r.ok(t, "", "dfs", "-touchz", "/q/e")
		}
		if err := r.c.RestartNameNode(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.ok(t, "", "dfsadmin", "-safemode", "wait")
		r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s /q\n", "3", "0", "1.5 M", "936 K"), "", "dfs", "-count", "-u", "-h", "/q")
		r.want(t, 1, "", "touchz: The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4\n",
			"dfs", "-touchz", "/q/e2")
	}

	r.ok(t, "", "dfs", "-deleteSnapshot", "/q", "s1")
	r.want(t, 0, fmt.Sprintf("%12s %15s %15s %15s /q\n", "3", "1", "1.5 M", "1.5 M"), "", "dfs", "-count", "-u", "-h", "/q")
	r.ok(t, "", "dfs", "-touchz", "/q/e2")
	r.ok(t, "", "dfs", "-rm", "-skipTrash", "/q/e", "/q/e2")
	// The DataNode registers again with the restarted NameNode.
	for i := 0; !strings.Contains(r.ok(t, "", "dfsadmin", "-report"), "Live datanodes (1)"); i++ {
		if i == 200 {
			t.Fatal("the DataNode did not register again within 20 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.ok(t, strings.Repeat("x", kb600), "dfs", "-D", "dfs.blocksize=1048576", "-D", "dfs.replication=1", "-put", "-", "/q/g")
}
