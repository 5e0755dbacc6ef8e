package namenode_test

// The model-based test: thousands of random namespace operations, successful and
// failing, go both to a real NameNode (over RPC) and to a small reference model
// of HDFS's rules. After every batch the NameNode's namespace, walked through
// getListing/getFileInfo, must equal the model's; at random points the NameNode
// restarts — cleanly (edits only), after saveNamespace (image + edits), after a
// crash that keeps only what was synced, and after a crash with a torn record
// appended to the open segment — and its full namespace dump must equal the
// one it had before. Snapshot steps (allow/disallow, create, delete and
// rename snapshots) are mixed in; the model keeps a copy of the subtree per
// snapshot, and every snapshot's view through .snapshot paths must equal
// it at every check and after every restart. Extended attributes (user.
// namespace, CREATE/REPLACE flags), ACLs (a few fixed specs), trash moves
// as a client makes them, appends and truncates are mixed in too; the
// views compared include every inode's xattrs and ACL, in snapshots as
// well.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"net"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/clock"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// ---- the reference model ----

type mnode struct {
	dir          bool
	mode         uint16
	owner, group string
	repl         uint16
	uc           string // client holding the file open, "" when closed
	nsQuota      int64  // -1 unset
	// snapshottable directories: allowSnapshot was called; snaps are its
	// snapshots in creation order, each a copy of the subtree then.
	snapshottable bool
	snaps         []msnap
	// xattrs by name ("user.x0"); replaced, never changed in place, so
	// that a snapshot's copy of the node may share it.
	xattrs map[string]string
	// acl: the entries getAclStatus reports, as text ("" for none);
	// aclGroup is the owning group's entry's permission when acl is set.
	acl      string
	aclGroup uint16
}

// msnap is one snapshot in the model: the subtree's nodes when it was
// taken, by path relative to the snapshot root ("/" for the root).
type msnap struct {
	name  string
	nodes map[string]mnode
}

type model struct {
	nodes map[string]*mnode // by absolute path; "/" always present
	// ambiguous: the last step's quota check could not tell (below).
	ambiguous bool
	// beforeCheck, set by a step of two calls (moveToTrash: mkdirs, then
	// rename), is the model after its first call: what an ambiguous quota
	// check on the second takes the model back to; firstAmbiguous says the
	// first call's own quota check could not tell.
	beforeCheck    *model
	firstAmbiguous bool
}

// clone copies the model, so that a step can be taken back.
func (m *model) clone() *model {
	c := &model{nodes: make(map[string]*mnode, len(m.nodes))}
	for p, n := range m.nodes {
		x := *n
		x.snaps = append([]msnap(nil), n.snaps...)
		c.nodes[p] = &x
	}
	return c
}

// snapshotEntries bounds what only snapshots keep: every entry of every
// snapshot but its root. The NameNode counts, against the namespace
// quotas above them, the inodes that snapshots keep and the live tree
// lost (as HDFS does); the model, which knows inodes by path only, cannot
// tell a deleted inode from a renamed one, so it knows only that their
// number lies between 0 and this.
func (m *model) snapshotEntries() int {
	k := 0
	for _, n := range m.nodes {
		for _, s := range n.snaps {
			k += len(s.nodes) - 1
		}
	}
	return k
}

func newModel(super string) *model {
	return &model{nodes: map[string]*mnode{"/": {dir: true, mode: 0o755, owner: super, group: "supergroup", nsQuota: -1}}}
}

func parentOf(p string) string { return path.Dir(p) }

func (m *model) children(p string) []string {
	var out []string
	prefix := p + "/"
	if p == "/" {
		prefix = "/"
	}
	for q := range m.nodes {
		if q != "/" && strings.HasPrefix(q, prefix) && !strings.Contains(q[len(prefix):], "/") {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

func (m *model) subtree(p string) []string {
	var out []string
	for q := range m.nodes {
		if q == p || (p == "/" && q != "/") || strings.HasPrefix(q, p+"/") {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

// ancestors of p (not p itself), root first.
func ancestors(p string) []string {
	var out []string
	for q := parentOf(p); ; q = parentOf(q) {
		out = append([]string{q}, out...)
		if q == "/" {
			return out
		}
	}
}

// quotaOK reports whether adding k inodes below dir d (d included in the
// count's ancestors) fits every namespace quota on d and its ancestors,
// skipping the ancestors in skip (common ancestors of a rename). When
// what snapshots keep could decide it either way, it answers true and
// sets m.ambiguous: the step accepts either outcome.
func (m *model) quotaOK(d string, k int, skip map[string]bool) bool {
	if k <= 0 {
		return true // nothing consumed: quotas are not checked (even if already exceeded)
	}
	held := -1
	for _, a := range append(ancestors(d+"/x"), d)[0:] {
		if skip[a] {
			continue
		}
		n := m.nodes[a]
		if n == nil || n.nsQuota < 0 {
			continue
		}
		if int64(len(m.subtree(a))+k) > n.nsQuota {
			return false
		}
		if held < 0 {
			held = m.snapshotEntries()
		}
		if int64(len(m.subtree(a))+k+held) > n.nsQuota {
			m.ambiguous = true
		}
	}
	return true
}

// outcome classes compared between the model and the NameNode.
const (
	ok           = "ok"
	falseResult  = "false"
	notFound     = "notfound"
	exists       = "exists"
	beingCreated = "beingcreated"
	notEmpty     = "notempty"
	parentNotDir = "parentnotdir"
	quota        = "quota"
	ioError      = "ioerror"
	leaseErr     = "lease"
	permission   = "permission"
	otherErr     = "other"
	snapshotErr  = "snapshot"
)

func classify(err error) string {
	switch {
	case err == nil:
		return ok
	case errors.Is(err, remoteerr.ErrAlreadyBeingCreated):
		return beingCreated
	case errors.Is(err, fs.ErrNotExist):
		return notFound
	case errors.Is(err, syscall.ENOTEMPTY):
		return notEmpty
	case errors.Is(err, fs.ErrExist):
		return exists
	case errors.Is(err, remoteerr.ErrParentNotDirectory):
		return parentNotDir
	case errors.Is(err, remoteerr.ErrQuotaExceeded):
		return quota
	case errors.Is(err, remoteerr.ErrLeaseExpired):
		return leaseErr
	case errors.Is(err, fs.ErrPermission):
		return permission
	}
	var re *remoteerr.Error
	if errors.As(err, &re) && re.Class == "org.apache.hadoop.hdfs.protocol.SnapshotException" {
		return snapshotErr
	}
	if errors.As(err, &re) && re.Class == remoteerr.ClassIOException {
		return ioError
	}
	return otherErr
}

// resolveParent finds why a new path p cannot get a parent: notFound when a
// missing ancestor would be needed, parentNotDir when an ancestor is a file.
func (m *model) parentProblem(p string, createParent bool) (missing []string, class string) {
	for _, a := range ancestors(p) {
		n := m.nodes[a]
		if n == nil {
			if !createParent {
				return nil, notFound
			}
			missing = append(missing, a)
			continue
		}
		if !n.dir {
			return nil, parentNotDir
		}
	}
	return missing, ""
}

// throughFile reports whether resolving p meets a file before its last
// component. Hadoop reports that as ParentNotDirectoryException for calls
// that create the path and as AccessControlException for the others.
func (m *model) throughFile(p string) bool {
	for _, a := range ancestors(p) {
		n := m.nodes[a]
		if n == nil {
			return false
		}
		if !n.dir {
			return true
		}
	}
	return false
}

func (m *model) mkdirs(p string, mode uint16, createParent bool, user string) string {
	if n := m.nodes[p]; n != nil {
		if n.dir {
			return ok
		}
		return exists
	}
	missing, class := m.parentProblem(p, createParent)
	if class != "" {
		return class
	}
	all := append(missing, p)
	top := parentOf(all[0])
	if !m.quotaOK(top, len(all), nil) {
		return quota
	}
	for _, d := range all {
		md := mode
		if d != p {
			md = mode | 0o300
		}
		m.nodes[d] = &mnode{dir: true, mode: md, owner: user, group: m.nodes[parentOf(d)].group, nsQuota: -1}
	}
	return ok
}

func (m *model) create(p string, overwrite bool, client, user string) string {
	if n := m.nodes[p]; n != nil {
		if n.dir {
			return exists
		}
		if !overwrite {
			if n.uc != "" {
				return beingCreated
			}
			return exists
		}
		delete(m.nodes, p)
		m.nodes[p] = &mnode{mode: 0o644, owner: user, group: m.nodes[parentOf(p)].group, repl: 3, uc: client, nsQuota: -1}
		return ok
	}
	if _, class := m.parentProblem(p, false); class != "" {
		return class
	}
	if !m.quotaOK(parentOf(p), 1, nil) {
		return quota
	}
	m.nodes[p] = &mnode{mode: 0o644, owner: user, group: m.nodes[parentOf(p)].group, repl: 3, uc: client, nsQuota: -1}
	return ok
}

func (m *model) complete(p, client string) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	if !n.dir && n.uc == "" {
		// Already closed with the same (no) last block: Hadoop takes this
		// for a retried complete and answers true.
		return ok
	}
	if n.dir || n.uc != client {
		return leaseErr
	}
	n.uc = ""
	return ok
}

func (m *model) delete(p string, recursive bool) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil || p == "/" {
		return falseResult
	}
	if n.dir && !recursive && len(m.children(p)) > 0 {
		return notEmpty
	}
	for _, q := range m.subtree(p) {
		if len(m.nodes[q].snaps) > 0 {
			return snapshotErr
		}
	}
	for _, q := range m.subtree(p) {
		delete(m.nodes, q)
	}
	return ok
}

func isUnder(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func (m *model) rename2(src, dst string, overwrite bool) string {
	if m.throughFile(src) {
		return permission
	}
	if m.throughFile(dst) {
		return parentNotDir
	}
	s := m.nodes[src]
	if s == nil {
		return notFound
	}
	if src == dst {
		return exists
	}
	if src == "/" || isUnder(dst, src) {
		return ioError
	}
	if d := m.nodes[dst]; d != nil {
		// Hadoop's order: type mismatch, then the overwrite flag, then emptiness.
		if d.dir != s.dir {
			return ioError
		}
		if !overwrite {
			return exists
		}
		if d.dir && len(m.children(dst)) > 0 {
			return ioError
		}
		if len(d.snaps) > 0 {
			return snapshotErr
		}
	}
	if _, class := m.parentProblem(dst, false); class != "" {
		return class
	}
	// Quota: the moved inodes count against the destination's ancestors that
	// are not also ancestors of the source; an overwritten dst frees its slot.
	moved := m.subtree(src)
	k := len(moved)
	if m.nodes[dst] != nil {
		k--
	}
	common := map[string]bool{}
	for _, a := range ancestors(src) {
		if isUnder(dst, a) {
			common[a] = true
		}
	}
	if !m.quotaOK(parentOf(dst), k, common) {
		return quota
	}
	if m.nodes[dst] != nil {
		delete(m.nodes, dst)
	}
	for _, q := range moved {
		n := m.nodes[q]
		delete(m.nodes, q)
		m.nodes[dst+strings.TrimPrefix(q, src)] = n
	}
	return ok
}

func (m *model) setPermission(p string, mode uint16) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	n.mode = mode
	return ok
}

func (m *model) setOwner(p, user, group string) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	if user != "" {
		n.owner = user
	}
	if group != "" {
		n.group = group
	}
	return ok
}

func (m *model) setReplication(p string, r uint16) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil || n.dir {
		return falseResult
	}
	n.repl = r
	return ok
}

func (m *model) setQuota(p string, ns int64) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	if !n.dir {
		return otherErr
	}
	n.nsQuota = ns
	return ok
}

func (m *model) setTimes(p string) string {
	if m.throughFile(p) {
		return permission
	}
	if m.nodes[p] == nil {
		return notFound
	}
	return ok
}

// closedFile is the closed file at p for append and truncate, or the
// outcome when there is none.
func (m *model) closedFile(p string) (*mnode, string) {
	if m.throughFile(p) {
		return nil, permission
	}
	n := m.nodes[p]
	if n == nil || n.dir {
		return nil, notFound
	}
	if n.uc != "" {
		return nil, beingCreated
	}
	return n, ok
}

// append reopens a closed file (the model's files have no blocks).
func (m *model) append(p, client string) string {
	n, res := m.closedFile(p)
	if n != nil {
		n.uc = client
	}
	return res
}

// truncate to 0 of a file without blocks changes nothing.
func (m *model) truncate(p, client string) string {
	_, res := m.closedFile(p)
	return res
}

// setXAttr sets name to value with flag (1 CREATE, 2 REPLACE).
func (m *model) setXAttr(p, name, value string, flag uint32) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	_, exists := n.xattrs[name]
	if (exists && flag&2 == 0) || (!exists && flag&1 == 0) {
		return ioError
	}
	xs := map[string]string{name: value}
	for k, v := range n.xattrs {
		if k != name {
			xs[k] = v
		}
	}
	n.xattrs = xs
	return ok
}

func (m *model) removeXAttr(p, name string) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	if _, exists := n.xattrs[name]; !exists {
		return ioError
	}
	var xs map[string]string
	for k, v := range n.xattrs {
		if k != name {
			if xs == nil {
				xs = map[string]string{}
			}
			xs[k] = v
		}
	}
	n.xattrs = xs
	return ok
}

// aclSpec is one of the fixed ACLs the test sets: the spec sent, the
// permission bits it gives (mask in the group bits), the entries
// getAclStatus then reports, and the owning group's permission.
type aclSpec struct {
	spec    []*hdfs.AclEntryProto
	bits    uint16
	entries string
	group   uint16
}

func aclEntry(typ hdfs.AclEntryProto_AclEntryTypeProto, name string, perm hdfs.AclEntryProto_FsActionProto) *hdfs.AclEntryProto {
	e := &hdfs.AclEntryProto{Type: typ.Enum(), Scope: hdfs.AclEntryProto_ACCESS.Enum(), Permissions: perm.Enum()}
	if name != "" {
		e.Name = proto.String(name)
	}
	return e
}

var aclSpecs = []aclSpec{
	{ // minimal: only the permission bits
		spec: []*hdfs.AclEntryProto{aclEntry(hdfs.AclEntryProto_USER, "", 7), aclEntry(hdfs.AclEntryProto_GROUP, "", 5), aclEntry(hdfs.AclEntryProto_OTHER, "", 0)},
		bits: 0o750,
	},
	{ // a named user and a mask
		spec: []*hdfs.AclEntryProto{aclEntry(hdfs.AclEntryProto_USER, "", 6), aclEntry(hdfs.AclEntryProto_USER, "alice", 4),
			aclEntry(hdfs.AclEntryProto_GROUP, "", 4), aclEntry(hdfs.AclEntryProto_MASK, "", 4), aclEntry(hdfs.AclEntryProto_OTHER, "", 0)},
		bits: 0o640, entries: "user:alice:r--,group::r--", group: 4,
	},
	{ // a named group, the mask computed
		spec: []*hdfs.AclEntryProto{aclEntry(hdfs.AclEntryProto_USER, "", 7), aclEntry(hdfs.AclEntryProto_GROUP, "staff", 7),
			aclEntry(hdfs.AclEntryProto_GROUP, "", 5), aclEntry(hdfs.AclEntryProto_OTHER, "", 5)},
		bits: 0o775, entries: "group::r-x,group:staff:rwx", group: 5,
	},
}

func (m *model) setACL(p string, a aclSpec) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	n.mode = n.mode&0o7000 | a.bits
	n.acl, n.aclGroup = a.entries, a.group
	return ok
}

// removeACL drops the entries; the group bits become the owning group's.
func (m *model) removeACL(p string) string {
	if m.throughFile(p) {
		return permission
	}
	n := m.nodes[p]
	if n == nil {
		return notFound
	}
	if n.acl != "" {
		n.mode = n.mode&^0o070 | n.aclGroup<<3
	}
	n.acl, n.aclGroup = "", 0
	return ok
}

// trashDir is where a client moves p to trash: the current checkpoint
// under the user's trash, with p's parent path below it.
func trashDir(super, p string) string {
	return path.Join("/user", super, ".Trash/Current", parentOf(p))
}

// moveToTrash does what a client's -rm does with trash on: mkdirs of the
// trash directory, then a rename into it (with a suffix when the name is
// taken there, as the client adds a time).
func (m *model) moveToTrash(p, super, suffix string) string {
	if m.nodes[p] == nil || m.throughFile(p) {
		return "missing"
	}
	dir := trashDir(super, p)
	if got := m.mkdirs(dir, 0o700, true, super); got != ok {
		return "mkdirs " + got
	}
	m.firstAmbiguous, m.ambiguous = m.ambiguous, false
	dst := path.Join(dir, path.Base(p))
	if m.nodes[dst] != nil {
		dst += suffix
	}
	m.beforeCheck = m.clone()
	return "rename " + m.rename2(p, dst, false)
}

// snapDir resolves the directory of a snapshot call as the NameNode does.
func (m *model) snapDir(p string) (*mnode, string) {
	if m.throughFile(p) {
		return nil, permission
	}
	n := m.nodes[p]
	if n == nil {
		return nil, notFound
	}
	return n, ""
}

func (m *model) allowSnapshot(p string) string {
	n, class := m.snapDir(p)
	if class != "" {
		return class
	}
	if !n.dir {
		return otherErr
	}
	if n.snapshottable {
		return ok
	}
	for q, x := range m.nodes {
		if x.snapshottable && (isUnder(p, q) || isUnder(q, p)) {
			return snapshotErr // nested
		}
	}
	n.snapshottable = true
	return ok
}

func (m *model) disallowSnapshot(p string) string {
	n, class := m.snapDir(p)
	if class != "" {
		return class
	}
	if !n.dir {
		return otherErr
	}
	if !n.snapshottable || len(n.snaps) > 0 {
		return snapshotErr
	}
	n.snapshottable = false
	return ok
}

func (n *mnode) snapIndex(name string) int {
	for i, s := range n.snaps {
		if s.name == name {
			return i
		}
	}
	return -1
}

func (m *model) createSnapshot(p, name string) string {
	n, class := m.snapDir(p)
	if class != "" {
		return class
	}
	if !n.dir || !n.snapshottable || n.snapIndex(name) >= 0 {
		return snapshotErr
	}
	s := msnap{name: name, nodes: map[string]mnode{}}
	for _, q := range m.subtree(p) {
		c := *m.nodes[q]
		c.uc, c.snaps = "", nil
		rel := strings.TrimPrefix(q, p)
		if p == "/" {
			rel = q
		}
		if rel == "" {
			rel = "/"
		}
		s.nodes[rel] = c
	}
	n.snaps = append(n.snaps, s)
	return ok
}

func (m *model) deleteSnapshot(p, name string) string {
	n, class := m.snapDir(p)
	if class != "" {
		return class
	}
	if !n.dir || !n.snapshottable {
		return snapshotErr
	}
	i := n.snapIndex(name)
	if i < 0 {
		return snapshotErr
	}
	n.snaps = append(n.snaps[:i], n.snaps[i+1:]...)
	return ok
}

func (m *model) renameSnapshot(p, from, to string) string {
	n, class := m.snapDir(p)
	if class != "" {
		return class
	}
	if !n.dir || !n.snapshottable {
		return snapshotErr
	}
	i := n.snapIndex(from)
	if i < 0 {
		return snapshotErr
	}
	if from == to {
		return ok
	}
	if n.snapIndex(to) >= 0 {
		return snapshotErr
	}
	n.snaps[i].name = to
	return ok
}

// snapDump lists a model snapshot as walkAt lists the NameNode's.
func (s msnap) dump() string {
	var lines []string
	for p, n := range s.nodes {
		lines = append(lines, fmt.Sprintf("%s %s", p, n.describe(false)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// quotaDump lists every inode with its namespace usage and quota.
func (m *model) quotaDump() string {
	var b strings.Builder
	var paths []string
	for p := range m.nodes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		n := m.nodes[p]
		fmt.Fprintf(&b, "%s dir=%v usage=%d nsQuota=%d\n", p, n.dir, len(m.subtree(p)), n.nsQuota)
	}
	return b.String()
}

// dump lists every inode as the NameNode's RPC view shows it.
func (m *model) dump() string {
	var b strings.Builder
	var paths []string
	for p := range m.nodes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		n := m.nodes[p]
		fmt.Fprintf(&b, "%s %s\n", p, n.describe(n.uc != ""))
	}
	return b.String()
}

func describe(dir bool, mode uint16, owner, group string, repl uint16, open bool, xattrs, acl string) string {
	if dir {
		return fmt.Sprintf("d %04o %s:%s xattrs=[%s] acl=[%s]", mode, owner, group, xattrs, acl)
	}
	return fmt.Sprintf("f %04o %s:%s r%d open=%v xattrs=[%s] acl=[%s]", mode, owner, group, repl, open, xattrs, acl)
}

// xattrText lists xattrs as "name=value" sorted by name.
func xattrText(xs map[string]string) string {
	var out []string
	for k, v := range xs {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (n *mnode) describe(open bool) string {
	return describe(n.dir, n.mode, n.owner, n.group, n.repl, open, xattrText(n.xattrs), n.acl)
}

// ---- driving the NameNode ----

type harness struct {
	t     *testing.T
	cfg   namenode.Config
	fsys  *vfs.MemFS
	clk   *clock.Manual
	nn    *namenode.NameNode
	rpc   *ipc.Client
	super string
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, fsys: vfs.NewMem(), clk: clock.NewManual(time.Unix(1_700_000_000, 0))}
	cfg, err := namenode.ConfigFrom(conf.Defaults().With(
		conf.KeyValue{Key: conf.DFSNameNodeNameDir, Value: "/nn/name1,/nn/name2"},
		conf.KeyValue{Key: conf.DFSNameNodeRPCAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSNameNodeHTTPAddress, Value: "127.0.0.1:0"},
		conf.KeyValue{Key: conf.DFSListLimit, Value: "7"}, // exercise paging
		// The model has no clock: leases must not expire during the run.
		conf.KeyValue{Key: conf.DFSNameNodeLeaseHardLimit, Value: "1000000000"},
	))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Testing.LeaseSoftLimit = 1 << 58 // below the hard limit
	h.cfg = cfg
	h.super = cfg.SuperUser
	if err := namenode.Format(context.Background(), cfg, h.deps(nil), namenode.FormatOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	h.start()
	t.Cleanup(h.stop)
	return h
}

func (h *harness) deps(l net.Listener) namenode.Deps {
	return namenode.Deps{FS: h.fsys, Clock: h.clk, Logger: quietLogger(), Listener: l}
}

func (h *harness) start() {
	h.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	nn, err := namenode.Start(context.Background(), h.cfg, h.deps(l))
	if err != nil {
		l.Close()
		h.t.Fatalf("restart: %v", err)
	}
	h.nn = nn
	h.rpc = ipc.NewClient(ipc.ClientConfig{Addresses: []string{nn.RPCAddr().String()}, User: h.super, Protocol: namenode.ClientProtocolName})
}

func (h *harness) stop() {
	if h.rpc != nil {
		h.rpc.Close()
		h.rpc = nil
	}
	if h.nn != nil {
		h.nn.Close()
		h.nn = nil
	}
}

func (h *harness) call(method string, req, resp proto.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.rpc.Call(ctx, method, req, resp)
}

func (h *harness) dumpFull() string {
	var b bytes.Buffer
	if err := h.nn.DumpNamespace(&b); err != nil {
		h.t.Fatal(err)
	}
	return b.String()
}

// attrsOf reads p's xattrs (listXAttrs) and ACL entries (getAclStatus)
// as the model writes them.
func (h *harness) attrsOf(p string) (string, string) {
	var ls hdfs.ListXAttrsResponseProto
	if err := h.call("listXAttrs", &hdfs.ListXAttrsRequestProto{Src: proto.String(p)}, &ls); err != nil {
		h.t.Fatalf("listXAttrs %s: %v", p, err)
	}
	xs := map[string]string{}
	for _, x := range ls.GetXAttrs() {
		if x.GetNamespace() != hdfs.XAttrProto_USER {
			h.t.Fatalf("listXAttrs %s: namespace %v", p, x.GetNamespace())
		}
		xs["user."+x.GetName()] = string(x.GetValue())
	}
	var st hdfs.GetAclStatusResponseProto
	if err := h.call("getAclStatus", &hdfs.GetAclStatusRequestProto{Src: proto.String(p)}, &st); err != nil {
		h.t.Fatalf("getAclStatus %s: %v", p, err)
	}
	var es []string
	for _, e := range st.GetResult().GetEntries() {
		es = append(es, aclEntryText(e))
	}
	return xattrText(xs), strings.Join(es, ",")
}

func aclEntryText(e *hdfs.AclEntryProto) string {
	var b strings.Builder
	if e.GetScope() == hdfs.AclEntryProto_DEFAULT {
		b.WriteString("default:")
	}
	b.WriteString([]string{"user", "group", "mask", "other"}[e.GetType()])
	b.WriteString(":" + e.GetName() + ":")
	for i, c := range "rwx" {
		if int(e.GetPermissions())&(4>>i) != 0 {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// walk lists the namespace through getFileInfo and paged getListing.
func (h *harness) walk() string { return h.walkAt("/") }

// walkAt lists the tree at root, with paths relative to it ("/" for root).
func (h *harness) walkAt(root string) string {
	var b strings.Builder
	var visit func(p string)
	visit = func(p string) {
		var fi hdfs.GetFileInfoResponseProto
		if err := h.call("getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(p)}, &fi); err != nil {
			h.t.Fatalf("getFileInfo %s: %v", p, err)
		}
		st := fi.GetFs()
		dir := st.GetFileType() == hdfs.HdfsFileStatusProto_IS_DIR
		var open hdfs.IsFileClosedResponseProto
		isOpen := false
		if !dir {
			if err := h.call("isFileClosed", &hdfs.IsFileClosedRequestProto{Src: proto.String(p)}, &open); err != nil {
				h.t.Fatalf("isFileClosed %s: %v", p, err)
			}
			isOpen = !open.GetResult()
		}
		rel := p
		if root != "/" {
			rel = strings.TrimPrefix(p, root)
			if rel == "" {
				rel = "/"
			}
		}
		xattrs, acl := h.attrsOf(p)
		fmt.Fprintf(&b, "%s %s\n", rel, describe(dir, uint16(st.GetPermission().GetPerm()), st.GetOwner(), st.GetGroup(), uint16(st.GetBlockReplication()), isOpen, xattrs, acl))
		if !dir {
			return
		}
		after := []byte{}
		for i := 0; i < 1000; i++ {
			var ls hdfs.GetListingResponseProto
			if err := h.call("getListing", &hdfs.GetListingRequestProto{Src: proto.String(p), StartAfter: after, NeedLocation: proto.Bool(false)}, &ls); err != nil {
				h.t.Fatalf("getListing %s: %v", p, err)
			}
			for _, c := range ls.GetDirList().GetPartialListing() {
				visit(path.Join(p, string(c.GetPath())))
				after = c.GetPath()
			}
			if ls.GetDirList().GetRemainingEntries() == 0 {
				return
			}
		}
		h.t.Fatalf("listing of %s did not end", p)
	}
	visit(root)
	// The walk visits in listing order (byte order of names), which is not
	// the byte order of whole paths: sort to compare with the model.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// ---- random operations ----

var names = []string{"a", "b", "c", "d"}

func randPath(r *rand.Rand) string {
	depth := 1 + r.Intn(3)
	p := ""
	for i := 0; i < depth; i++ {
		p += "/" + names[r.Intn(len(names))]
	}
	return p
}

type step struct {
	desc  string
	model func(m *model) string
	nn    func(h *harness) string
}

func boolResult(ok bool, err error) string {
	if err != nil {
		return classify(err)
	}
	if !ok {
		return falseResult
	}
	return "ok"
}

func randomStep(r *rand.Rand, super string) step {
	p, q := randPath(r), randPath(r)
	mode := uint16(r.Intn(0o1000))
	client := fmt.Sprintf("client-%d", r.Intn(2))
	switch r.Intn(22) {
	case 17, 18:
		name := fmt.Sprintf("user.x%d", r.Intn(3))
		if r.Intn(3) == 0 {
			return step{fmt.Sprintf("removeXAttr %s %s", p, name),
				func(m *model) string { return m.removeXAttr(p, name) },
				func(h *harness) string {
					return classify(h.call("removeXAttr", &hdfs.RemoveXAttrRequestProto{Src: proto.String(p),
						XAttr: &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_USER.Enum(), Name: proto.String(strings.TrimPrefix(name, "user."))}},
						&hdfs.RemoveXAttrResponseProto{}))
				}}
		}
		value := []string{"", "v1", "v2"}[r.Intn(3)]
		flag := uint32(1 + r.Intn(3))
		return step{fmt.Sprintf("setXAttr %s %s=%q flag=%d", p, name, value, flag),
			func(m *model) string { return m.setXAttr(p, name, value, flag) },
			func(h *harness) string {
				return classify(h.call("setXAttr", &hdfs.SetXAttrRequestProto{Src: proto.String(p),
					XAttr: &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_USER.Enum(), Name: proto.String(strings.TrimPrefix(name, "user.")), Value: []byte(value)},
					Flag:  proto.Uint32(flag)}, &hdfs.SetXAttrResponseProto{}))
			}}
	case 19:
		if r.Intn(3) == 0 {
			return step{"removeAcl " + p,
				func(m *model) string { return m.removeACL(p) },
				func(h *harness) string {
					return classify(h.call("removeAcl", &hdfs.RemoveAclRequestProto{Src: proto.String(p)}, &hdfs.RemoveAclResponseProto{}))
				}}
		}
		k := r.Intn(len(aclSpecs))
		return step{fmt.Sprintf("setAcl %s spec %d", p, k),
			func(m *model) string { return m.setACL(p, aclSpecs[k]) },
			func(h *harness) string {
				return classify(h.call("setAcl", &hdfs.SetAclRequestProto{Src: proto.String(p), AclSpec: aclSpecs[k].spec}, &hdfs.SetAclResponseProto{}))
			}}
	case 20:
		suffix := fmt.Sprint(r.Intn(1 << 30))
		return step{"moveToTrash " + p,
			func(m *model) string { return m.moveToTrash(p, super, suffix) },
			func(h *harness) string { return h.moveToTrash(p, suffix) }}
	case 21:
		return step{fmt.Sprintf("append and complete %s %s", p, client),
			func(m *model) string {
				if got := m.append(p, client); got != ok {
					return got
				}
				return m.complete(p, client)
			},
			func(h *harness) string {
				if got := classify(h.call("append", &hdfs.AppendRequestProto{Src: proto.String(p), ClientName: proto.String(client)}, &hdfs.AppendResponseProto{})); got != ok {
					return got
				}
				var resp hdfs.CompleteResponseProto
				err := h.call("complete", &hdfs.CompleteRequestProto{Src: proto.String(p), ClientName: proto.String(client)}, &resp)
				return boolResult(resp.GetResult(), err)
			}}
	case 12, 13, 14:
		return randomSnapshotStep(r)
	case 15:
		return step{fmt.Sprintf("append %s %s", p, client),
			func(m *model) string { return m.append(p, client) },
			func(h *harness) string {
				return classify(h.call("append", &hdfs.AppendRequestProto{Src: proto.String(p), ClientName: proto.String(client)}, &hdfs.AppendResponseProto{}))
			}}
	case 16:
		return step{fmt.Sprintf("truncate %s 0 %s", p, client),
			func(m *model) string { return m.truncate(p, client) },
			func(h *harness) string {
				var resp hdfs.TruncateResponseProto
				err := h.call("truncate", &hdfs.TruncateRequestProto{Src: proto.String(p), NewLength: proto.Uint64(0), ClientName: proto.String(client)}, &resp)
				return boolResult(resp.GetResult(), err)
			}}
	case 0, 1:
		cp := r.Intn(2) == 0
		return step{fmt.Sprintf("mkdirs %s %04o createParent=%v", p, mode, cp),
			func(m *model) string { return m.mkdirs(p, mode, cp, super) },
			func(h *harness) string {
				err := h.call("mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(p), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(mode) | 0x80000000)}, CreateParent: proto.Bool(cp)}, &hdfs.MkdirsResponseProto{})
				return classify(err)
			}}
	case 2, 3:
		ow := r.Intn(4) == 0
		return step{fmt.Sprintf("create %s overwrite=%v %s", p, ow, client),
			func(m *model) string { return m.create(p, ow, client, super) },
			func(h *harness) string {
				flag := uint32(1)
				if ow {
					flag |= 2
				}
				err := h.call("create", &hdfs.CreateRequestProto{Src: proto.String(p), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
					ClientName: proto.String(client), CreateFlag: proto.Uint32(flag), CreateParent: proto.Bool(false),
					Replication: proto.Uint32(3), BlockSize: proto.Uint64(134217728)}, &hdfs.CreateResponseProto{})
				if os.Getenv("HDFSGO_MODEL_DEBUG") != "" && err != nil {
					h.t.Logf("create %s: %v", p, err)
				}
				return classify(err)
			}}
	case 4:
		return step{fmt.Sprintf("complete %s %s", p, client),
			func(m *model) string { return m.complete(p, client) },
			func(h *harness) string {
				var resp hdfs.CompleteResponseProto
				err := h.call("complete", &hdfs.CompleteRequestProto{Src: proto.String(p), ClientName: proto.String(client)}, &resp)
				return boolResult(resp.GetResult(), err)
			}}
	case 5:
		rec := r.Intn(2) == 0
		return step{fmt.Sprintf("delete %s recursive=%v", p, rec),
			func(m *model) string { return m.delete(p, rec) },
			func(h *harness) string {
				var resp hdfs.DeleteResponseProto
				err := h.call("delete", &hdfs.DeleteRequestProto{Src: proto.String(p), Recursive: proto.Bool(rec)}, &resp)
				return boolResult(resp.GetResult(), err)
			}}
	case 6, 7:
		ow := r.Intn(2) == 0
		return step{fmt.Sprintf("rename2 %s %s overwrite=%v", p, q, ow),
			func(m *model) string { return m.rename2(p, q, ow) },
			func(h *harness) string {
				err := h.call("rename2", &hdfs.Rename2RequestProto{Src: proto.String(p), Dst: proto.String(q), OverwriteDest: proto.Bool(ow)}, &hdfs.Rename2ResponseProto{})
				return classify(err)
			}}
	case 8:
		return step{fmt.Sprintf("setPermission %s %04o", p, mode),
			func(m *model) string { return m.setPermission(p, mode) },
			func(h *harness) string {
				return classify(h.call("setPermission", &hdfs.SetPermissionRequestProto{Src: proto.String(p), Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(uint32(mode))}}, &hdfs.SetPermissionResponseProto{}))
			}}
	case 9:
		u, g := []string{"", "alice", "bob"}[r.Intn(3)], []string{"", "staff", "wheel"}[r.Intn(3)]
		if u == "" && g == "" {
			u = "carol"
		}
		return step{fmt.Sprintf("setOwner %s %q %q", p, u, g),
			func(m *model) string { return m.setOwner(p, u, g) },
			func(h *harness) string {
				return classify(h.call("setOwner", &hdfs.SetOwnerRequestProto{Src: proto.String(p), Username: proto.String(u), Groupname: proto.String(g)}, &hdfs.SetOwnerResponseProto{}))
			}}
	case 10:
		if r.Intn(2) == 0 {
			rep := uint16(1 + r.Intn(5))
			return step{fmt.Sprintf("setReplication %s %d", p, rep),
				func(m *model) string { return m.setReplication(p, rep) },
				func(h *harness) string {
					var resp hdfs.SetReplicationResponseProto
					err := h.call("setReplication", &hdfs.SetReplicationRequestProto{Src: proto.String(p), Replication: proto.Uint32(uint32(rep))}, &resp)
					return boolResult(resp.GetResult(), err)
				}}
		}
		ns := int64(2 + r.Intn(6))
		if r.Intn(3) == 0 {
			ns = -1 // clear
		}
		return step{fmt.Sprintf("setQuota %s ns=%d", p, ns),
			func(m *model) string { return m.setQuota(p, ns) },
			func(h *harness) string {
				return classify(h.call("setQuota", &hdfs.SetQuotaRequestProto{Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(ns)),
					StoragespaceQuota: proto.Uint64(uint64(1<<63 - 1))}, &hdfs.SetQuotaResponseProto{}))
			}}
	default:
		return step{fmt.Sprintf("setTimes %s", p),
			func(m *model) string { return m.setTimes(p) },
			func(h *harness) string {
				return classify(h.call("setTimes", &hdfs.SetTimesRequestProto{Src: proto.String(p), Mtime: proto.Uint64(uint64(r.Int63n(1 << 40))), Atime: proto.Uint64(1 << 40)}, &hdfs.SetTimesResponseProto{}))
			}}
	}
}

// moveToTrash moves p to trash as a client does: it stats p, makes the
// trash directory and renames p into it.
func (h *harness) moveToTrash(p, suffix string) string {
	var fi hdfs.GetFileInfoResponseProto
	if err := h.call("getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(p)}, &fi); err != nil || fi.GetFs() == nil {
		return "missing"
	}
	dir := trashDir(h.super, p)
	err := h.call("mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(dir), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o700)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{})
	if got := classify(err); got != ok {
		return "mkdirs " + got
	}
	dst := path.Join(dir, path.Base(p))
	if err := h.call("getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(dst)}, &fi); err == nil && fi.GetFs() != nil {
		dst += suffix
	}
	err = h.call("rename2", &hdfs.Rename2RequestProto{Src: proto.String(p), Dst: proto.String(dst), OverwriteDest: proto.Bool(false)}, &hdfs.Rename2ResponseProto{})
	if err != nil && os.Getenv("HDFSGO_MODEL_DEBUG") != "" {
		h.t.Logf("rename %s %s: %v", p, dst, err)
	}
	return "rename " + classify(err)
}

// randomSnapshotStep allows or disallows snapshots on a directory, or
// creates, deletes or renames one of its snapshots.
func randomSnapshotStep(r *rand.Rand) step {
	p := "/" + names[r.Intn(len(names))]
	if r.Intn(3) == 0 {
		p = randPath(r)
	}
	name, other := fmt.Sprint("s", r.Intn(3)), fmt.Sprint("s", r.Intn(3))
	call := func(h *harness, method string, req, resp proto.Message) string {
		return classify(h.call(method, req, resp))
	}
	switch r.Intn(6) {
	case 0:
		return step{"allowSnapshot " + p, func(m *model) string { return m.allowSnapshot(p) },
			func(h *harness) string {
				return call(h, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String(p)}, &hdfs.AllowSnapshotResponseProto{})
			}}
	case 1:
		return step{"disallowSnapshot " + p, func(m *model) string { return m.disallowSnapshot(p) },
			func(h *harness) string {
				return call(h, "disallowSnapshot", &hdfs.DisallowSnapshotRequestProto{SnapshotRoot: proto.String(p)}, &hdfs.DisallowSnapshotResponseProto{})
			}}
	case 2, 3:
		return step{"createSnapshot " + p + " " + name, func(m *model) string { return m.createSnapshot(p, name) },
			func(h *harness) string {
				var resp hdfs.CreateSnapshotResponseProto
				got := call(h, "createSnapshot", &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotName: proto.String(name)}, &resp)
				if got == ok && resp.GetSnapshotPath() != path.Join(p, ".snapshot", name) {
					return "path " + resp.GetSnapshotPath()
				}
				return got
			}}
	case 4:
		return step{"deleteSnapshot " + p + " " + name, func(m *model) string { return m.deleteSnapshot(p, name) },
			func(h *harness) string {
				return call(h, "deleteSnapshot", &hdfs.DeleteSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotName: proto.String(name)}, &hdfs.DeleteSnapshotResponseProto{})
			}}
	default:
		return step{"renameSnapshot " + p + " " + name + " " + other, func(m *model) string { return m.renameSnapshot(p, name, other) },
			func(h *harness) string {
				return call(h, "renameSnapshot", &hdfs.RenameSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotOldName: proto.String(name),
					SnapshotNewName: proto.String(other)}, &hdfs.RenameSnapshotResponseProto{})
			}}
	}
}

// checkSnapshots compares every snapshot the model has with the
// NameNode's view of it through .snapshot paths; it returns how many.
func (h *harness) checkSnapshots(m *model, when string) int {
	h.t.Helper()
	n := 0
	for p, x := range m.nodes {
		for _, s := range x.snaps {
			n++
			if got, want := h.walkAt(path.Join(p, ".snapshot", s.name)), s.dump(); got != want {
				h.t.Fatalf("%s: snapshot %s of %s differs from the model\nNameNode:\n%s\nmodel:\n%s", when, s.name, p, got, want)
			}
		}
	}
	return n
}

// ---- restarts ----

func (h *harness) restartClean() {
	h.stop()
	h.start()
}

func (h *harness) restartAfterSave() {
	for _, a := range []hdfs.SafeModeActionProto{hdfs.SafeModeActionProto_SAFEMODE_ENTER} {
		if err := h.call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := h.call("saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{}); err != nil {
		h.t.Fatal(err)
	}
	if err := h.call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: hdfs.SafeModeActionProto_SAFEMODE_LEAVE.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
		h.t.Fatal(err)
	}
	h.restartClean()
}

// restartAfterCrash keeps only what was synced; with torn, a partial record is
// appended to every in-progress segment, as a crash in mid-write leaves.
func (h *harness) restartAfterCrash(torn bool) {
	clone := h.fsys.CrashClone()
	h.stop() // the old NameNode writes to the old file system only
	h.fsys = clone
	if torn {
		for _, d := range []string{"/nn/name1/current", "/nn/name2/current"} {
			names, err := clone.List(d)
			if err != nil {
				h.t.Fatal(err)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "edits_inprogress_") {
					continue
				}
				f, err := clone.OpenReadWrite(filepath.Join(d, n))
				if err != nil {
					h.t.Fatal(err)
				}
				// Where the next write would have gone: after the last
				// whole record, inside the segment's zero fill.
				if _, err := f.Seek(recordsEnd(h.t, f, n), 0); err != nil {
					h.t.Fatal(err)
				}
				f.Write([]byte{0x03, 0, 0, 0, 0, 0, 0, 0x7f}) // an opcode and half a txid
				f.Sync()
				f.Close()
			}
		}
	}
	h.start()
}

// recordsEnd returns the offset just past the last whole record of the
// edit segment f.
func recordsEnd(t testing.TB, f vfs.File, name string) int64 {
	t.Helper()
	version, err := editlog.ReadSegmentHeader(f, name)
	if err != nil {
		return 0
	}
	dec := editlog.NewDecoder(f, name, editlog.SegmentHeaderSize, version)
	for range 1 << 24 {
		if _, _, err := dec.Next(); err != nil {
			break
		}
	}
	return dec.Offset()
}

func TestModelWithRestarts(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("HDFSGO_MODEL_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (set HDFSGO_MODEL_SEED to replay)", seed)
	r := rand.New(rand.NewSource(seed))
	steps := 5000
	if testing.Short() {
		steps = 600
	}
	h := newHarness(t)
	m := newModel(h.super)
	restarts := map[string]int{}
	succeeded := map[string]int{} // successful steps by kind
	snapsChecked := 0
	for i := 0; i < steps; i++ {
		s := randomStep(r, h.super)
		before := m.clone()
		m.ambiguous, m.beforeCheck, m.firstAmbiguous = false, nil, false
		want := s.model(m)
		got := s.nn(h)
		h.clk.Advance(time.Second)
		switch {
		case got == want || !strings.HasSuffix(got, quota):
		case m.firstAmbiguous && got == "mkdirs "+quota:
			m, want = before, got // what snapshots keep decided the first call
		case m.ambiguous && strings.TrimSuffix(got, quota) == strings.TrimSuffix(want, ok):
			// What snapshots keep decided it: the step's quota-checked
			// call did nothing (a call before it in the step did its part).
			if m.beforeCheck != nil {
				before = m.beforeCheck
			}
			m, want = before, got
		}
		if got != want {
			t.Fatalf("step %d: %s: NameNode says %s, model says %s\nmodel after the step's effect:\n%s", i, s.desc, got, want, m.quotaDump())
		}
		if got == ok || got == "rename ok" {
			succeeded[strings.Fields(s.desc)[0]]++
		}
		if i%100 == 99 {
			if got, want := h.walk(), m.dump(); got != want {
				t.Fatalf("step %d: namespace differs from the model\nNameNode:\n%s\nmodel:\n%s", i, got, want)
			}
			snapsChecked += h.checkSnapshots(m, fmt.Sprintf("step %d", i))
		}
		if i%150 == 149 {
			before := h.dumpFull()
			kind := []string{"clean", "saveNamespace", "crash", "torn"}[r.Intn(4)]
			switch kind {
			case "clean":
				h.restartClean()
			case "saveNamespace":
				h.restartAfterSave()
			case "crash":
				h.restartAfterCrash(false)
			case "torn":
				h.restartAfterCrash(true)
			}
			restarts[kind]++
			if after := h.dumpFull(); after != before {
				t.Fatalf("step %d: namespace changed across a %s restart\nbefore:\n%s\nafter:\n%s", i, kind, before, after)
			}
			snapsChecked += h.checkSnapshots(m, fmt.Sprintf("step %d, after a %s restart", i, kind))
		}
	}
	t.Logf("restarts: %v; snapshot views checked: %d; successful steps: %v", restarts, snapsChecked, succeeded)
	if got, want := h.walk(), m.dump(); got != want {
		t.Fatalf("final namespace differs from the model\nNameNode:\n%s\nmodel:\n%s", got, want)
	}
}
