package namenode_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

func dumpOf(t *testing.T, nn *nntest.NameNode) string {
	t.Helper()
	var b bytes.Buffer
	if err := nn.DumpNamespace(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFeaturesSurviveRestarts sets and removes extended attributes over
// RPC, then restarts the NameNode from its edits, and again from an image
// saved by saveNamespace: the namespace, features included, must come back
// the same, and the calls must answer as before.
func TestFeaturesSurviveRestarts(t *testing.T) {
	cfg := nntest.Config(t, 1)
	nntest.Format(t, cfg)
	nn := nntest.Start(t, cfg)
	c := rpcClient(t, nn.Addr, nn.SuperUser(), namenode.ClientProtocolName)
	if err := call(t, c, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/d"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	set := func(name, value string) {
		t.Helper()
		x := &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_USER.Enum(), Name: proto.String(name), Value: []byte(value)}
		if err := call(t, c, "setXAttr", &hdfs.SetXAttrRequestProto{Src: proto.String("/d"), XAttr: x, Flag: proto.Uint32(3)}, &hdfs.SetXAttrResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	set("a", "1")
	set("b", "2")
	set("a", "3")
	if err := call(t, c, "removeXAttr", &hdfs.RemoveXAttrRequestProto{Src: proto.String("/d"), XAttr: &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_USER.Enum(), Name: proto.String("b")}}, &hdfs.RemoveXAttrResponseProto{}); err != nil {
		t.Fatal(err)
	}
	trusted := &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_TRUSTED.Enum(), Name: proto.String("t"), Value: []byte{0, 0xff}}
	if err := call(t, c, "setXAttr", &hdfs.SetXAttrRequestProto{Src: proto.String("/"), XAttr: trusted, Flag: proto.Uint32(1)}, &hdfs.SetXAttrResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "setStoragePolicy", &hdfs.SetStoragePolicyRequestProto{Src: proto.String("/d"), PolicyName: proto.String("COLD")}, &hdfs.SetStoragePolicyResponseProto{}); err != nil {
		t.Fatal(err)
	}
	spec := []*hdfs.AclEntryProto{{Type: hdfs.AclEntryProto_USER.Enum(), Scope: hdfs.AclEntryProto_ACCESS.Enum(), Permissions: hdfs.AclEntryProto_READ_EXECUTE.Enum(), Name: proto.String("bob")},
		{Type: hdfs.AclEntryProto_GROUP.Enum(), Scope: hdfs.AclEntryProto_DEFAULT.Enum(), Permissions: hdfs.AclEntryProto_READ.Enum(), Name: proto.String("ops")}}
	if err := call(t, c, "modifyAclEntries", &hdfs.ModifyAclEntriesRequestProto{Src: proto.String("/d"), AclSpec: spec}, &hdfs.ModifyAclEntriesResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := call(t, c, "allowSnapshot", &hdfs.AllowSnapshotRequestProto{SnapshotRoot: proto.String("/d")}, &hdfs.AllowSnapshotResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// A child inherits the default ACL (an extra op in the same batch).
	if err := call(t, c, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/d/e"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{}); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		t.Helper()
		var out []string
		st := &hdfs.GetAclStatusResponseProto{}
		if err := call(t, c, "getAclStatus", &hdfs.GetAclStatusRequestProto{Src: proto.String("/d/e")}, st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("acl %v", st.GetResult().GetEntries()))
		sp := &hdfs.GetStoragePolicyResponseProto{}
		if err := call(t, c, "getStoragePolicy", &hdfs.GetStoragePolicyRequestProto{Path: proto.String("/d/e")}, sp); err != nil {
			t.Fatal(err)
		}
		out = append(out, "policy "+sp.GetStoragePolicy().GetName())
		for _, p := range []string{"/", "/d"} {
			resp := &hdfs.ListXAttrsResponseProto{}
			if err := call(t, c, "listXAttrs", &hdfs.ListXAttrsRequestProto{Src: proto.String(p)}, resp); err != nil {
				t.Fatal(err)
			}
			for _, x := range resp.GetXAttrs() {
				out = append(out, p+" "+x.GetNamespace().String()+"."+x.GetName()+"="+string(x.GetValue()))
			}
		}
		return strings.Join(out, "\n")
	}
	want := list()
	if !strings.HasSuffix(want, "policy COLD\n/ TRUSTED.t=\x00\xff\n/d USER.a=3") || !strings.Contains(want, "ops") {
		t.Fatalf("xattrs = %q", want)
	}
	before := dumpOf(t, nn)
	if !strings.Contains(before, "xattr=user.a") || !strings.Contains(before, "snapshottable") {
		t.Fatalf("dump lacks the xattr:\n%s", before)
	}

	restart := func() {
		t.Helper()
		nn.Close()
		nn = nntest.Start(t, cfg)
		c = rpcClient(t, nn.Addr, nn.SuperUser(), namenode.ClientProtocolName)
		if got := dumpOf(t, nn); got != before {
			t.Fatalf("namespace after restart:\n%s\nwant:\n%s", got, before)
		}
		if got := list(); got != want {
			t.Fatalf("xattrs after restart = %q, want %q", got, want)
		}
	}
	restart() // from the edits
	for _, a := range []hdfs.SafeModeActionProto{hdfs.SafeModeActionProto_SAFEMODE_ENTER, -1, hdfs.SafeModeActionProto_SAFEMODE_LEAVE} {
		if a == -1 {
			if err := call(t, c, "saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := call(t, c, "setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	restart() // from the image
}
