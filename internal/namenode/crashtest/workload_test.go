package crashtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os/user"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// callTimeout bounds every RPC of the workload and the checker.
const callTimeout = 15 * time.Second

// opKind is a workload operation.
type opKind uint8

const (
	opMkdir    opKind = iota // mkdirs /w<i>/name
	opCreate                 // create /w<i>/name (left under construction)
	opComplete               // complete /w<i>/name
	opRename                 // rename2 /w<i>/name -> /w<i>/dst
	opDelete                 // delete /w<i>/name, recursive
)

func (k opKind) String() string {
	return [...]string{"mkdirs", "create", "complete", "rename2", "delete"}[k]
}

// wop is one entry of a worker's log: logged before it is sent.
type wop struct {
	kind      opKind
	name, dst string
	acked     bool // the success answer arrived
}

func (o wop) String() string {
	s := o.kind.String() + " " + o.name
	if o.kind == opRename {
		s += " -> " + o.dst
	}
	if !o.acked {
		s += " (no answer)"
	}
	return s
}

// entry is what a name in a worker's directory is.
type entry struct {
	dir    bool
	closed bool // files: not under construction
}

func (e entry) String() string {
	switch {
	case e.dir:
		return "dir"
	case e.closed:
		return "closed file"
	}
	return "file under construction"
}

// state is a worker directory's content: name -> entry.
type state map[string]entry

// apply changes s as o does; it reports false if o cannot apply to s, which
// the op chooser never produces.
func (s state) apply(o wop) bool {
	switch o.kind {
	case opMkdir, opCreate:
		if _, ok := s[o.name]; ok {
			return false
		}
		s[o.name] = entry{dir: o.kind == opMkdir}
	case opComplete:
		e, ok := s[o.name]
		if !ok || e.dir {
			return false
		}
		e.closed = true
		s[o.name] = e
	case opRename:
		e, ok := s[o.name]
		if _, taken := s[o.dst]; !ok || taken {
			return false
		}
		delete(s, o.name)
		s[o.dst] = e
	case opDelete:
		if _, ok := s[o.name]; !ok {
			return false
		}
		delete(s, o.name)
	}
	return true
}

func (s state) clone() state {
	c := make(state, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

func (s state) names() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func equalStates(a, b state) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// diffStates describes how got differs from want.
func diffStates(want, got state) string {
	var lines []string
	for _, k := range want.names() {
		if g, ok := got[k]; !ok {
			lines = append(lines, fmt.Sprintf("  missing %s (%v)", k, want[k]))
		} else if g != want[k] {
			lines = append(lines, fmt.Sprintf("  %s is a %v, want %v", k, g, want[k]))
		}
	}
	for _, k := range got.names() {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("  unexpected %s (%v)", k, got[k]))
		}
	}
	return strings.Join(lines, "\n")
}

// worker owns /w<id> and its log. Its methods are called by one goroutine at a
// time (its own during a round, the test goroutine between rounds).
type worker struct {
	id     int
	dir    string
	holder string // lease holder (clientName) of its creates
	rng    *rand.Rand
	next   int   // name counter; names are never reused
	ops    []wop // every op that happened, then the ones sent since the last check
	cur    state // model of ops (as if every op in it happened)

	acked, unanswered, appliedUnanswered, droppedUnanswered int
}

func newWorkers(n int, seed int64) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{
			id: i, dir: fmt.Sprintf("/w%d", i), holder: fmt.Sprintf("crashtest-w%d", i),
			rng: rand.New(rand.NewSource(seed + int64(i)*7919)), cur: state{},
		}
	}
	return ws
}

func (w *worker) path(name string) string { return path.Join(w.dir, name) }

// firstUnanswered is the index of the first op without a success answer.
func (w *worker) firstUnanswered() int {
	for i, o := range w.ops {
		if !o.acked {
			return i
		}
	}
	return len(w.ops)
}

// model is the state after the first n ops.
func (w *worker) model(n int) state {
	s := state{}
	for _, o := range w.ops[:n] {
		s.apply(o)
	}
	return s
}

// match finds the prefix length L in [lo, hi] whose model equals got.
func (w *worker) match(got state, lo, hi int) (int, error) {
	s := w.model(lo)
	for l := lo; ; l++ {
		if equalStates(s, got) {
			return l, nil
		}
		if l == hi {
			break
		}
		s.apply(w.ops[l])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s matches no prefix of its log between op %d and op %d (of %d sent)\n", w.dir, lo, hi, len(w.ops))
	fmt.Fprintf(&b, " compared with the state after op %d (every acknowledged op):\n%s\n", lo, diffStates(w.model(lo), got))
	if hi > lo {
		fmt.Fprintf(&b, " compared with the state after op %d (every op sent):\n%s\n", hi, diffStates(w.model(hi), got))
	}
	from := max(lo-5, 0)
	fmt.Fprintf(&b, " log from op %d:", from)
	for i := from; i < min(hi, lo+10); i++ {
		fmt.Fprintf(&b, "\n  %d: %v", i, w.ops[i])
	}
	return 0, errors.New(b.String())
}

// resolve keeps the first l ops as having happened and forgets the rest of
// the log (those ops never happened; their names are not reused).
func (w *worker) resolve(l int) {
	first := w.firstUnanswered()
	if l > first {
		w.appliedUnanswered += l - first
	}
	if len(w.ops) > l && l >= first {
		w.droppedUnanswered += len(w.ops) - l
	}
	w.ops = w.ops[:l]
	for i := range w.ops {
		w.ops[i].acked = true // known to have happened
	}
	w.cur = w.model(l)
}

// choose picks the next op from the model.
func (w *worker) choose() wop {
	if n := len(w.ops); n > 0 && w.ops[n-1].kind == opCreate {
		if e, ok := w.cur[w.ops[n-1].name]; ok && !e.dir && !e.closed {
			return wop{kind: opComplete, name: w.ops[n-1].name}
		}
	}
	k := w.next
	w.next++
	names := w.cur.names()
	r := w.rng.Intn(100)
	switch {
	case len(names) < 4:
		if r < 40 {
			return wop{kind: opMkdir, name: fmt.Sprintf("d%d", k)}
		}
		return wop{kind: opCreate, name: fmt.Sprintf("f%d", k)}
	case len(names) > 24 && r < 60 || r >= 85:
		return wop{kind: opDelete, name: names[w.rng.Intn(len(names))]}
	case r < 35:
		return wop{kind: opCreate, name: fmt.Sprintf("f%d", k)}
	case r < 55:
		return wop{kind: opMkdir, name: fmt.Sprintf("d%d", k)}
	default:
		return wop{kind: opRename, name: names[w.rng.Intn(len(names))], dst: fmt.Sprintf("r%d", k)}
	}
}

// errRefused marks a call the NameNode answered with an error.
type errRefused struct{ err error }

func (e errRefused) Error() string { return "refused: " + e.err.Error() }
func (e errRefused) Unwrap() error { return e.err }

// run issues ops one at a time until stop is closed, limit ops were
// acknowledged (0: no limit), or a call fails. onAck is called after each
// acknowledgement. It returns the failure: errRefused when the NameNode
// answered with an error, any other error when no answer came.
func (w *worker) run(c *ipc.Client, stop <-chan struct{}, limit int, onAck func()) error {
	for n := 0; limit == 0 || n < limit; n++ {
		select {
		case <-stop:
			return nil
		default:
		}
		o := w.choose()
		w.ops = append(w.ops, o)
		if err := w.call(c, o); err != nil {
			w.unanswered++
			var re *remoteerr.Error
			if errors.As(err, &re) {
				return errRefused{fmt.Errorf("%s: %s %v: %w", w.dir, o.kind, o.name, err)}
			}
			return fmt.Errorf("%s: %v %s: %w", w.dir, o.kind, o.name, err)
		}
		w.ops[len(w.ops)-1].acked = true
		w.cur.apply(o)
		w.acked++
		if onAck != nil {
			onAck()
		}
	}
	return nil
}

func perm(mode uint32) *hdfs.FsPermissionProto {
	return &hdfs.FsPermissionProto{Perm: proto.Uint32(mode)}
}

// call sends o and waits for its answer.
func (w *worker) call(c *ipc.Client, o wop) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p := w.path(o.name)
	switch o.kind {
	case opMkdir:
		var resp hdfs.MkdirsResponseProto
		if err := c.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{
			Src: proto.String(p), Masked: perm(0o755), CreateParent: proto.Bool(false),
		}, &resp); err != nil {
			return err
		}
		if !resp.GetResult() {
			return remoteerr.New(remoteerr.ClassIOException, "mkdirs %s answered false", p)
		}
	case opCreate:
		var resp hdfs.CreateResponseProto
		if err := c.Call(ctx, "create", &hdfs.CreateRequestProto{
			Src: proto.String(p), Masked: perm(0o644), ClientName: proto.String(w.holder),
			CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false),
			Replication: proto.Uint32(1), BlockSize: proto.Uint64(134217728),
		}, &resp); err != nil {
			return err
		}
	case opComplete:
		var resp hdfs.CompleteResponseProto
		if err := c.Call(ctx, "complete", &hdfs.CompleteRequestProto{
			Src: proto.String(p), ClientName: proto.String(w.holder),
		}, &resp); err != nil {
			return err
		}
		if !resp.GetResult() {
			return remoteerr.New(remoteerr.ClassIOException, "complete %s answered false", p)
		}
	case opRename:
		var resp hdfs.Rename2ResponseProto
		if err := c.Call(ctx, "rename2", &hdfs.Rename2RequestProto{
			Src: proto.String(p), Dst: proto.String(w.path(o.dst)), OverwriteDest: proto.Bool(false),
		}, &resp); err != nil {
			return err
		}
	case opDelete:
		var resp hdfs.DeleteResponseProto
		if err := c.Call(ctx, "delete", &hdfs.DeleteRequestProto{
			Src: proto.String(p), Recursive: proto.Bool(true),
		}, &resp); err != nil {
			return err
		}
		if !resp.GetResult() {
			return remoteerr.New(remoteerr.ClassIOException, "delete %s answered false", p)
		}
	}
	return nil
}

// newClient is an RPC client that never retries a call: a call without an
// answer is reported at once, so its op stays unanswered in the log.
func newClient(addr string) *ipc.Client {
	return ipc.NewClient(ipc.ClientConfig{
		Addresses:   []string{addr},
		User:        "crash",
		Protocol:    "org.apache.hadoop.hdfs.protocol.ClientProtocol",
		DialTimeout: 5 * time.Second,
		MaxRetries:  -1,
	})
}

// listing returns every entry of dir, following getListing's pages.
func listing(c *ipc.Client, dir string) ([]*hdfs.HdfsFileStatusProto, error) {
	var out []*hdfs.HdfsFileStatusProto
	after := []byte{}
	for page := 0; page < 10000; page++ {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var resp hdfs.GetListingResponseProto
		err := c.Call(ctx, "getListing", &hdfs.GetListingRequestProto{
			Src: proto.String(dir), StartAfter: after, NeedLocation: proto.Bool(false),
		}, &resp)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("getListing %s: %w", dir, err)
		}
		dl := resp.GetDirList()
		if dl == nil {
			return nil, fmt.Errorf("getListing %s: no such directory", dir)
		}
		out = append(out, dl.GetPartialListing()...)
		if dl.GetRemainingEntries() == 0 || len(dl.GetPartialListing()) == 0 {
			return out, nil
		}
		after = dl.GetPartialListing()[len(dl.GetPartialListing())-1].GetPath()
	}
	return nil, fmt.Errorf("getListing %s: too many pages", dir)
}

// observe reads a worker directory's content.
func observe(c *ipc.Client, dir string) (state, error) {
	entries, err := listing(c, dir)
	if err != nil {
		return nil, err
	}
	s := state{}
	for _, st := range entries {
		name := string(st.GetPath())
		p := path.Join(dir, name)
		switch st.GetFileType() {
		case hdfs.HdfsFileStatusProto_IS_DIR:
			if n := st.GetChildrenNum(); n != 0 {
				return nil, fmt.Errorf("%s has %d children; the workload leaves every directory empty", p, n)
			}
			s[name] = entry{dir: true}
		case hdfs.HdfsFileStatusProto_IS_FILE:
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			var resp hdfs.IsFileClosedResponseProto
			err := c.Call(ctx, "isFileClosed", &hdfs.IsFileClosedRequestProto{Src: proto.String(p)}, &resp)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("isFileClosed %s: %w", p, err)
			}
			s[name] = entry{closed: resp.GetResult()}
		default:
			return nil, fmt.Errorf("%s has type %v", p, st.GetFileType())
		}
	}
	return s, nil
}

// setupWorkers makes every worker's directory and checks the root holds them.
func setupWorkers(t *testing.T, addr string, ws []*worker) {
	t.Helper()
	c := newClient(addr)
	defer c.Close()
	for _, w := range ws {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var resp hdfs.MkdirsResponseProto
		err := c.Call(ctx, "mkdirs", &hdfs.MkdirsRequestProto{
			Src: proto.String(w.dir), Masked: perm(0o755), CreateParent: proto.Bool(false),
		}, &resp)
		cancel()
		if err != nil || !resp.GetResult() {
			t.Fatalf("mkdirs %s: %v (result %v)", w.dir, err, resp.GetResult())
		}
	}
}

// bounds gives, for a worker, the range of log prefixes its directory may
// match now.
type bounds func(w *worker) (lo, hi int)

// afterCrash: every answered op happened; an unanswered one may have.
func afterCrash(w *worker) (int, int) { return w.firstUnanswered(), len(w.ops) }

// verify checks the root and every worker's directory against the model and
// resolves each worker's log to the prefix that matched.
func verify(t *testing.T, addr string, ws []*worker, b bounds) {
	t.Helper()
	c := newClient(addr)
	defer c.Close()
	root, err := listing(c, "/")
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, st := range root {
		got = append(got, string(st.GetPath()))
	}
	for _, w := range ws {
		want = append(want, strings.TrimPrefix(w.dir, "/"))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("root holds %v, want %v", got, want)
	}
	for _, w := range ws {
		s, err := observe(c, w.dir)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := b(w)
		l, err := w.match(s, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		w.resolve(l)
	}
}

// round runs every worker with its own client against addr. When killAfter
// > 0, kill is called once that many ops in total were acknowledged (after a
// random pause of up to jitter), and the workers run until their calls fail;
// otherwise each worker stops after perWorker acknowledged ops. It returns
// each worker's failure.
func round(t *testing.T, addr string, ws []*worker, perWorker int, killAfter int64, jitter time.Duration, rng *rand.Rand, kill func()) []error {
	t.Helper()
	var ackCount atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	onAck := func() {
		if killAfter > 0 && ackCount.Add(1) == killAfter {
			once.Do(func() { close(reached) })
		}
	}
	stop := make(chan struct{})
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	clients := make([]*ipc.Client, len(ws))
	for i, w := range ws {
		clients[i] = newClient(addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit := perWorker
			if killAfter > 0 {
				limit = 0
			}
			errs[i] = w.run(clients[i], stop, limit, onAck)
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	if killAfter > 0 {
		pause := time.Duration(rng.Int63n(int64(jitter) + 1))
		select {
		case <-reached:
			time.Sleep(pause)
			kill()
		case <-allDone:
			t.Errorf("every worker stopped before %d ops were acknowledged", killAfter)
		case <-time.After(60 * time.Second):
			t.Errorf("%d ops not acknowledged within 60s (%d were)", killAfter, ackCount.Load())
			kill()
		}
	}
	select {
	case <-allDone:
	case <-time.After(2 * callTimeout):
		close(stop)
		kill()
		<-allDone
		t.Fatalf("workers did not stop within %v", 2*callTimeout)
	}
	for _, c := range clients {
		c.Close()
	}
	return errs
}

// startRoller calls rollEdits (as the NameNode's own user, a superuser)
// every interval until the returned stop is called; stop returns how many
// rolls were answered with success. Failed calls are expected once the
// NameNode is killed and are not counted.
func startRoller(t *testing.T, addr string, interval time.Duration) (stop func() int) {
	t.Helper()
	c := newAdminClient(t, addr)
	quit := make(chan struct{})
	done := make(chan int)
	go func() {
		rolls := 0
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				done <- rolls
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			var resp hdfs.RollEditsResponseProto
			if c.Call(ctx, "rollEdits", &hdfs.RollEditsRequestProto{}, &resp) == nil {
				rolls++
			}
			cancel()
		}
	}()
	var once sync.Once
	rolls := 0
	stop = func() int {
		once.Do(func() {
			close(quit)
			rolls = <-done
			c.Close()
		})
		return rolls
	}
	t.Cleanup(func() { stop() })
	return stop
}

// newAdminClient is newClient as the user running the tests, which is the
// NameNode's user and so a superuser.
func newAdminClient(t *testing.T, addr string) *ipc.Client {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return ipc.NewClient(ipc.ClientConfig{
		Addresses: []string{addr}, User: u.Username,
		Protocol:    "org.apache.hadoop.hdfs.protocol.ClientProtocol",
		DialTimeout: 5 * time.Second, MaxRetries: -1,
	})
}
