package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// loadState is what a create/delete load had acknowledged: names that
// exist, and names whose last operation failed (unknown: skipped when
// checking).
type loadState struct {
	mu      sync.Mutex
	exist   map[string]bool
	unknown map[string]bool
	acked   int
}

// runLoad creates and deletes empty files under /load until ctx ends.
func runLoad(ctx context.Context, nnAddr, user string, st *loadState) {
	fsys, err := client.New(client.Options{Addresses: []string{nnAddr}, User: user})
	if err != nil {
		return
	}
	defer fsys.Close()
	for i := 0; ctx.Err() == nil; i++ {
		dir := fmt.Sprintf("/load/d%d", i/50)
		name := fmt.Sprintf("%s/f%d", dir, i)
		op := func(f func(context.Context) error) error {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			return f(cctx)
		}
		err := op(func(c context.Context) error {
			if err := fsys.MkdirAll(c, dir, 0o755); err != nil {
				return err
			}
			return fsys.WriteFile(c, name, nil, false)
		})
		st.mu.Lock()
		if err != nil {
			st.unknown[name] = true
		} else {
			st.exist[name] = true
			st.acked++
		}
		st.mu.Unlock()
		if err != nil {
			time.Sleep(50 * time.Millisecond) // the NameNode may be down
			continue
		}
		if i%3 == 0 {
			victim := fmt.Sprintf("/load/d%d/f%d", (i-1)/50, i-1)
			if i == 0 {
				continue
			}
			err := op(func(c context.Context) error { return fsys.Remove(c, victim) })
			st.mu.Lock()
			switch {
			case err == nil:
				delete(st.exist, victim)
				st.acked++
			case !st.unknown[victim]:
				st.unknown[victim] = true
				delete(st.exist, victim)
			}
			st.mu.Unlock()
		}
	}
}

// checkLoad lists /load and compares it with what was acknowledged.
func checkLoad(t *testing.T, nnAddr, user string, st *loadState) {
	t.Helper()
	fsys, err := client.New(client.Options{Addresses: []string{nnAddr}, User: user})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	got := map[string]bool{}
	err = fs.WalkDir(fsys.FS(context.Background()), "load", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			got["/"+p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	var lost, extra []string
	for n := range st.exist {
		if !got[n] {
			lost = append(lost, n)
		}
	}
	for n := range got {
		if !st.exist[n] && !st.unknown[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(lost)
	sort.Strings(extra)
	if len(lost) > 0 || len(extra) > 0 {
		t.Fatalf("after %d acknowledged operations: %d acknowledged files lost %v, %d deleted files back %v",
			st.acked, len(lost), first(lost, 10), len(extra), first(extra, 10))
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// count is how many lines of a process's log match re.
func count(p *proc, re *regexp.Regexp) int { return len(re.FindAllStringIndex(p.logText(), -1)) }

var (
	startCheckpointRE  = regexp.MustCompile(`msg="Start checkpoint"`)
	checkpointDoneRE   = regexp.MustCompile(`msg="Checkpoint completed"`)
	checkpointFailedRE = regexp.MustCompile(`msg="Exception in doCheckpoint"`)
	loadedRE           = regexp.MustCompile(`msg="loaded the namespace" image=(\d+) edits=(\d+)`)
)

// TestCheckpointNodeProcesses: a NameNode and a Checkpoint Node as
// processes under a create/delete load. Images come from the Checkpoint
// Node at every dfs.namenode.checkpoint.txns transactions; the NameNode is
// killed with SIGKILL just as a checkpoint starts, in some rounds, and
// restarted; the Checkpoint Node carries on. No acknowledged operation is
// lost, and a restart replays only the edits after the newest image. Then
// the Secondary NameNode's -geteditsize and -checkpoint [force] work from
// the command line. HDFSGO_LONG=1 runs 20 checkpoints with a kill in every
// other one; the default 4 with 2 kills.
func TestCheckpointNodeProcesses(t *testing.T) {
	parallel(t)
	checkpoints := 4
	if os.Getenv("HDFSGO_LONG") != "" {
		checkpoints = 20
	}
	const txns = 300
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	extra := map[string]string{
		"dfs.namenode.http-address":            httpAddr,
		"dfs.namenode.checkpoint.txns":         strconv.Itoa(txns),
		"dfs.namenode.checkpoint.check.period": "100ms",
		"dfs.namenode.checkpoint.period":       "3600",
		"dfs.namenode.safemode.extension":      "0",
		"dfs.heartbeat.interval":               "1",
		"dfs.replication":                      "1",
		"ipc.client.rpc-timeout.ms":            "5000",
		"dfs.image.transfer.timeout":           "5000",
	}
	c := startCluster(t, 1, extra)
	user := osUser(t)
	nameDir := filepath.Join(c.root, "nn", "name")
	site := map[string]string{
		"dfs.namenode.rpc-address":            c.nnAddr,
		"dfs.namenode.checkpoint.dir":         filepath.Join(c.root, "cn"),
		"dfs.namenode.backup.address":         fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1")),
		"dfs.namenode.backup.http-address":    "127.0.0.1:0",
		"dfs.namenode.secondary.http-address": "127.0.0.1:0",
	}
	for k, v := range extra {
		site[k] = v
	}
	writeConf(t, c.confDir("cn"), map[string]string{"fs.defaultFS": "hdfs://" + c.nnAddr}, site)
	cn := c.spawn("checkpointnode", c.confDir("cn"), "namenode", "-checkpoint")
	defer func() {
		cn.cmd.Process.Signal(os.Interrupt)
		waitOrKill(cn)
		if t.Failed() {
			t.Logf("checkpoint node log:\n%s", tail(cn.logText(), 60))
		}
	}()

	st := &loadState{exist: map[string]bool{}, unknown: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); runLoad(ctx, c.nnAddr, user, st) }()
	defer func() { cancel(); wg.Wait() }()

	kills := 0
	var images []int64
	for done := 0; done < checkpoints; {
		// Every other checkpoint, kill the NameNode as it starts one.
		if done%2 == 1 {
			before := count(c.nn, startCheckpointRE)
			deadline := time.Now().Add(60 * time.Second)
			for count(c.nn, startCheckpointRE) == before {
				if time.Now().After(deadline) {
					t.Fatal("no checkpoint started within 60 s")
				}
				time.Sleep(2 * time.Millisecond)
			}
			c.kill(c.nn)
			kills++
			t.Logf("killed the NameNode as checkpoint %d started", done+1)
			c.startNameNode()
			c.waitLive(1, 60*time.Second)
		}
		before := count(cn, checkpointDoneRE)
		deadline := time.Now().Add(60 * time.Second)
		for count(cn, checkpointDoneRE) == before {
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint completed within 60 s (%d so far)", done)
			}
			time.Sleep(10 * time.Millisecond)
		}
		done += count(cn, checkpointDoneRE) - before
		images = append(images, newestImageTxID(t, nameDir))
	}
	cancel()
	wg.Wait()
	interrupted := count(cn, checkpointFailedRE)
	t.Logf("%d checkpoints, %d interrupted, %d kills of the NameNode, %d acknowledged operations, images %v",
		count(cn, checkpointDoneRE), interrupted, kills, st.acked, images)
	if kills > 0 && interrupted == 0 {
		t.Errorf("no checkpoint was interrupted by the %d kills", kills)
	}
	if len(images) == 0 || images[len(images)-1] <= 0 {
		t.Fatalf("no image reached the NameNode: %v", images)
	}
	checkLoad(t, c.nnAddr, user, st)

	// A clean restart loads the newest image and replays only the edits
	// after it.
	c.nn.cmd.Process.Signal(os.Interrupt)
	waitOrKill(c.nn)
	c.startNameNode()
	c.waitLive(1, 60*time.Second)
	m := loadedRE.FindAllStringSubmatch(c.nn.logText(), -1)
	if len(m) == 0 {
		t.Fatal("the NameNode did not log what it loaded")
	}
	img, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64)
	edits, _ := strconv.ParseInt(m[len(m)-1][2], 10, 64)
	t.Logf("the last restart loaded image %d and replayed %d edits", img, edits)
	if img < images[len(images)-1] || edits > 2*txns+10 {
		t.Errorf("the restart loaded image %d (newest seen %d) and replayed %d edits; checkpoints every %d transactions should leave fewer",
			img, images[len(images)-1], edits, txns)
	}
	checkLoad(t, c.nnAddr, user, st)

	// The Secondary NameNode from the command line.
	site2 := map[string]string{}
	for k, v := range site {
		site2[k] = v
	}
	site2["dfs.namenode.checkpoint.dir"] = filepath.Join(c.root, "2nn")
	writeConf(t, c.confDir("2nn"), map[string]string{"fs.defaultFS": "hdfs://" + c.nnAddr}, site2)
	out := c.run(t, c.confDir("2nn"), "secondarynamenode", "-geteditsize")
	if !regexp.MustCompile(`^NameNode has \d+ uncheckpointed transactions\n$`).MatchString(out) {
		t.Errorf("-geteditsize printed %q", out)
	}
	out, err := c.runErr(c.confDir("2nn"), nil, "secondarynamenode", "-checkpoint")
	if err != nil {
		t.Fatalf("-checkpoint: %v\n%s", err, out)
	}
	newest := newestImageTxID(t, nameDir)
	out = c.run(t, c.confDir("2nn"), "secondarynamenode", "-checkpoint", "force")
	if !strings.Contains(out, "Checkpoint done") {
		t.Errorf("-checkpoint force printed %q", out)
	}
	if got := newestImageTxID(t, nameDir); got <= newest {
		t.Errorf("after -checkpoint force the NameNode's newest image is %d, before %d", got, newest)
	}
}

// newestImageTxID is the txid of the newest fsimage_N in a name dir.
func newestImageTxID(t *testing.T, dir string) int64 {
	t.Helper()
	names, err := os.ReadDir(filepath.Join(dir, "current"))
	if err != nil {
		t.Fatal(err)
	}
	newest := int64(-1)
	for _, e := range names {
		if rest, ok := strings.CutPrefix(e.Name(), "fsimage_"); ok && !strings.Contains(rest, ".") {
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n > newest {
				newest = n
			}
		}
	}
	return newest
}
