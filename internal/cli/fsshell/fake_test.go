package fsshell

import (
	"context"
	"fmt"
	"net"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// fakeNN is an in-memory namespace answering the ClientProtocol calls the
// shell makes, with HDFS's semantics for the cases the tests exercise. It
// is served over a real ipc.Server on the loopback interface.
type fakeNN struct {
	mu struct {
		sync.Mutex
		root   *node
		nextID uint64
		calls  []string // "method src" of every call, in order
	}
	pageSize int    // getListing batch size
	nowMs    uint64 // time stamped on new inodes
	trash    uint64 // server trash interval, minutes
}

type node struct {
	dir          bool
	perm         uint32
	owner, group string
	mtime, atime uint64
	length       uint64
	repl         uint32
	id           uint64
	quota, squot int64
	kids         map[string]*node
}

const superuser = "hdfs"

func newFakeNN(nowMs uint64) *fakeNN {
	nn := &fakeNN{pageSize: 2, nowMs: nowMs}
	nn.mu.root = &node{dir: true, perm: 0o755, owner: superuser, group: "supergroup", mtime: nowMs, atime: nowMs,
		kids: map[string]*node{}, quota: -1, squot: -1}
	nn.mu.nextID = 16386
	return nn
}

// add creates p and missing parents (as alice:supergroup 0755 dirs).
func (nn *fakeNN) add(p string, n *node) *node {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	parent := nn.mu.root
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for _, name := range parts[:len(parts)-1] {
		k := parent.kids[name]
		if k == nil {
			k = nn.newNodeLocked(true, 0o755, "alice", "supergroup")
			parent.kids[name] = k
		}
		parent = k
	}
	if n.dir && n.kids == nil {
		n.kids = map[string]*node{}
	}
	if n.id == 0 {
		nn.mu.nextID++
		n.id = nn.mu.nextID
	}
	if n.mtime == 0 {
		n.mtime, n.atime = nn.nowMs, nn.nowMs
	}
	if n.quota == 0 {
		n.quota = -1
	}
	if n.squot == 0 {
		n.squot = -1
	}
	parent.kids[parts[len(parts)-1]] = n
	return n
}

func (nn *fakeNN) newNodeLocked(dir bool, perm uint32, owner, group string) *node {
	nn.mu.nextID++
	n := &node{dir: dir, perm: perm, owner: owner, group: group, mtime: nn.nowMs, atime: nn.nowMs, id: nn.mu.nextID, quota: -1, squot: -1}
	if dir {
		n.kids = map[string]*node{}
	} else {
		n.repl = 3
	}
	return n
}

func (nn *fakeNN) calls() []string {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return append([]string(nil), nn.mu.calls...)
}

func (nn *fakeNN) node(p string) *node {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, _ := nn.lookupLocked("", p)
	return n
}

func split(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// lookupLocked walks p as user; a 0700 directory of another owner cannot
// be traversed. A missing path gives nil, nil.
func (nn *fakeNN) lookupLocked(user, p string) (*node, error) {
	n := nn.mu.root
	walked := ""
	for _, name := range split(p) {
		if user != "" && user != superuser && n.owner != user && n.perm&0o001 == 0 {
			return nil, remoteerr.AccessControl(fmt.Sprintf(
				"Permission denied: user=%s, access=EXECUTE, inode=\"%s\":%s:%s:d%s", user, orRoot(walked), n.owner, n.group, permString(uint16(n.perm))))
		}
		if !n.dir {
			return nil, nil
		}
		n = n.kids[name]
		walked += "/" + name
		if n == nil {
			return nil, nil
		}
	}
	return n, nil
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func (nn *fakeNN) record(method, src string) {
	nn.mu.calls = append(nn.mu.calls, method+" "+src)
}

func caller(ctx context.Context) string {
	c, _ := ipc.CallerFromContext(ctx)
	return c.User
}

func (nn *fakeNN) statusLocked(local string, n *node) *hdfs.HdfsFileStatusProto {
	s := &hdfs.HdfsFileStatusProto{
		FileType:         hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
		Path:             []byte(local),
		Length:           proto.Uint64(n.length),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(n.perm)},
		Owner:            proto.String(n.owner),
		Group:            proto.String(n.group),
		ModificationTime: proto.Uint64(n.mtime),
		AccessTime:       proto.Uint64(n.atime),
		FileId:           proto.Uint64(n.id),
	}
	if n.dir {
		s.FileType = hdfs.HdfsFileStatusProto_IS_DIR.Enum()
		s.ChildrenNum = proto.Int32(int32(len(n.kids)))
	} else {
		s.BlockReplication = proto.Uint32(n.repl)
		s.Blocksize = proto.Uint64(134217728)
	}
	return s
}

func (nn *fakeNN) getFileInfo(ctx context.Context, req *hdfs.GetFileInfoRequestProto) (*hdfs.GetFileInfoResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("getFileInfo", req.GetSrc())
	n, err := nn.lookupLocked(caller(ctx), req.GetSrc())
	if err != nil {
		return nil, err
	}
	resp := &hdfs.GetFileInfoResponseProto{}
	if n != nil {
		resp.Fs = nn.statusLocked("", n)
	}
	return resp, nil
}

func (nn *fakeNN) getListing(ctx context.Context, req *hdfs.GetListingRequestProto) (*hdfs.GetListingResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("getListing", req.GetSrc())
	n, err := nn.lookupLocked(caller(ctx), req.GetSrc())
	if err != nil {
		return nil, err
	}
	resp := &hdfs.GetListingResponseProto{}
	if n == nil {
		return resp, nil
	}
	dl := &hdfs.DirectoryListingProto{RemainingEntries: proto.Uint32(0)}
	resp.DirList = dl
	if !n.dir {
		dl.PartialListing = []*hdfs.HdfsFileStatusProto{nn.statusLocked("", n)}
		return resp, nil
	}
	u := caller(ctx)
	if u != superuser && n.owner != u && n.perm&0o005 != 0o005 {
		return nil, remoteerr.AccessControl("Permission denied: user=" + u + ", access=READ_EXECUTE, inode=\"" + req.GetSrc() + "\"")
	}
	var names []string
	for name := range n.kids {
		if name > string(req.GetStartAfter()) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	page := names
	if len(page) > nn.pageSize {
		page = page[:nn.pageSize]
	}
	for _, name := range page {
		dl.PartialListing = append(dl.PartialListing, nn.statusLocked(name, n.kids[name]))
	}
	dl.RemainingEntries = proto.Uint32(uint32(len(names) - len(page)))
	return resp, nil
}

// parentLocked returns the parent directory node of p and p's name.
func (nn *fakeNN) parentLocked(user, p string) (*node, string, error) {
	parent, err := nn.lookupLocked(user, path.Dir(p))
	if err != nil {
		return nil, "", err
	}
	if parent == nil || !parent.dir {
		return nil, "", remoteerr.FileNotFound(path.Dir(p))
	}
	return parent, path.Base(p), nil
}

func (nn *fakeNN) mkdirs(ctx context.Context, req *hdfs.MkdirsRequestProto) (*hdfs.MkdirsResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("mkdirs", req.GetSrc())
	u := caller(ctx)
	n := nn.mu.root
	parts := split(req.GetSrc())
	for i, name := range parts {
		k := n.kids[name]
		switch {
		case k == nil && i < len(parts)-1 && !req.GetCreateParent():
			return nil, remoteerr.FileNotFound(req.GetSrc())
		case k == nil:
			k = nn.newNodeLocked(true, req.GetMasked().GetPerm(), u, n.group)
			n.kids[name] = k
		case !k.dir:
			return nil, remoteerr.New(remoteerr.ClassFileAlreadyExists, "Path is not a directory: /%s", strings.Join(parts[:i+1], "/"))
		}
		n = k
	}
	return &hdfs.MkdirsResponseProto{Result: proto.Bool(true)}, nil
}

func (nn *fakeNN) delete(ctx context.Context, req *hdfs.DeleteRequestProto) (*hdfs.DeleteResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("delete", req.GetSrc())
	n, err := nn.lookupLocked(caller(ctx), req.GetSrc())
	if err != nil {
		return nil, err
	}
	if n == nil {
		return &hdfs.DeleteResponseProto{Result: proto.Bool(false)}, nil
	}
	if n.dir && len(n.kids) > 0 && !req.GetRecursive() {
		return nil, remoteerr.New(remoteerr.ClassPathIsNotEmptyDir, "`%s is non empty': Directory is not empty", req.GetSrc())
	}
	parent, name, err := nn.parentLocked(caller(ctx), req.GetSrc())
	if err != nil {
		return nil, err
	}
	delete(parent.kids, name)
	return &hdfs.DeleteResponseProto{Result: proto.Bool(true)}, nil
}

func (nn *fakeNN) rename2(ctx context.Context, req *hdfs.Rename2RequestProto) (*hdfs.Rename2ResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("rename2", req.GetSrc()+" "+req.GetDst())
	u := caller(ctx)
	n, err := nn.lookupLocked(u, req.GetSrc())
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, remoteerr.FileNotFound(req.GetSrc())
	}
	if d, _ := nn.lookupLocked(u, req.GetDst()); d != nil && !req.GetOverwriteDest() {
		return nil, remoteerr.New(remoteerr.ClassFileAlreadyExists, "rename destination %s already exists", req.GetDst())
	}
	dp, dname, err := nn.parentLocked(u, req.GetDst())
	if err != nil {
		return nil, err
	}
	sp, sname, _ := nn.parentLocked(u, req.GetSrc())
	delete(sp.kids, sname)
	dp.kids[dname] = n
	return &hdfs.Rename2ResponseProto{}, nil
}

func (nn *fakeNN) existingLocked(ctx context.Context, method, p string) (*node, error) {
	if method != "" {
		nn.record(method, p)
	}
	n, err := nn.lookupLocked(caller(ctx), p)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, remoteerr.FileNotFound(p)
	}
	return n, nil
}

func (nn *fakeNN) setPermission(ctx context.Context, req *hdfs.SetPermissionRequestProto) (*hdfs.SetPermissionResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, err := nn.existingLocked(ctx, "setPermission", req.GetSrc())
	if err != nil {
		return nil, err
	}
	if u := caller(ctx); u != superuser && u != n.owner {
		return nil, remoteerr.AccessControl("Permission denied. user=" + u + " is not the owner of inode=" + req.GetSrc())
	}
	n.perm = req.GetPermission().GetPerm()
	return &hdfs.SetPermissionResponseProto{}, nil
}

func (nn *fakeNN) setOwner(ctx context.Context, req *hdfs.SetOwnerRequestProto) (*hdfs.SetOwnerResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("setOwner", fmt.Sprintf("%s %q %q", req.GetSrc(), req.GetUsername(), req.GetGroupname()))
	n, err := nn.existingLocked(ctx, "", req.GetSrc())
	if err != nil {
		return nil, err
	}
	if req.Username != nil && caller(ctx) != superuser {
		return nil, remoteerr.AccessControl("User " + caller(ctx) + " is not a super user (non-super user cannot change owner).")
	}
	if req.Username != nil {
		n.owner = req.GetUsername()
	}
	if req.Groupname != nil {
		n.group = req.GetGroupname()
	}
	return &hdfs.SetOwnerResponseProto{}, nil
}

func (nn *fakeNN) setTimes(ctx context.Context, req *hdfs.SetTimesRequestProto) (*hdfs.SetTimesResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("setTimes", fmt.Sprintf("%s %d %d", req.GetSrc(), int64(req.GetMtime()), int64(req.GetAtime())))
	n, err := nn.existingLocked(ctx, "", req.GetSrc())
	if err != nil {
		return nil, err
	}
	if int64(req.GetMtime()) != -1 {
		n.mtime = req.GetMtime()
	}
	if int64(req.GetAtime()) != -1 {
		n.atime = req.GetAtime()
	}
	return &hdfs.SetTimesResponseProto{}, nil
}

func (nn *fakeNN) setReplication(ctx context.Context, req *hdfs.SetReplicationRequestProto) (*hdfs.SetReplicationResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, err := nn.existingLocked(ctx, "setReplication", req.GetSrc())
	if err != nil {
		return nil, err
	}
	if n.dir {
		return &hdfs.SetReplicationResponseProto{Result: proto.Bool(false)}, nil
	}
	n.repl = req.GetReplication()
	return &hdfs.SetReplicationResponseProto{Result: proto.Bool(true)}, nil
}

func sumLocked(n *node) (length, files, dirs, consumed uint64) {
	if !n.dir {
		return n.length, 1, 0, n.length * uint64(n.repl)
	}
	dirs = 1
	for _, k := range n.kids {
		l, f, d, c := sumLocked(k)
		length, files, dirs, consumed = length+l, files+f, dirs+d, consumed+c
	}
	return
}

func (nn *fakeNN) getContentSummary(ctx context.Context, req *hdfs.GetContentSummaryRequestProto) (*hdfs.GetContentSummaryResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, err := nn.existingLocked(ctx, "getContentSummary", req.GetPath())
	if err != nil {
		return nil, err
	}
	l, f, d, c := sumLocked(n)
	return &hdfs.GetContentSummaryResponseProto{Summary: &hdfs.ContentSummaryProto{
		Length: proto.Uint64(l), FileCount: proto.Uint64(f), DirectoryCount: proto.Uint64(d),
		Quota: proto.Uint64(uint64(n.quota)), SpaceConsumed: proto.Uint64(c), SpaceQuota: proto.Uint64(uint64(n.squot)),
	}}, nil
}

func (nn *fakeNN) getQuotaUsage(ctx context.Context, req *hdfs.GetQuotaUsageRequestProto) (*hdfs.GetQuotaUsageResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, err := nn.existingLocked(ctx, "getQuotaUsage", req.GetPath())
	if err != nil {
		return nil, err
	}
	_, f, d, c := sumLocked(n)
	return &hdfs.GetQuotaUsageResponseProto{Usage: &hdfs.QuotaUsageProto{
		FileAndDirectoryCount: proto.Uint64(f + d), Quota: proto.Uint64(uint64(n.quota)),
		SpaceConsumed: proto.Uint64(c), SpaceQuota: proto.Uint64(uint64(n.squot)),
	}}, nil
}

func (nn *fakeNN) getFsStats(ctx context.Context, _ *hdfs.GetFsStatusRequestProto) (*hdfs.GetFsStatsResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("getFsStats", "")
	return &hdfs.GetFsStatsResponseProto{
		Capacity: proto.Uint64(100 << 30), Used: proto.Uint64(10 << 30), Remaining: proto.Uint64(90 << 30),
		UnderReplicated: proto.Uint64(0), CorruptBlocks: proto.Uint64(0), MissingBlocks: proto.Uint64(0),
	}, nil
}

func (nn *fakeNN) getServerDefaults(ctx context.Context, _ *hdfs.GetServerDefaultsRequestProto) (*hdfs.GetServerDefaultsResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("getServerDefaults", "")
	return &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
		BlockSize: proto.Uint64(134217728), BytesPerChecksum: proto.Uint32(512), WritePacketSize: proto.Uint32(65536),
		Replication: proto.Uint32(3), FileBufferSize: proto.Uint32(4096), TrashInterval: proto.Uint64(nn.trash),
	}}, nil
}

func (nn *fakeNN) create(ctx context.Context, req *hdfs.CreateRequestProto) (*hdfs.CreateResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("create", fmt.Sprintf("%s %o", req.GetSrc(), req.GetMasked().GetPerm()))
	u := caller(ctx)
	if n, err := nn.lookupLocked(u, req.GetSrc()); err != nil {
		return nil, err
	} else if n != nil {
		return nil, remoteerr.AlreadyExists(req.GetSrc())
	}
	parent, name, err := nn.parentLocked(u, req.GetSrc())
	if err != nil {
		return nil, err
	}
	n := nn.newNodeLocked(false, req.GetMasked().GetPerm(), u, parent.group)
	n.repl = req.GetReplication()
	parent.kids[name] = n
	return &hdfs.CreateResponseProto{Fs: nn.statusLocked("", n)}, nil
}

func (nn *fakeNN) complete(ctx context.Context, req *hdfs.CompleteRequestProto) (*hdfs.CompleteResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.record("complete", req.GetSrc())
	return &hdfs.CompleteResponseProto{Result: proto.Bool(true)}, nil
}

func (nn *fakeNN) checkAccess(ctx context.Context, req *hdfs.CheckAccessRequestProto) (*hdfs.CheckAccessResponseProto, error) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	n, err := nn.existingLocked(ctx, "checkAccess", req.GetPath())
	if err != nil {
		return nil, err
	}
	want := uint32(req.GetMode())
	bits := n.perm & 0o7
	if u := caller(ctx); u == superuser {
		bits = 0o7
	} else if u == n.owner {
		bits = n.perm >> 6 & 0o7
	}
	if bits&want != want {
		return nil, remoteerr.AccessControl("Permission denied: user=" + caller(ctx) + ", access=" + req.GetMode().String())
	}
	return &hdfs.CheckAccessResponseProto{}, nil
}

// serve starts an ipc.Server for nn on 127.0.0.1 and returns a client of
// it as user alice, with the authority nn.example.com:8020 for URIs.
func (nn *fakeNN) serve(t *testing.T) *client.FileSystem {
	t.Helper()
	srv := ipc.NewServer(ipc.ServerConfig{Handlers: 2})
	svc := srv.Service(client.ClientProtocol)
	ipc.Handle(svc, "getFileInfo", nn.getFileInfo)
	ipc.Handle(svc, "getListing", nn.getListing)
	ipc.Handle(svc, "mkdirs", nn.mkdirs)
	ipc.Handle(svc, "delete", nn.delete)
	ipc.Handle(svc, "rename2", nn.rename2)
	ipc.Handle(svc, "setPermission", nn.setPermission)
	ipc.Handle(svc, "setOwner", nn.setOwner)
	ipc.Handle(svc, "setTimes", nn.setTimes)
	ipc.Handle(svc, "setReplication", nn.setReplication)
	ipc.Handle(svc, "getContentSummary", nn.getContentSummary)
	ipc.Handle(svc, "getQuotaUsage", nn.getQuotaUsage)
	ipc.Handle(svc, "getFsStats", nn.getFsStats)
	ipc.Handle(svc, "getServerDefaults", nn.getServerDefaults)
	ipc.Handle(svc, "create", nn.create)
	ipc.Handle(svc, "complete", nn.complete)
	ipc.Handle(svc, "checkAccess", nn.checkAccess)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	fsys, err := client.New(client.Options{
		Addresses: []string{l.Addr().String()},
		User:      "alice",
		Authority: "nn.example.com:8020",
		Umask:     0o022,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fsys.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return fsys
}
