package hdfsfast

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// status is a status as a NameNode sends it for a file.
func status() *hdfs.HdfsFileStatusProto {
	return &hdfs.HdfsFileStatusProto{
		FileType:         hdfs.HdfsFileStatusProto_IS_FILE.Enum(),
		Path:             []byte{},
		Length:           proto.Uint64(1 << 20),
		Permission:       &hdfs.FsPermissionProto{Perm: proto.Uint32(0o644)},
		Owner:            proto.String("alice"),
		Group:            proto.String("supergroup"),
		ModificationTime: proto.Uint64(1796322687843),
		AccessTime:       proto.Uint64(1796322687000),
		BlockReplication: proto.Uint32(3),
		Blocksize:        proto.Uint64(128 << 20),
		FileId:           proto.Uint64(16390),
		ChildrenNum:      proto.Int32(0),
		StoragePolicy:    proto.Uint32(7),
		Flags:            proto.Uint32(uint32(hdfs.HdfsFileStatusProto_HAS_ACL)),
	}
}

func marshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodesWhatNameNodesSend: the statuses a NameNode sends (a file, a
// directory, one without the optional fields, in a getFileInfo answer or
// none) take the fast path, and decode as proto.Unmarshal decodes them.
func TestDecodesWhatNameNodesSend(t *testing.T) {
	dir := status()
	dir.FileType = hdfs.HdfsFileStatusProto_IS_DIR.Enum()
	dir.ChildrenNum = proto.Int32(-1)
	dir.Path = []byte("sub")
	bare := status()
	bare.BlockReplication, bare.Blocksize, bare.FileId, bare.ChildrenNum, bare.StoragePolicy, bare.Flags = nil, nil, nil, nil, nil, nil
	for _, st := range []*hdfs.HdfsFileStatusProto{status(), dir, bare} {
		got, ok := DecodeFileStatus(marshal(t, st))
		if !ok || !proto.Equal(got, st) {
			t.Fatalf("decoded %v (fast path %v), want %v", got, ok, st)
		}
	}
	listing := &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
		PartialListing: []*hdfs.HdfsFileStatusProto{status(), dir, bare}, RemainingEntries: proto.Uint32(7)}}
	listing.DirList.PartialListing[0].Path = []byte("f")
	for _, want := range []*hdfs.GetListingResponseProto{listing, {DirList: &hdfs.DirectoryListingProto{RemainingEntries: proto.Uint32(0)}}, {}} {
		got := &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{}} // overwritten
		if !decodeGetListing(marshal(t, want), got) || !proto.Equal(got, want) {
			t.Fatalf("decoded %v, want %v", got, want)
		}
	}
	for _, want := range []*hdfs.CreateResponseProto{{Fs: status()}, {}} {
		got := &hdfs.CreateResponseProto{Fs: dir} // overwritten
		if !decodeCreate(marshal(t, want), got) || !proto.Equal(got, want) {
			t.Fatalf("decoded %v, want %v", got, want)
		}
	}
	for _, want := range []*hdfs.GetFileInfoResponseProto{{Fs: status()}, {}} {
		got := &hdfs.GetFileInfoResponseProto{Fs: dir} // overwritten
		if !decodeGetFileInfo(marshal(t, want), got) || !proto.Equal(got, want) {
			t.Fatalf("decoded %v, want %v", got, want)
		}
	}
}

// TestLeavesTheRestToProto: what the decoder does not take goes to
// proto.Unmarshal, the message untouched.
func TestLeavesTheRestToProto(t *testing.T) {
	link := status()
	link.Symlink = []byte("/target")
	unknownType := marshal(t, status())
	unknownType[1] = 9 // fileType = 9: proto keeps it as an unknown field
	noOwner := status()
	noOwner.Owner = nil
	secondPerm, _ := proto.MarshalOptions{AllowPartial: true}.Marshal(&hdfs.HdfsFileStatusProto{Permission: &hdfs.FsPermissionProto{}})
	twoPerms := append(marshal(t, status()), secondPerm...)
	for name, b := range map[string][]byte{
		"symlink":          marshal(t, link),
		"unknown type":     unknownType,
		"no owner":         func() []byte { b, _ := proto.MarshalOptions{AllowPartial: true}.Marshal(noOwner); return b }(),
		"two permissions":  twoPerms,
		"truncated":        marshal(t, status())[:10],
		"unknown field 99": append(marshal(t, status()), 0x98, 0x06, 0x01),
	} {
		if _, ok := DecodeFileStatus(b); ok {
			t.Errorf("%s: taken by the fast path", name)
		}
	}
	noRemaining, _ := proto.MarshalOptions{AllowPartial: true}.Marshal(&hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{}})
	withLink := marshal(t, &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
		PartialListing: []*hdfs.HdfsFileStatusProto{status(), link}, RemainingEntries: proto.Uint32(0)}})
	for name, b := range map[string][]byte{"no remainingEntries": noRemaining, "a symlink in the listing": withLink} {
		if decodeGetListing(b, &hdfs.GetListingResponseProto{}) {
			t.Errorf("%s: taken by the fast path", name)
		}
	}
	keep := &hdfs.GetFileInfoResponseProto{Fs: status()}
	if decodeGetFileInfo(marshal(t, &hdfs.GetFileInfoResponseProto{Fs: link}), keep) || !proto.Equal(keep, &hdfs.GetFileInfoResponseProto{Fs: status()}) {
		t.Fatalf("a refused answer changed the message: %v", keep)
	}
}

// FuzzFileStatus: whatever the fast decoders take (a status, a getFileInfo,
// create or getListing answer), proto.Unmarshal takes too, with an equal
// result.
func FuzzFileStatus(f *testing.F) {
	f.Add(marshal(f, status()))
	f.Add(marshal(f, &hdfs.GetFileInfoResponseProto{Fs: status()}))
	f.Add([]byte{})
	f.Add(marshal(f, &hdfs.GetListingResponseProto{DirList: &hdfs.DirectoryListingProto{
		PartialListing: []*hdfs.HdfsFileStatusProto{status(), status()}, RemainingEntries: proto.Uint32(3)}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, ok := DecodeFileStatus(b); ok {
			want := &hdfs.HdfsFileStatusProto{}
			if err := proto.Unmarshal(b, want); err != nil {
				t.Fatalf("fast path took a status proto.Unmarshal refuses: %v", err)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("fast path decoded %v, proto.Unmarshal %v", got, want)
			}
		}
		for _, d := range []struct {
			decode func([]byte, proto.Message) bool
			fresh  func() proto.Message
		}{
			{decodeGetFileInfo, func() proto.Message { return &hdfs.GetFileInfoResponseProto{} }},
			{decodeCreate, func() proto.Message { return &hdfs.CreateResponseProto{} }},
			{decodeGetListing, func() proto.Message { return &hdfs.GetListingResponseProto{} }},
		} {
			got := d.fresh()
			if !d.decode(b, got) {
				continue
			}
			want := d.fresh()
			if err := proto.Unmarshal(b, want); err != nil {
				t.Fatalf("fast path took a %T proto.Unmarshal refuses: %v", want, err)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("fast path decoded %v, proto.Unmarshal %v", got, want)
			}
		}
	})
}

func BenchmarkDecodeFileStatus(b *testing.B) {
	body := marshal(b, &hdfs.GetFileInfoResponseProto{Fs: status()})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var m hdfs.GetFileInfoResponseProto
			if err := proto.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var m hdfs.GetFileInfoResponseProto
			if !decodeGetFileInfo(body, &m) {
				b.Fatal("not taken")
			}
		}
	})
}

func BenchmarkDecodeListing(b *testing.B) {
	list := &hdfs.DirectoryListingProto{RemainingEntries: proto.Uint32(0)}
	for i := range 1000 {
		st := status()
		st.Path = []byte(fmt.Sprintf("part-%05d", i))
		list.PartialListing = append(list.PartialListing, st)
	}
	body := marshal(b, &hdfs.GetListingResponseProto{DirList: list})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var m hdfs.GetListingResponseProto
			if err := proto.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var m hdfs.GetListingResponseProto
			if !decodeGetListing(body, &m) {
				b.Fatal("not taken")
			}
		}
	})
}
