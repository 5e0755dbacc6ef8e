package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// step is one expected call of a script: the exact request and the canned
// answer.
type step struct {
	method string
	req    proto.Message
	resp   proto.Message // nil: empty response
	err    error
}

// scripted is a caller that checks every call against a script.
type scripted struct {
	t      *testing.T
	steps  []step
	n      int
	closed bool
}

func (s *scripted) Call(_ context.Context, method string, req, resp proto.Message) error {
	s.t.Helper()
	if s.n >= len(s.steps) {
		s.t.Fatalf("unexpected call %d: %s %v", s.n, method, req)
	}
	st := s.steps[s.n]
	s.n++
	if method != st.method {
		s.t.Fatalf("call %d: method %s, want %s", s.n-1, method, st.method)
	}
	if !proto.Equal(req, st.req) {
		s.t.Fatalf("call %d (%s): request\n  %v\nwant\n  %v", s.n-1, method, req, st.req)
	}
	// The request must also be encodable: a required field left unset
	// would be refused by a real NameNode.
	if _, err := proto.Marshal(req); err != nil {
		s.t.Fatalf("call %d (%s): request does not marshal: %v", s.n-1, method, err)
	}
	if st.err != nil {
		return st.err
	}
	if st.resp != nil {
		b, err := proto.Marshal(st.resp)
		if err != nil {
			s.t.Fatalf("canned response of %s: %v", method, err)
		}
		if err := proto.Unmarshal(b, resp); err != nil {
			s.t.Fatalf("canned response of %s into %T: %v", method, resp, err)
		}
	}
	return nil
}

func (s *scripted) Close() error { s.closed = true; return nil }

func (s *scripted) done() {
	s.t.Helper()
	if s.n != len(s.steps) {
		s.t.Fatalf("%d of %d expected calls made", s.n, len(s.steps))
	}
}

func newTestFS(t *testing.T, steps ...step) (*FileSystem, *scripted) {
	t.Helper()
	sc := &scripted{t: t, steps: steps}
	f, err := newFileSystem(Options{Addresses: []string{"nn1.example.com:8020", "nn2.example.com:8020"},
		User: "alice", Authority: "mycluster", Umask: 0o022, ClientName: "DFSClient_NONMAPREDUCE_7_1"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	return f, sc
}

func status(typ hdfs.HdfsFileStatusProto_FileType, local string, length uint64, perm uint32) *hdfs.HdfsFileStatusProto {
	return &hdfs.HdfsFileStatusProto{
		FileType:         typ.Enum(),
		Path:             []byte(local),
		Length:           proto.Uint64(length),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(perm)},
		Owner:            proto.String("alice"),
		Group:            proto.String("supergroup"),
		ModificationTime: proto.Uint64(1_700_000_000_123),
		AccessTime:       proto.Uint64(1_700_000_001_000),
		BlockReplication: proto.Uint32(3),
		Blocksize:        proto.Uint64(134217728),
		FileId:           proto.Uint64(16390),
	}
}

func fileInfoReq(p string) *hdfs.GetFileInfoRequestProto {
	return &hdfs.GetFileInfoRequestProto{Src: proto.String(p)}
}

func TestResolve(t *testing.T) {
	f, _ := newTestFS(t)
	tests := []struct {
		in, want string
		err      error
	}{
		{"/a/b/", "/a/b", nil},
		{"/", "/", nil},
		{"//a//b", "/a/b", nil},
		{"a/b", "/user/alice/a/b", nil},
		{".", "/user/alice", nil},
		{"..", "/user", nil},
		{"hdfs://nn1.example.com:8020/x/y", "/x/y", nil},
		{"hdfs://NN2.example.com:8020/x", "/x", nil},
		{"hdfs://nn1.example.com/x", "/x", nil}, // default port
		{"hdfs://mycluster/x", "/x", nil},
		{"hdfs:///x", "/x", nil},
		{"hdfs:/x", "/x", nil},
		{"hdfs://nn1.example.com:8020", "/", nil},
		{"hdfs://other:8020/x", "", ErrWrongFS},
		{"file:///x", "", ErrWrongFS},
		{"", "", fs.ErrInvalid},
	}
	for _, tt := range tests {
		got, err := f.Resolve(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestStat(t *testing.T) {
	f, sc := newTestFS(t,
		step{method: "getFileInfo", req: fileInfoReq("/d/f"),
			resp: &hdfs.GetFileInfoResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_FILE, "", 42, 0o644)}},
		step{method: "getFileInfo", req: fileInfoReq("/user/alice/missing"), resp: &hdfs.GetFileInfoResponseProto{}},
		step{method: "getFileInfo", req: fileInfoReq("/tmp"),
			resp: &hdfs.GetFileInfoResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_DIR, "", 0, 0o1777)}},
		step{method: "getFileInfo", req: fileInfoReq("/secret/x"),
			err: remoteerr.AccessControl("Permission denied: user=alice, access=EXECUTE")},
	)
	ctx := context.Background()
	fi, err := f.Stat(ctx, "hdfs://mycluster/d/f/")
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*FileStatus)
	if fi.Name() != "f" || fi.Size() != 42 || fi.Mode() != 0o644 || fi.IsDir() ||
		!fi.ModTime().Equal(time.UnixMilli(1_700_000_000_123)) || st.Path != "/d/f" ||
		st.Owner != "alice" || st.Group != "supergroup" || st.Replication != 3 ||
		st.BlockSize != 134217728 || st.FileID != 16390 || !st.AccessTime.Equal(time.UnixMilli(1_700_000_001_000)) {
		t.Errorf("Stat = %+v / %+v", fi, st)
	}

	_, err = f.Stat(ctx, "missing")
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "stat" || pe.Path != "missing" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(missing) = %v", err)
	}

	fi, err = f.Stat(ctx, "/tmp")
	if err != nil || fi.Mode() != fs.ModeDir|fs.ModeSticky|0o777 || !fi.IsDir() || fi.Name() != "tmp" {
		t.Errorf("Stat(/tmp) = %v, %v", fi.Mode(), err)
	}

	_, err = f.Stat(ctx, "/secret/x")
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Stat(/secret/x) = %v, want permission error", err)
	}
	if _, err := f.Stat(ctx, "hdfs://elsewhere:8020/x"); !errors.Is(err, ErrWrongFS) {
		t.Errorf("Stat(other fs) = %v", err)
	}
	sc.done()
}

func listing(remaining uint32, names ...string) *hdfs.GetListingResponseProto {
	dl := &hdfs.DirectoryListingProto{RemainingEntries: proto.Uint32(remaining)}
	for _, n := range names {
		dl.PartialListing = append(dl.PartialListing, status(hdfs.HdfsFileStatusProto_IS_FILE, n, 1, 0o644))
	}
	return &hdfs.GetListingResponseProto{DirList: dl}
}

func listReq(p, after string) *hdfs.GetListingRequestProto {
	return &hdfs.GetListingRequestProto{Src: proto.String(p), StartAfter: []byte(after), NeedLocation: proto.Bool(false)}
}

func TestReadDirPages(t *testing.T) {
	f, sc := newTestFS(t,
		step{method: "getListing", req: listReq("/d", ""), resp: listing(3, "a", "b")},
		step{method: "getListing", req: listReq("/d", "b"), resp: listing(1, "c", "d")},
		step{method: "getListing", req: listReq("/d", "d"), resp: listing(0, "e")},
		step{method: "getListing", req: listReq("/gone", ""), resp: &hdfs.GetListingResponseProto{}},
		step{method: "getListing", req: listReq("/loop", ""), resp: listing(5)},
	)
	ctx := context.Background()
	list, err := f.ReadDir(ctx, "/d/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fi := range list {
		got = append(got, fi.Path())
	}
	if fmt.Sprint(got) != "[/d/a /d/b /d/c /d/d /d/e]" {
		t.Errorf("ReadDir = %v", got)
	}
	if _, err := f.ReadDir(ctx, "/gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir(/gone) = %v", err)
	} else if pe := (*fs.PathError)(nil); !errors.As(err, &pe) || pe.Op != "readdir" {
		t.Errorf("ReadDir(/gone) op = %v", err)
	}
	if _, err := f.ReadDir(ctx, "/loop"); !errors.Is(err, ErrBadResponse) {
		t.Errorf("ReadDir(/loop) = %v", err)
	}
	sc.done()
}

func TestListDirStopsEarly(t *testing.T) {
	// Breaking out of the iterator after the first page asks for no more.
	f, sc := newTestFS(t, step{method: "getListing", req: listReq("/d", ""), resp: listing(9, "a", "b")})
	n := 0
	for fi, err := range f.ListDir(context.Background(), "/d") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if fi.Name() == "b" {
			break
		}
	}
	if n != 2 {
		t.Errorf("saw %d entries", n)
	}
	sc.done()
}

func mkdirsReq(p string, perm uint32, parents bool) *hdfs.MkdirsRequestProto {
	return &hdfs.MkdirsRequestProto{Src: proto.String(p), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(perm)}, CreateParent: proto.Bool(parents)}
}

var okMkdirs = &hdfs.MkdirsResponseProto{Result: proto.Bool(true)}

func TestMkdir(t *testing.T) {
	absent := &hdfs.GetFileInfoResponseProto{}
	f, sc := newTestFS(t,
		// Mkdir: pre-check, then mkdirs without createParent; the mode's
		// type bits never reach the wire, the umask is applied.
		step{method: "getFileInfo", req: fileInfoReq("/a"), resp: absent},
		step{method: "mkdirs", req: mkdirsReq("/a", 0o755, false), resp: okMkdirs},
		// Existing: fs.ErrExist, no mkdirs.
		step{method: "getFileInfo", req: fileInfoReq("/b"),
			resp: &hdfs.GetFileInfoResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_DIR, "", 0, 0o755)}},
		// Sticky bit kept.
		step{method: "getFileInfo", req: fileInfoReq("/t"), resp: absent},
		step{method: "mkdirs", req: mkdirsReq("/t", 0o1755, false), resp: okMkdirs},
		// MkdirAll: one call with createParent.
		step{method: "mkdirs", req: mkdirsReq("/x/y/z", 0o700, true), resp: okMkdirs},
		// Parent missing: the NameNode's FileNotFoundException.
		step{method: "getFileInfo", req: fileInfoReq("/p/q"), resp: absent},
		step{method: "mkdirs", req: mkdirsReq("/p/q", 0o755, false), err: remoteerr.FileNotFound("/p")},
		// result=false.
		step{method: "mkdirs", req: mkdirsReq("/r", 0o755, true), resp: &hdfs.MkdirsResponseProto{Result: proto.Bool(false)}},
	)
	ctx := context.Background()
	if err := f.Mkdir(ctx, "/a", fs.ModeDir|0o777); err != nil {
		t.Error(err)
	}
	if err := f.Mkdir(ctx, "/b", 0o777); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir(existing) = %v", err)
	}
	if err := f.Mkdir(ctx, "/t", fs.ModeSticky|fs.ModeSetuid|0o777); err != nil {
		t.Error(err)
	}
	if err := f.MkdirAll(ctx, "/x/y/z/", 0o700); err != nil {
		t.Error(err)
	}
	err := f.Mkdir(ctx, "/p/q", 0o777)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "mkdir" || pe.Path != "/p/q" {
		t.Errorf("Mkdir(/p/q) = %v", err)
	}
	if err := f.MkdirAll(ctx, "/r", 0o777); !errors.Is(err, ErrNotDone) {
		t.Errorf("MkdirAll(/r) = %v", err)
	}
	sc.done()
}

func delReq(p string, recursive bool) *hdfs.DeleteRequestProto {
	return &hdfs.DeleteRequestProto{Src: proto.String(p), Recursive: proto.Bool(recursive)}
}

func TestRemove(t *testing.T) {
	file := &hdfs.GetFileInfoResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_FILE, "", 1, 0o644)}
	dir := &hdfs.GetFileInfoResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_DIR, "", 0, 0o755)}
	ok := &hdfs.DeleteResponseProto{Result: proto.Bool(true)}
	f, sc := newTestFS(t,
		step{method: "getFileInfo", req: fileInfoReq("/f"), resp: file},
		step{method: "delete", req: delReq("/f", false), resp: ok},
		step{method: "getFileInfo", req: fileInfoReq("/none"), resp: &hdfs.GetFileInfoResponseProto{}},
		step{method: "getFileInfo", req: fileInfoReq("/d"), resp: dir},
		step{method: "delete", req: delReq("/d", false),
			err: remoteerr.New(remoteerr.ClassPathIsNotEmptyDir, "`/d is non empty': Directory is not empty")},
		step{method: "delete", req: delReq("/d", true), resp: ok},
		step{method: "delete", req: delReq("/none", true), resp: &hdfs.DeleteResponseProto{Result: proto.Bool(false)}},
	)
	ctx := context.Background()
	if err := f.Remove(ctx, "/f"); err != nil {
		t.Error(err)
	}
	if err := f.Remove(ctx, "/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove(/none) = %v", err)
	}
	if err := f.Remove(ctx, "/d"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("Remove(non-empty) = %v", err)
	}
	if err := f.RemoveAll(ctx, "/d"); err != nil {
		t.Error(err)
	}
	if err := f.RemoveAll(ctx, "/none"); err != nil {
		t.Errorf("RemoveAll(missing) = %v", err)
	}
	sc.done()
}

func TestMetadataCalls(t *testing.T) {
	f, sc := newTestFS(t,
		step{method: "rename2", req: &hdfs.Rename2RequestProto{Src: proto.String("/a"), Dst: proto.String("/user/alice/b"), OverwriteDest: proto.Bool(false)},
			err: remoteerr.AlreadyExists("/user/alice/b")},
		step{method: "rename2", req: &hdfs.Rename2RequestProto{Src: proto.String("/a"), Dst: proto.String("/b"), OverwriteDest: proto.Bool(true)}},
		step{method: "setPermission", req: &hdfs.SetPermissionRequestProto{Src: proto.String("/a"), Permission: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o1750)}}},
		step{method: "setOwner", req: &hdfs.SetOwnerRequestProto{Src: proto.String("/a"), Username: proto.String("bob")}},
		step{method: "setOwner", req: &hdfs.SetOwnerRequestProto{Src: proto.String("/a"), Groupname: proto.String("staff")}},
		step{method: "setTimes", req: &hdfs.SetTimesRequestProto{Src: proto.String("/a"), Mtime: proto.Uint64(2000), Atime: proto.Uint64(1000)}},
		step{method: "setTimes", req: &hdfs.SetTimesRequestProto{Src: proto.String("/a"), Mtime: proto.Uint64(^uint64(0)), Atime: proto.Uint64(5000)}},
		step{method: "setReplication", req: &hdfs.SetReplicationRequestProto{Src: proto.String("/a"), Replication: proto.Uint32(2)},
			resp: &hdfs.SetReplicationResponseProto{Result: proto.Bool(true)}},
		step{method: "setQuota", req: &hdfs.SetQuotaRequestProto{Path: proto.String("/q"), NamespaceQuota: proto.Uint64(100), StoragespaceQuota: proto.Uint64(1<<63 - 1)}},
		step{method: "setQuota", req: &hdfs.SetQuotaRequestProto{Path: proto.String("/q"), NamespaceQuota: proto.Uint64(^uint64(0)), StoragespaceQuota: proto.Uint64(^uint64(0))}},
	)
	ctx := context.Background()
	err := f.Rename(ctx, "/a", "b")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) || pe.Op != "rename" {
		t.Errorf("Rename = %v", err)
	}
	if err := f.RenameOverwrite(ctx, "/a", "/b"); err != nil {
		t.Error(err)
	}
	if err := f.Chmod(ctx, "/a", fs.ModeSticky|fs.ModeDir|0o750); err != nil {
		t.Error(err)
	}
	if err := f.Chown(ctx, "/a", "bob", ""); err != nil {
		t.Error(err)
	}
	if err := f.Chown(ctx, "/a", "", "staff"); err != nil {
		t.Error(err)
	}
	if err := f.Chtimes(ctx, "/a", time.UnixMilli(1000), time.UnixMilli(2000)); err != nil {
		t.Error(err)
	}
	if err := f.Chtimes(ctx, "/a", time.UnixMilli(5000), time.Time{}); err != nil {
		t.Error(err)
	}
	if ok, err := f.SetReplication(ctx, "/a", 2); !ok || err != nil {
		t.Errorf("SetReplication = %v, %v", ok, err)
	}
	if err := f.SetQuota(ctx, "/q", 100, QuotaDontSet); err != nil {
		t.Error(err)
	}
	if err := f.SetQuota(ctx, "/q", QuotaReset, QuotaReset); err != nil {
		t.Error(err)
	}
	sc.done()
}

func TestSummaries(t *testing.T) {
	none := ^uint64(0)
	f, sc := newTestFS(t,
		step{method: "getContentSummary", req: &hdfs.GetContentSummaryRequestProto{Path: proto.String("/d")},
			resp: &hdfs.GetContentSummaryResponseProto{Summary: &hdfs.ContentSummaryProto{
				Length: proto.Uint64(10), FileCount: proto.Uint64(2), DirectoryCount: proto.Uint64(3),
				Quota: proto.Uint64(none), SpaceConsumed: proto.Uint64(30), SpaceQuota: proto.Uint64(none)}}},
		step{method: "getContentSummary", req: &hdfs.GetContentSummaryRequestProto{Path: proto.String("/x")}, err: remoteerr.FileNotFound("/x")},
		step{method: "getQuotaUsage", req: &hdfs.GetQuotaUsageRequestProto{Path: proto.String("/d")},
			resp: &hdfs.GetQuotaUsageResponseProto{Usage: &hdfs.QuotaUsageProto{FileAndDirectoryCount: proto.Uint64(5),
				Quota: proto.Uint64(100), SpaceConsumed: proto.Uint64(30), SpaceQuota: proto.Uint64(none)}}},
		step{method: "getFsStats", req: &hdfs.GetFsStatusRequestProto{},
			resp: &hdfs.GetFsStatsResponseProto{Capacity: proto.Uint64(1000), Used: proto.Uint64(10), Remaining: proto.Uint64(900),
				UnderReplicated: proto.Uint64(1), CorruptBlocks: proto.Uint64(2), MissingBlocks: proto.Uint64(3)}},
		step{method: "getServerDefaults", req: &hdfs.GetServerDefaultsRequestProto{},
			resp: &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
				BlockSize: proto.Uint64(134217728), BytesPerChecksum: proto.Uint32(512), WritePacketSize: proto.Uint32(65536),
				Replication: proto.Uint32(3), FileBufferSize: proto.Uint32(4096), TrashInterval: proto.Uint64(60),
				ChecksumType: hdfs.ChecksumTypeProto_CHECKSUM_CRC32C.Enum()}}},
	)
	ctx := context.Background()
	cs, err := f.ContentSummary(ctx, "/d")
	if err != nil || *cs != (ContentSummary{Length: 10, FileCount: 2, DirectoryCount: 3, Quota: -1, SpaceConsumed: 30, SpaceQuota: -1}) {
		t.Errorf("ContentSummary = %+v, %v", cs, err)
	}
	_, err = f.ContentSummary(ctx, "/x")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "content summary" {
		t.Errorf("ContentSummary(/x) = %v", err)
	}
	qu, err := f.QuotaUsage(ctx, "/d")
	if err != nil || !reflect.DeepEqual(*qu, QuotaUsage{FileAndDirectoryCount: 5, Quota: 100, SpaceConsumed: 30, SpaceQuota: -1}) {
		t.Errorf("QuotaUsage = %+v, %v", qu, err)
	}
	st, err := f.StatFs(ctx)
	if err != nil || st != (FsStats{Capacity: 1000, Used: 10, Remaining: 900, UnderReplicated: 1, CorruptBlocks: 2, MissingBlocks: 3}) {
		t.Errorf("StatFs = %+v, %v", st, err)
	}
	for range 2 { // the second call is served from the cache
		d, err := f.ServerDefaults(ctx)
		if err != nil || d.BlockSize != 134217728 || d.Replication != 3 || d.TrashInterval != time.Hour || d.ChecksumType != "CRC32C" {
			t.Errorf("ServerDefaults = %+v, %v", d, err)
		}
	}
	sc.done()
}

func TestCreateEmptyFile(t *testing.T) {
	f, sc := newTestFS(t,
		step{method: "getServerDefaults", req: &hdfs.GetServerDefaultsRequestProto{},
			resp: &hdfs.GetServerDefaultsResponseProto{ServerDefaults: &hdfs.FsServerDefaultsProto{
				BlockSize: proto.Uint64(1 << 20), BytesPerChecksum: proto.Uint32(512), WritePacketSize: proto.Uint32(65536),
				Replication: proto.Uint32(2), FileBufferSize: proto.Uint32(4096)}}},
		step{method: "create", req: &hdfs.CreateRequestProto{Src: proto.String("/e"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
			ClientName: proto.String("DFSClient_NONMAPREDUCE_7_1"), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false),
			Replication: proto.Uint32(2), BlockSize: proto.Uint64(1 << 20)},
			resp: &hdfs.CreateResponseProto{Fs: status(hdfs.HdfsFileStatusProto_IS_FILE, "", 0, 0o644)}},
		step{method: "complete", req: &hdfs.CompleteRequestProto{Src: proto.String("/e"), ClientName: proto.String("DFSClient_NONMAPREDUCE_7_1"), FileId: proto.Uint64(16390)},
			resp: &hdfs.CompleteResponseProto{Result: proto.Bool(true)}},
		step{method: "create", req: &hdfs.CreateRequestProto{Src: proto.String("/e"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
			ClientName: proto.String("DFSClient_NONMAPREDUCE_7_1"), CreateFlag: proto.Uint32(1), CreateParent: proto.Bool(false),
			Replication: proto.Uint32(2), BlockSize: proto.Uint64(1 << 20)},
			err: remoteerr.AlreadyExists("/e")},
	)
	ctx := context.Background()
	if err := f.CreateEmptyFile(ctx, "/e", 0o666); err != nil {
		t.Fatal(err)
	}
	err := f.CreateEmptyFile(ctx, "/e", 0o666)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) || pe.Op != "create" {
		t.Errorf("CreateEmptyFile(existing) = %v", err)
	}
	sc.done()
}

func TestAccess(t *testing.T) {
	f, sc := newTestFS(t,
		step{method: "checkAccess", req: &hdfs.CheckAccessRequestProto{Path: proto.String("/a"), Mode: hdfs.AclEntryProto_READ_WRITE.Enum()}},
		step{method: "checkAccess", req: &hdfs.CheckAccessRequestProto{Path: proto.String("/a"), Mode: hdfs.AclEntryProto_EXECUTE.Enum()},
			err: remoteerr.AccessControl("Permission denied: user=alice, access=--x")},
	)
	ctx := context.Background()
	if err := f.Access(ctx, "/a", 0o6); err != nil {
		t.Error(err)
	}
	if err := f.Access(ctx, "/a", fs.ModeDir|0o1); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Access = %v", err)
	}
	sc.done()
}

func TestClientName(t *testing.T) {
	f, err := newFileSystem(Options{Addresses: []string{"nn:8020"}, User: "u"}, &scripted{t: t})
	if err != nil {
		t.Fatal(err)
	}
	var r, n int64
	if _, err := fmt.Sscanf(f.ClientName(), "DFSClient_NONMAPREDUCE_%d_%d", &r, &n); err != nil || n < 1 {
		t.Errorf("client name %q", f.ClientName())
	}
	if f.WorkingDir() != "/user/u" || f.URI() != "hdfs://nn:8020" || f.User() != "u" {
		t.Errorf("defaults: %q %q %q", f.WorkingDir(), f.URI(), f.User())
	}
}

func TestClose(t *testing.T) {
	f, sc := newTestFS(t)
	if err := f.Close(); err != nil || !sc.closed {
		t.Fatalf("Close = %v, closed %v", err, sc.closed)
	}
	if _, err := f.Stat(context.Background(), "/"); !errors.Is(err, ErrClosed) {
		t.Errorf("Stat after Close = %v", err)
	}
}

func TestNewNeedsAddress(t *testing.T) {
	if _, err := New(Options{User: "u"}); !errors.Is(err, ErrNoAddress) {
		t.Errorf("New without addresses = %v", err)
	}
}

func TestFileInfoFlags(t *testing.T) {
	s := status(hdfs.HdfsFileStatusProto_IS_SYMLINK, "l", 0, 0o777|permACLBit)
	s.Symlink = []byte("/target")
	s.Flags = proto.Uint32(uint32(hdfs.HdfsFileStatusProto_HAS_EC))
	fi := newFileInfo("/d/l", s)
	st := fi.Status()
	if fi.Mode() != fs.ModeSymlink|0o777 || !st.HasACL || !st.ErasureCode || st.Symlink != "/target" || st.Permission != 0o777 {
		t.Errorf("%v %+v", fi.Mode(), st)
	}
}

// FuzzResolve checks that Resolve never panics and always yields a clean
// absolute path.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/a", "a/b", "hdfs://nn:8020/x", "hdfs:", "hdfs://", "x:y", "../..", ":", "hdfs:x"} {
		f.Add(s)
	}
	fsys, err := newFileSystem(Options{Addresses: []string{"nn:8020"}, User: "u"}, &scripted{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := fsys.Resolve(s)
		if err != nil {
			return
		}
		if len(p) == 0 || p[0] != '/' || (len(p) > 1 && p[len(p)-1] == '/') {
			t.Fatalf("Resolve(%q) = %q", s, p)
		}
	})
}

func TestNewFromURI(t *testing.T) {
	f, err := NewFromURI("hdfs://nn.example.com/ignored", "u")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.URI() != "hdfs://nn.example.com" {
		t.Errorf("URI %q", f.URI())
	}
	if p, err := f.Resolve("hdfs://nn.example.com:8020/x"); err != nil || p != "/x" {
		t.Errorf("Resolve = %q, %v", p, err)
	}
	for _, bad := range []string{"file:///x", "hdfs:///x", "nn:8020", "://"} {
		if _, err := NewFromURI(bad, "u"); !errors.Is(err, ErrWrongFS) {
			t.Errorf("NewFromURI(%q) = %v", bad, err)
		}
	}
}
