package minicluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	stock "github.com/colinmarc/hdfs/v2"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// startTyped starts a cluster whose DataNode i has volumes of types[i].
func startTyped(t *testing.T, types [][]string) (*Cluster, *client.FileSystem) {
	t.Helper()
	ctx := context.Background()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: len(types), StorageTypes: types,
		Conf: []conf.KeyValue{{Key: conf.DFSHeartbeatInterval, Value: "1"}, {Key: conf.DFSNameNodeRedundancyInterval, Value: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fsys, err := client.New(client.Options{Addresses: []string{c.NameNodeAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return c, fsys
}

// renamedFiles maps a renamed test file to the name it was written as.
var renamedFiles = map[string]string{"/cold/moved": "/hot/f"}

// fileLen is the length of a file written by writeTyped: each name has its
// own, so that its replicas can be told apart on the DataNodes' disks.
func fileLen(name string) int {
	if was, ok := renamedFiles[name]; ok {
		name = was
	}
	n := uint32(1000)
	for _, c := range name {
		n = n*31 + uint32(c)
	}
	return 1000 + int(n%50000)
}

func writeTyped(t *testing.T, fsys *client.FileSystem, name string, repl uint16) error {
	t.Helper()
	w, err := fsys.CreateFile(context.Background(), name, client.CreateOptions{Replication: repl, Perm: 0o644})
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(strings.Repeat("x", fileLen(name)))); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// replicaTypes waits (bounded) until the first block of name has want
// replicas reported, and returns the storage types the NameNode names for
// them and the types of the volumes the replicas really are on, both
// sorted.
func replicaTypes(t *testing.T, c *Cluster, fsys *client.FileSystem, types [][]string, name string, want int) (nn, disk []string) {
	t.Helper()
	ctx := context.Background()
	var bl client.BlockLocation
	for i := 0; ; i++ {
		locs, err := fsys.BlockLocations(ctx, name, 0, 1)
		if err != nil || len(locs) != 1 {
			t.Fatalf("locations of %s: %v %v", name, locs, err)
		}
		bl = locs[0]
		if len(bl.Hosts) >= want {
			break
		}
		if i == 200 {
			t.Fatalf("%s: %d of %d replicas reported", name, len(bl.Hosts), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	nn = slices.Sorted(slices.Values(bl.StorageTypes))
	// The volume each replica is on, found on the DataNodes' disks.
	for i, dn := range c.DataNodes() {
		bp, err := dn.BlockPool(c.NameNode().BlockPoolID())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range bp.Replicas() {
			if r.NumBytes != int64(fileLen(name)) {
				continue
			}
			base := filepath.Base(r.VolumeDir)
			j, err := strconv.Atoi(strings.TrimPrefix(base, "data"))
			if err != nil || j >= len(types[i]) {
				t.Fatalf("replica on unexpected volume %s", r.VolumeDir)
			}
			disk = append(disk, types[i][j])
		}
	}
	slices.Sort(disk)
	return nn, disk
}

// Files under directories with ALL_SSD, ONE_SSD, COLD and no policy (HOT)
// land on volumes of the policy's types, as the NameNode reports them and
// as they are on the DataNodes' disks; raising a file's replication copies
// it to the policy's type.
func TestStoragePolicyPlacement(t *testing.T) {
	ctx := context.Background()
	all := []string{"DISK", "SSD", "ARCHIVE"}
	types := [][]string{all, all, all, all}
	c, fsys := startTyped(t, types)
	for dir, policy := range map[string]string{"/ssd": "ALL_SSD", "/one": "ONE_SSD", "/cold": "COLD", "/hot": ""} {
		if err := fsys.MkdirAll(ctx, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if policy != "" {
			if err := fsys.SetStoragePolicy(ctx, dir, policy); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		file string
		want []string
	}{
		{"/ssd/f", []string{"SSD", "SSD", "SSD"}},
		{"/one/f", []string{"DISK", "DISK", "SSD"}},
		{"/cold/f", []string{"ARCHIVE", "ARCHIVE", "ARCHIVE"}},
		{"/hot/f", []string{"DISK", "DISK", "DISK"}},
	}
	for _, cs := range cases {
		if err := writeTyped(t, fsys, cs.file, 3); err != nil {
			t.Fatalf("%s: %v", cs.file, err)
		}
		nn, disk := replicaTypes(t, c, fsys, types, cs.file, 3)
		if !slices.Equal(nn, cs.want) || !slices.Equal(disk, cs.want) {
			t.Errorf("%s: NameNode says %v, disks hold %v, want %v", cs.file, nn, disk, cs.want)
		}
	}
	// Re-replication follows the policy: one SSD replica, then four.
	if err := writeTyped(t, fsys, "/ssd/g", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.SetReplication(ctx, "/ssd/g", 4); err != nil {
		t.Fatal(err)
	}
	if nn, disk := replicaTypes(t, c, fsys, types, "/ssd/g", 4); !slices.Equal(nn, []string{"SSD", "SSD", "SSD", "SSD"}) || !slices.Equal(disk, nn) {
		t.Errorf("re-replicated /ssd/g: NameNode says %v, disks hold %v", nn, disk)
	}
	// A policy set on a file after its directory's: the file's own wins;
	// a renamed file takes its new directory's policy for new blocks.
	if err := fsys.Rename(ctx, "/hot/f", "/cold/moved"); err != nil {
		t.Fatal(err)
	}
	if p, err := fsys.StoragePolicy(ctx, "/cold/moved"); err != nil || p.Name != "COLD" {
		t.Fatalf("policy of a file moved under /cold: %v %v", p, err)
	}
	if _, err := fsys.SetReplication(ctx, "/cold/moved", 4); err != nil {
		t.Fatal(err)
	}
	want := []string{"ARCHIVE", "DISK", "DISK", "DISK"}
	if nn, disk := replicaTypes(t, c, fsys, types, "/cold/moved", 4); !slices.Equal(nn, want) || !slices.Equal(disk, want) {
		t.Errorf("moved file re-replicated: NameNode says %v, disks hold %v, want %v", nn, disk, want)
	}
}

// Without SSD or ARCHIVE volumes, ALL_SSD and ONE_SSD fall back to DISK
// (their creation fallback); COLD has no fallback and the write fails.
func TestStoragePolicyFallback(t *testing.T) {
	ctx := context.Background()
	types := [][]string{{"DISK"}, {"DISK"}}
	c, fsys := startTyped(t, types)
	for _, d := range []string{"/ssd", "/one", "/cold"} {
		if err := fsys.MkdirAll(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for d, p := range map[string]string{"/ssd": "ALL_SSD", "/one": "ONE_SSD", "/cold": "COLD"} {
		if err := fsys.SetStoragePolicy(ctx, d, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"/ssd/f", "/one/f"} {
		if err := writeTyped(t, fsys, f, 2); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if nn, disk := replicaTypes(t, c, fsys, types, f, 2); !slices.Equal(nn, []string{"DISK", "DISK"}) || !slices.Equal(disk, nn) {
			t.Errorf("%s: NameNode says %v, disks hold %v", f, nn, disk)
		}
	}
	err := writeTyped(t, fsys, "/cold/f", 2)
	if err == nil || !strings.Contains(err.Error(), "could only be written to 0 of the 1 minReplication nodes") {
		t.Fatalf("COLD without ARCHIVE volumes: %v", err)
	}
}

// Storage policies and quotas by storage type survive NameNode restarts,
// from the edit log and from an image: the quota is reported and enforced,
// and re-replication after the restart still follows the policy.
func TestStoragePolicyAndTypeQuotaRestart(t *testing.T) {
	ctx := context.Background()
	types := [][]string{{"DISK", "SSD"}, {"DISK", "SSD"}, {"DISK", "SSD"}}
	c, fsys := startTyped(t, types)
	if err := fsys.MkdirAll(ctx, "/r", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetStoragePolicy(ctx, "/r", "ALL_SSD"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetTypeQuota(ctx, "/r", "SSD", 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := writeTyped(t, fsys, "/r/f", 1); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, repl int) {
		t.Helper()
		u, err := fsys.QuotaUsage(ctx, "/r")
		if err != nil {
			t.Fatal(err)
		}
		if q := u.TypeQuotas["SSD"]; q.Quota != 1<<30 || q.Consumed != int64(fileLen("/r/f")*(repl-1)) {
			t.Fatalf("%s: SSD quota %+v", stage, u.TypeQuotas)
		}
		if p, err := fsys.StoragePolicy(ctx, "/r/f"); err != nil || p.Name != "ALL_SSD" {
			t.Fatalf("%s: policy %v %v", stage, p, err)
		}
		// (the file has repl-1 replicas now). Raising the replication (retried while the NameNode leaves safe
		// mode) places the new replicas on SSD.
		for i := 0; ; i++ {
			_, err := fsys.SetReplication(ctx, "/r/f", uint16(repl))
			if err == nil {
				break
			}
			if i == 200 {
				t.Fatalf("%s: setReplication: %v", stage, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		want := slices.Repeat([]string{"SSD"}, repl)
		if nn, disk := replicaTypes(t, c, fsys, types, "/r/f", repl); !slices.Equal(nn, want) || !slices.Equal(disk, want) {
			t.Fatalf("%s: NameNode says %v, disks hold %v", stage, nn, disk)
		}
	}
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	check("after replaying the edits", 2)
	saveNamespace(t, c)
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	// The image holds every op above; only segment markers follow it.
	if ld := c.NameNode().Loaded(); ld.ImageTxID == 0 || ld.Replayed > 2 {
		t.Fatalf("restart loaded image %d and replayed %d edits: not from the image", ld.ImageTxID, ld.Replayed)
	}
	check("after loading the image", 3)
	// Enforced after the restart: a new block reserves 128 MB on SSD.
	if err := fsys.SetTypeQuota(ctx, "/r", "SSD", 1<<20); err != nil {
		t.Fatal(err)
	}
	err := writeTyped(t, fsys, "/r/g", 1)
	if err == nil || !strings.Contains(err.Error(), "Quota by storage type : SSD on path : /r is exceeded.") {
		t.Fatalf("write over the SSD quota: %v", err)
	}
}

// WebHDFS GETCONTENTSUMMARY and GETQUOTAUSAGE carry Hadoop's "typeQuota"
// object: each storage type with a quota, its quota and consumption.
func TestWebHDFSTypeQuota(t *testing.T) {
	ctx := context.Background()
	c, fsys := startTyped(t, [][]string{{"DISK", "SSD"}})
	if err := fsys.MkdirAll(ctx, "/w", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetStoragePolicy(ctx, "/w", "ONE_SSD"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetTypeQuota(ctx, "/w", "SSD", 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := writeTyped(t, fsys, "/w/f", 1); err != nil {
		t.Fatal(err)
	}
	n := int64(fileLen("/w/f"))
	w := newWebClient(t, c)
	super := c.NameNode().SuperUser()
	want := map[string]any{"SSD": map[string]any{"quota": float64(1 << 30), "consumed": float64(n)}}
	cs := decode[map[string]webhdfs.ContentSummary](t, "GETCONTENTSUMMARY", 200, mustOp(t, w, "GET", "/w", "op=GETCONTENTSUMMARY&user.name="+super))["ContentSummary"]
	if !reflect.DeepEqual(cs.TypeQuota, want) {
		t.Fatalf("GETCONTENTSUMMARY typeQuota %v, want %v", cs.TypeQuota, want)
	}
	qu := decode[map[string]webhdfs.QuotaUsage](t, "GETQUOTAUSAGE", 200, mustOp(t, w, "GET", "/w", "op=GETQUOTAUSAGE&user.name="+super))["QuotaUsage"]
	if !reflect.DeepEqual(qu.TypeQuota, want) {
		t.Fatalf("GETQUOTAUSAGE typeQuota %v, want %v", qu.TypeQuota, want)
	}
	// No type quota: an empty object.
	qu = decode[map[string]webhdfs.QuotaUsage](t, "GETQUOTAUSAGE", 200, mustOp(t, w, "GET", "/w/f", "op=GETQUOTAUSAGE&user.name="+super))["QuotaUsage"]
	if len(qu.TypeQuota) != 0 {
		t.Fatalf("GETQUOTAUSAGE of a file: typeQuota %v", qu.TypeQuota)
	}
}

// fsck -storagepolicies reports the blocks whose replicas are on the
// storage types their file's policy asks for, and those that are not (a
// policy changed after the write).
func TestFsckStoragePolicies(t *testing.T) {
	ctx := context.Background()
	all := []string{"DISK", "SSD", "ARCHIVE"}
	types := [][]string{all, all, all}
	c, fsys := startTyped(t, types)
	for dir, policy := range map[string]string{"/ssd": "ALL_SSD", "/one": "ONE_SSD", "/hot": "HOT", "/plain": ""} {
		if err := fsys.MkdirAll(ctx, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if policy != "" {
			if err := fsys.SetStoragePolicy(ctx, dir, policy); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeTyped(t, fsys, dir+"/f", 3); err != nil {
			t.Fatal(err)
		}
		replicaTypes(t, c, fsys, types, dir+"/f", 3)
	}
	if err := fsys.SetStoragePolicy(ctx, "/hot", "COLD"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + c.NameNode().HTTPAddr().String() + "/fsck?ugi=" + c.NameNode().SuperUser() + "&storagepolicies=1&path=%2F")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := string(b)
	want := "\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n" +
		fmt.Sprintf("%-25s %10d  %20s\n", "DISK:3(HOT)", 1, "25.0000%") +
		fmt.Sprintf("%-25s %10d  %20s\n", "SSD:3(ALL_SSD)", 1, "25.0000%") +
		fmt.Sprintf("%-25s %10d  %20s\n", "SSD:1,DISK:2(ONE_SSD)", 1, "25.0000%") +
		"\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n" +
		fmt.Sprintf("%-35s %-20s %10d  %20s\n", "DISK:3(HOT)", "COLD", 1, "25.0000%") +
		"FSCK ended at "
	// The three satisfying lines have equal counts: their order is free.
	head, tail, ok := strings.Cut(want, fmt.Sprintf("%-25s %10d  %20s\n", "DISK:3(HOT)", 1, "25.0000%"))
	if !ok || !strings.Contains(out, head) || !strings.Contains(out, "\nBlocks NOT satisfying") {
		t.Fatalf("fsck -storagepolicies:\n%s", out)
	}
	for _, line := range strings.SplitAfter(tail, "\n") {
		if line != "" && line != "FSCK ended at " && !strings.Contains(out, line) {
			t.Errorf("missing %q in:\n%s", line, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("%-25s %10d  %20s\n", "DISK:3(HOT)", 1, "25.0000%")) {
		t.Errorf("no HOT line in:\n%s", out)
	}
}

// The stock Go client writes into and reads from a directory with a
// storage policy and a quota by storage type, and reads its content
// summary (with the typeQuotaInfos it must parse).
func TestStockClientStorageTypes(t *testing.T) {
	ctx := context.Background()
	types := [][]string{{"DISK", "SSD"}, {"DISK", "SSD"}}
	c, fsys := startTyped(t, types)
	if err := fsys.MkdirAll(ctx, "/s", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetStoragePolicy(ctx, "/s", "ALL_SSD"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetTypeQuota(ctx, "/s", "SSD", 1<<30); err != nil {
		t.Fatal(err)
	}
	if err := writeTyped(t, fsys, "/s/ours", 2); err != nil {
		t.Fatal(err)
	}
	cl, err := stock.NewClient(stock.ClientOptions{Addresses: []string{c.NameNodeAddr()}, User: c.NameNode().SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got, err := cl.ReadFile("/s/ours")
	if err != nil || string(got) != strings.Repeat("x", fileLen("/s/ours")) {
		t.Fatalf("stock read of an ALL_SSD file: %d bytes, %v", len(got), err)
	}
	w, err := cl.Create("/s/theirs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("written by the stock client")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.ReadFile("/s/theirs"); err != nil || string(got) != "written by the stock client" {
		t.Fatalf("stock read back: %q %v", got, err)
	}
	cs, err := cl.GetContentSummary("/s")
	if err != nil {
		t.Fatalf("stock getContentSummary with typeQuotaInfos: %v", err)
	}
	if cs.FileCount() != 2 {
		t.Fatalf("stock content summary: %d files", cs.FileCount())
	}
}

// A standby replays OP_SET_STORAGE_POLICY and OP_SET_QUOTA_BY_STORAGETYPE
// from the shared edits: after a failover the new active reports and
// enforces the quota.
func TestTypeQuotaFailover(t *testing.T) {
	c := startHACluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nns := c.NameNodes()
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(), User: nns[0].SuperUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := fsys.MkdirAll(ctx, "/h", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SetStoragePolicy(ctx, "/h", "ALL_SSD"); err != nil {
		t.Fatal(err)
	}
	// Below one block (1 MiB in this cluster): a new block goes over.
	if err := fsys.SetTypeQuota(ctx, "/h", "SSD", 1<<19); err != nil {
		t.Fatal(err)
	}
	waitStandbyCaughtUp(t, nns[0], nns[1])
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	u, err := fsys.QuotaUsage(ctx, "/h")
	if err != nil || u.TypeQuotas["SSD"].Quota != 1<<19 {
		t.Fatalf("after failover: %+v %v", u, err)
	}
	err = writeTyped(t, fsys, "/h/f", 1)
	if err == nil || !strings.Contains(err.Error(), "Quota by storage type : SSD on path : /h is exceeded.") {
		t.Fatalf("write over the SSD quota after failover: %v", err)
	}
}
