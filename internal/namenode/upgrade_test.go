package namenode_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/failpoint"
	"github.com/hdfsgo/hdfsgo/internal/namenode"
	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
	"github.com/hdfsgo/hdfsgo/internal/proto/datanode"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/storage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// upgradeNN is a NameNode over two name dirs that a test stops, upgrades,
// rolls back and starts again.
type upgradeNN struct {
	t   *testing.T
	cfg namenode.Config
	nn  *namenode.NameNode
}

func newUpgradeNN(t *testing.T) *upgradeNN {
	u := &upgradeNN{t: t, cfg: nntest.Config(t, 2)}
	nntest.Format(t, u.cfg)
	return u
}

func (u *upgradeNN) deps(fp failpoint.Func) namenode.Deps {
	return namenode.Deps{Logger: quietLogger(), Failpoint: fp}
}

func (u *upgradeNN) start() {
	u.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		u.t.Fatal(err)
	}
	d := u.deps(nil)
	d.Listener = l
	nn, err := namenode.Start(context.Background(), u.cfg, d)
	if err != nil {
		l.Close()
		u.t.Fatal(err)
	}
	u.nn = nn
	u.t.Cleanup(func() { nn.Close() })
}

func (u *upgradeNN) stop() {
	u.t.Helper()
	if err := u.nn.Close(); err != nil {
		u.t.Fatal(err)
	}
	u.nn = nil
}

func (u *upgradeNN) client() *nnClient {
	return &nnClient{t: u.t, c: rpcClient(u.t, u.nn.RPCAddr().String(), u.nn.SuperUser(), namenode.ClientProtocolName)}
}

type nnClient struct {
	t *testing.T
	c interface {
		Call(ctx context.Context, method string, req, resp proto.Message) error
	}
}

func (c *nnClient) exists(path string) bool {
	c.t.Helper()
	var resp hdfs.GetFileInfoResponseProto
	if err := c.c.Call(context.Background(), "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String(path)}, &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp.Fs != nil
}

func (c *nnClient) mkdir(path string) {
	c.t.Helper()
	if err := c.c.Call(context.Background(), "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String(path),
		Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *nnClient) finalized() bool {
	c.t.Helper()
	var resp hdfs.UpgradeStatusResponseProto
	if err := c.c.Call(context.Background(), "upgradeStatus", &hdfs.UpgradeStatusRequestProto{}, &resp); err != nil {
		c.t.Fatal(err)
	}
	return resp.GetUpgradeFinalized()
}

// checkDirs asserts every name dir's VERSION cTime and whether it keeps
// previous/ (at cTime prev, or -1 for none).
func (u *upgradeNN) checkDirs(cur, prev int64) {
	u.t.Helper()
	for _, d := range u.cfg.NameDirs {
		sd := storage.Dir{Root: d}
		s, err := sd.Inspect(vfs.Default)
		if err != nil {
			u.t.Fatal(err)
		}
		if r, err := storage.Decide(s); err != nil || r != storage.RepairNone {
			u.t.Fatalf("%s holds %s", d, s)
		}
		v, err := sd.ReadVersion(vfs.Default)
		if err != nil || (cur >= 0 && v.CTime != cur) || (cur < 0 && v.CTime == 0) {
			u.t.Fatalf("%s VERSION %+v, %v; want cTime %d", d, v, err, cur)
		}
		if s.Previous != (prev >= 0) {
			u.t.Fatalf("%s: previous/ = %v, want cTime %d", d, s.Previous, prev)
		}
		if s.Previous {
			if pv, err := sd.ReadPreviousVersion(vfs.Default); err != nil || pv.CTime != prev {
				u.t.Fatalf("%s previous VERSION %+v, %v", d, pv, err)
			}
		}
	}
}

// upgraded makes the dirs hold /before, upgraded, running with /after
// written since.
func (u *upgradeNN) upgraded(fp failpoint.Name) {
	u.t.Helper()
	u.start()
	u.client().mkdir("/before/x")
	u.stop()
	ctx := context.Background()
	if fp != "" {
		if err := namenode.Upgrade(ctx, u.cfg, u.deps(failpoint.Error(fp))); !errors.Is(err, failpoint.ErrInjected) {
			u.t.Fatalf("upgrade with %s: %v", fp, err)
		}
		if fp == failpoint.NNUpgradeMidVersion {
			// One dir was upgraded, the other not: a plain start refuses.
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			d := u.deps(nil)
			d.Listener = l
			if nn, err := namenode.Start(ctx, u.cfg, d); err == nil || !strings.Contains(err.Error(), "start with -upgrade to complete it") {
				if nn != nil {
					nn.Close()
				}
				u.t.Fatalf("plain start over half-upgraded dirs: %v", err)
			}
			l.Close()
		}
	}
	if err := namenode.Upgrade(ctx, u.cfg, u.deps(nil)); err != nil {
		u.t.Fatalf("upgrade after a crash at %q: %v", fp, err)
	}
	u.start()
	c := u.client()
	if !c.exists("/before/x") || c.finalized() || u.nn.UpgradeFinalized() {
		u.t.Fatalf("after the upgrade: /before/x %v, finalized %v", c.exists("/before/x"), c.finalized())
	}
	u.checkDirs(-1, 0)
	c.mkdir("/after/y")
}

// TestNameNodeUpgradeCrashAtEveryStep: an upgrade stopped after each step
// (every step before it synced, nothing cleaned up) and asked for again
// ends upgraded, with the namespace intact.
func TestNameNodeUpgradeCrashAtEveryStep(t *testing.T) {
	for _, fp := range []failpoint.Name{"", failpoint.NNUpgradeAfterRename, failpoint.NNUpgradeAfterImage,
		failpoint.NNUpgradeMidVersion, failpoint.NNUpgradeAfterVersion} {
		t.Run("at "+string(fp), func(t *testing.T) {
			u := newUpgradeNN(t)
			u.upgraded(fp)
			u.stop()
			// A restart keeps the upgrade, and what was written since.
			u.start()
			c := u.client()
			if !c.exists("/before/x") || !c.exists("/after/y") || c.finalized() {
				t.Fatal("restart after the upgrade lost something")
			}
		})
	}
}

func TestNameNodeUpgradeRefusedOverPrevious(t *testing.T) {
	u := newUpgradeNN(t)
	u.upgraded("")
	u.stop()
	err := namenode.Upgrade(context.Background(), u.cfg, u.deps(nil))
	if err == nil || !strings.Contains(err.Error(), "previous fs state should not exist during upgrade. Finalize or rollback first.") {
		t.Fatalf("second upgrade: %v", err)
	}
}

// TestNameNodeRollbackCrashAtEveryStep: after a rollback, crashed at any
// step and asked for again, the namespace is the one before the upgrade:
// what was written before reads back, what came after is gone.
func TestNameNodeRollbackCrashAtEveryStep(t *testing.T) {
	for _, fp := range []failpoint.Name{"", failpoint.NNRollbackAfterRemove, failpoint.NNRollbackAfterRestore} {
		t.Run("at "+string(fp), func(t *testing.T) {
			u := newUpgradeNN(t)
			u.upgraded("")
			u.stop()
			ctx := context.Background()
			asked := 0
			opts := namenode.RollbackOptions{Confirm: func(q string) bool { asked++; return true }}
			if fp != "" {
				if err := namenode.Rollback(ctx, u.cfg, u.deps(failpoint.Error(fp)), opts); !errors.Is(err, failpoint.ErrInjected) {
					t.Fatalf("rollback with %s: %v", fp, err)
				}
			}
			if err := namenode.Rollback(ctx, u.cfg, u.deps(nil), opts); err != nil {
				t.Fatalf("rollback: %v", err)
			}
			if asked == 0 {
				t.Fatal("rollback did not ask the operator")
			}
			u.checkDirs(0, -1)
			u.start()
			c := u.client()
			if !c.exists("/before/x") || c.exists("/after") || !c.finalized() {
				t.Fatalf("after rollback: /before/x %v, /after %v", c.exists("/before/x"), c.exists("/after"))
			}
			u.stop()
			if err := namenode.Rollback(ctx, u.cfg, u.deps(nil), opts); err == nil ||
				!strings.Contains(err.Error(), "Cannot rollback. None of the storage directories contain previous fs state.") {
				t.Fatalf("second rollback: %v", err)
			}
		})
	}
}

func TestNameNodeRollbackAborted(t *testing.T) {
	u := newUpgradeNN(t)
	u.upgraded("")
	u.stop()
	err := namenode.Rollback(context.Background(), u.cfg, u.deps(nil), namenode.RollbackOptions{Confirm: func(string) bool { return false }})
	if !errors.Is(err, namenode.ErrRollbackAborted) {
		t.Fatalf("rollback answered no: %v", err)
	}
	u.checkDirs(-1, 0)
}

// TestNameNodeFinalize: finalizeUpgrade (crashed after its rename, or not)
// drops previous/ for good, and DataNodes are told with DNA_FINALIZE once
// per registration.
func TestNameNodeFinalize(t *testing.T) {
	for _, fp := range []failpoint.Name{"", failpoint.NNFinalizeAfterRename} {
		t.Run("at "+string(fp), func(t *testing.T) {
			u := newUpgradeNN(t)
			u.upgraded("")
			dn := newFakeDN(t, u.nn)
			if cmds := dn.heartbeat(); hasFinalize(cmds) {
				t.Fatal("DNA_FINALIZE before the upgrade was finalized")
			}
			if fp != "" {
				u.stop()
				l, _ := net.Listen("tcp", "127.0.0.1:0")
				d := u.deps(failpoint.Error(fp))
				d.Listener = l
				nn, err := namenode.Start(context.Background(), u.cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				u.nn = nn
				t.Cleanup(func() { nn.Close() })
				err = u.client().c.Call(context.Background(), "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{})
				if err == nil || !strings.Contains(err.Error(), "injected") {
					t.Fatalf("finalize with %s: %v", fp, err)
				}
				u.stop()
				u.start()
				// The crash came after the first dir: the operator
				// finalizes again.
				if u.nn.UpgradeFinalized() {
					t.Fatal("finalized although a dir keeps previous/")
				}
				if err := u.client().c.Call(context.Background(), "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{}); err != nil {
					t.Fatal(err)
				}
			} else if err := u.client().c.Call(context.Background(), "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{}); err != nil {
				t.Fatal(err)
			}
			u.checkDirs(-1, -1)
			c := u.client()
			if !c.finalized() || !c.exists("/before/x") || !c.exists("/after/y") {
				t.Fatal("after finalize")
			}
			dn = newFakeDN(t, u.nn)
			if cmds := dn.heartbeat(); !hasFinalize(cmds) {
				t.Fatalf("no DNA_FINALIZE after finalizing: %v", cmds)
			}
			if cmds := dn.heartbeat(); hasFinalize(cmds) {
				t.Fatal("DNA_FINALIZE twice for one registration")
			}
			dn.register()
			if cmds := dn.heartbeat(); !hasFinalize(cmds) {
				t.Fatal("no DNA_FINALIZE after a new registration")
			}
			for _, d := range u.cfg.NameDirs {
				if _, err := os.Stat(filepath.Join(d, "finalized.tmp")); !os.IsNotExist(err) {
					t.Fatalf("finalized.tmp left: %v", err)
				}
			}
		})
	}
}

// TestNameNodeRefusesDataNodeOfAnotherUpgrade: a DataNode that registers
// with the cTime of before the upgrade (it kept running) is refused.
func TestNameNodeRefusesDataNodeOfAnotherUpgrade(t *testing.T) {
	u := newUpgradeNN(t)
	u.upgraded("")
	dn := newFakeDN(t, u.nn)
	dn.ctime = 0
	err := dn.tryRegister()
	if err == nil || !strings.Contains(err.Error(), "restart it so that it upgrades its storage") {
		t.Fatalf("registration with the old cTime: %v", err)
	}
}

// dnLayoutWire is the DataNode layout version as the uint32 field carries it.
var dnLayoutWire = func() uint32 { v := storage.DataNodeLayoutVersion; return uint32(v) }()

// fakeDN speaks DatanodeProtocol's registration and heartbeat.
type fakeDN struct {
	t     *testing.T
	c     *nnClient
	ns    *hdfs.NamespaceInfoProto
	ctime uint64
}

func newFakeDN(t *testing.T, nn *namenode.NameNode) *fakeDN {
	d := &fakeDN{t: t, c: &nnClient{t: t, c: rpcClient(t, nn.RPCAddr().String(), "dn", namenode.DatanodeProtocolName)}}
	var vr hdfs.VersionResponseProto
	if err := d.c.c.Call(context.Background(), "versionRequest", &hdfs.VersionRequestProto{}, &vr); err != nil {
		t.Fatal(err)
	}
	d.ns, d.ctime = vr.GetInfo(), vr.GetInfo().GetStorageInfo().GetCTime()
	d.register()
	return d
}

func (d *fakeDN) reg() *datanode.DatanodeRegistrationProto {
	si := d.ns.GetStorageInfo()
	return &datanode.DatanodeRegistrationProto{
		DatanodeID: &hdfs.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), HostName: proto.String("dn"), DatanodeUuid: proto.String("dn-uuid-1"),
			XferPort: proto.Uint32(1), InfoPort: proto.Uint32(2), IpcPort: proto.Uint32(3)},
		StorageInfo: &hdfs.StorageInfoProto{LayoutVersion: proto.Uint32(dnLayoutWire), NamespceID: proto.Uint32(si.GetNamespceID()),
			ClusterID: proto.String(si.GetClusterID()), CTime: proto.Uint64(d.ctime)},
		Keys:            &hdfs.ExportedBlockKeysProto{IsBlockTokenEnabled: proto.Bool(false), KeyUpdateInterval: proto.Uint64(0), TokenLifeTime: proto.Uint64(0), CurrentKey: &hdfs.BlockKeyProto{KeyId: proto.Uint32(0), ExpiryDate: proto.Uint64(0), KeyBytes: []byte{}}},
		SoftwareVersion: proto.String("3.3.6"),
	}
}

func (d *fakeDN) tryRegister() error {
	return d.c.c.Call(context.Background(), "registerDatanode", &datanode.RegisterDatanodeRequestProto{Registration: d.reg()}, &datanode.RegisterDatanodeResponseProto{})
}

func (d *fakeDN) register() {
	d.t.Helper()
	if err := d.tryRegister(); err != nil {
		d.t.Fatal(err)
	}
}

func (d *fakeDN) heartbeat() []*datanode.DatanodeCommandProto {
	d.t.Helper()
	var resp datanode.HeartbeatResponseProto
	if err := d.c.c.Call(context.Background(), "sendHeartbeat", &datanode.HeartbeatRequestProto{Registration: d.reg(),
		XmitsInProgress: proto.Uint32(0), XceiverCount: proto.Uint32(0), FailedVolumes: proto.Uint32(0)}, &resp); err != nil {
		d.t.Fatal(err)
	}
	return resp.GetCmds()
}

func hasFinalize(cmds []*datanode.DatanodeCommandProto) bool {
	for _, c := range cmds {
		if c.GetCmdType() == datanode.DatanodeCommandProto_FinalizeCommand {
			return true
		}
	}
	return false
}

// TestQJournalUpgradeRefused: the JournalNodes cannot upgrade their
// storage; -upgrade and -rollback say so and name the way around.
func TestQJournalUpgradeRefused(t *testing.T) {
	cfg := nntest.Config(t, 1,
		conf.KeyValue{Key: conf.DFSNameservices, Value: "ns1"},
		conf.KeyValue{Key: "dfs.ha.namenodes.ns1", Value: "nn1,nn2"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: "127.0.0.1:8020"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn2", Value: "127.0.0.2:8020"},
		conf.KeyValue{Key: conf.DFSHANameNodeID, Value: "nn1"},
		conf.KeyValue{Key: conf.DFSNameNodeSharedEditsDir, Value: "qjournal://127.0.0.1:8485;127.0.0.2:8485;127.0.0.3:8485/ns1"},
	)
	ctx := context.Background()
	for what, err := range map[string]error{
		"upgrade":  namenode.Upgrade(ctx, cfg, namenode.Deps{Logger: quietLogger()}),
		"rollback": namenode.Rollback(ctx, cfg, namenode.Deps{Logger: quietLogger()}, namenode.RollbackOptions{}),
	} {
		if err == nil || !strings.Contains(err.Error(), "is not supported") || !strings.Contains(err.Error(), "-bootstrapStandby") {
			t.Errorf("%s over qjournal://: %v", what, err)
		}
	}
}

// TestRollingUpgradeNotSupported: query and finalize say no rolling
// upgrade is in progress (true: none can be); prepare is refused with
// UnsupportedOperationException.
func TestRollingUpgradeNotSupported(t *testing.T) {
	nn := nntest.New(t)
	c := rpcClient(t, nn.Addr, nn.SuperUser(), namenode.ClientProtocolName)
	for _, a := range []hdfs.RollingUpgradeActionProto{hdfs.RollingUpgradeActionProto_QUERY, hdfs.RollingUpgradeActionProto_FINALIZE} {
		var resp hdfs.RollingUpgradeResponseProto
		if err := call(t, c, "rollingUpgrade", &hdfs.RollingUpgradeRequestProto{Action: a.Enum()}, &resp); err != nil || resp.RollingUpgradeInfo != nil {
			t.Fatalf("rollingUpgrade %v: %v, %v", a, resp.RollingUpgradeInfo, err)
		}
	}
	err := call(t, c, "rollingUpgrade", &hdfs.RollingUpgradeRequestProto{Action: hdfs.RollingUpgradeActionProto_START.Enum()}, &hdfs.RollingUpgradeResponseProto{})
	expectRemote(t, err, remoteerr.ClassUnsupported, "rollingUpgrade prepare is not supported")
}
