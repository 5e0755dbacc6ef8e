package minicluster

import (
	"context"
	"strings"
	"testing"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	qjpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
	"github.com/hdfsgo/hdfsgo/internal/security/krbtest"
)

// TestKerberosHA runs an HA nameservice (two NameNodes, three
// JournalNodes, bootstrap of the standby) with Kerberos and privacy on
// every connection: NameNode to JournalNodes, JournalNode to JournalNode,
// standby to active, client to NameNodes. What the client wrote before a
// failover is there after it.
func TestKerberosHA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	kdc := krbtest.Start(t)
	realm := krbtest.Realm
	site := kdc.Secure(t, krbtest.Services{JournalNodes: true, Protection: "privacy"})
	hdfsKT := kdc.AddPrincipal("hdfs")
	c := startQJMCluster(t, site.Keys...)
	fsys, err := client.New(client.Options{Addresses: c.NameNodeAddrs(),
		KerberosClient: kdc.ClientFromKeytab("hdfs", hdfsKT), KerberosServicePrincipal: "nn/_HOST@" + realm, RPCProtection: "privacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fsys.Mkdir(ctx, "/before", 0o755); err != nil {
		t.Fatal(err)
	}
	// Delegation tokens: alice asks one with hdfs as renewer, another to
	// cancel; both are in the edits the standby replays.
	aliceKT := kdc.AddPrincipal("alice")
	alice := kdc.ClientFromKeytab("alice", aliceKT)
	hdfsKrb := kdc.ClientFromKeytab("hdfs", hdfsKT)
	nnCall := func(kc *krbclient.Client, method string, req, resp proto.Message) error {
		rc := ipc.NewClient(ipc.ClientConfig{Addresses: c.NameNodeAddrs(), Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol",
			Kerberos: &security.Initiator{Client: kc, Principal: "nn/_HOST@" + realm}, Protection: security.QOPPrivacy})
		defer rc.Close()
		return rc.Call(ctx, method, req, resp)
	}
	var got common.GetDelegationTokenResponseProto
	if err := nnCall(alice, "getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String("hdfs@" + realm)}, &got); err != nil {
		t.Fatal(err)
	}
	tok := got.GetToken()
	var got2 common.GetDelegationTokenResponseProto
	if err := nnCall(alice, "getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String("hdfs")}, &got2); err != nil {
		t.Fatal(err)
	}
	if err := nnCall(alice, "cancelDelegationToken", &common.CancelDelegationTokenRequestProto{Token: got2.GetToken()},
		&common.CancelDelegationTokenResponseProto{}); err != nil {
		t.Fatal(err)
	}
	// alice is not the renewer.
	if err := nnCall(alice, "renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: tok},
		&common.RenewDelegationTokenResponseProto{}); err == nil || !strings.Contains(err.Error(), "with non-matching renewer hdfs") {
		t.Errorf("renewal by the owner: %v", err)
	}

	nns := c.NameNodes()
	waitStandbyCaughtUp(t, nns[0], nns[1])
	if err := c.Failover(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	// On the new active the token renews and the cancelled one is gone.
	var renewed common.RenewDelegationTokenResponseProto
	if err := nnCall(hdfsKrb, "renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: tok}, &renewed); err != nil {
		t.Fatalf("renewal after the failover: %v", err)
	}
	if renewed.GetNewExpiryTime() == 0 {
		t.Error("no new expiry")
	}
	if err := nnCall(hdfsKrb, "renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: got2.GetToken()},
		&common.RenewDelegationTokenResponseProto{}); err == nil || !strings.Contains(err.Error(), "Renewal request for unknown token") {
		t.Errorf("renewal of a cancelled token: %v", err)
	}
	forged := proto.Clone(tok).(*common.TokenProto)
	forged.Password[0] ^= 1
	if err := nnCall(hdfsKrb, "renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: forged},
		&common.RenewDelegationTokenResponseProto{}); err == nil || !strings.Contains(err.Error(), "with wrong password") {
		t.Errorf("renewal with a forged password: %v", err)
	}
	if fi, err := fsys.Stat(ctx, "/before"); err != nil || !fi.IsDir() {
		t.Fatalf("after the failover: %v %v", fi, err)
	}
	if err := fsys.Mkdir(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := fsys.Stat(ctx, "/after")
	if err != nil {
		t.Fatal(err)
	}
	if owner := fi.Status().Owner; owner != "hdfs" {
		t.Errorf("owner %q, want hdfs (the ticket's user)", owner)
	}
	// The JournalNodes and the NameNodes refuse SIMPLE callers.
	for _, addr := range append(c.JournalNodeAddrs(), c.NameNodeAddrs()...) {
		rc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: "hdfs", MaxRetries: -1,
			Protocol: "org.apache.hadoop.hdfs.qjournal.protocol.QJournalProtocol"})
		err := rc.Call(ctx, "getJournalState", &qjpb.GetJournalStateRequestProto{Jid: &qjpb.JournalIdProto{Identifier: proto.String(Nameservice)}},
			&qjpb.GetJournalStateResponseProto{})
		rc.Close()
		if err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled") {
			t.Errorf("SIMPLE call to %s: %v", addr, err)
		}
	}
}

// TestKerberosDelegationRestart: delegation tokens and master keys survive
// a NameNode restart, from the image (a token issued before
// saveNamespace) and from the edits after it (one issued after); a token
// past its max lifetime is refused.
func TestKerberosDelegationRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	kdc := krbtest.Start(t)
	realm := krbtest.Realm
	site := kdc.Secure(t, krbtest.Services{})
	hdfsKrb := kdc.ClientFromKeytab("hdfs", kdc.AddPrincipal("hdfs"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Dir: t.TempDir(), DataNodes: -1, Conf: append(site.Keys,
		conf.KeyValue{Key: conf.DFSNameNodeSafeModeExtension, Value: "0"},
		conf.KeyValue{Key: conf.DFSNameNodeDelegationTokenMaxLifetime, Value: "6000"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(method string, req, resp proto.Message) error {
		rc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol",
			Kerberos: &security.Initiator{Client: hdfsKrb, Principal: "nn/_HOST@" + realm}})
		defer rc.Close()
		return rc.Call(ctx, method, req, resp)
	}
	get := func() *common.TokenProto {
		t.Helper()
		var r common.GetDelegationTokenResponseProto
		if err := call("getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String("hdfs")}, &r); err != nil {
			t.Fatal(err)
		}
		return r.GetToken()
	}
	renew := func(tok *common.TokenProto) error {
		return call("renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: tok}, &common.RenewDelegationTokenResponseProto{})
	}
	inImage := get()
	for _, a := range []hdfs.SafeModeActionProto{hdfs.SafeModeActionProto_SAFEMODE_ENTER, -1, hdfs.SafeModeActionProto_SAFEMODE_LEAVE} {
		if a == -1 {
			if err := call("saveNamespace", &hdfs.SaveNamespaceRequestProto{}, &hdfs.SaveNamespaceResponseProto{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := call("setSafeMode", &hdfs.SetSafeModeRequestProto{Action: a.Enum()}, &hdfs.SetSafeModeResponseProto{}); err != nil {
			t.Fatal(err)
		}
	}
	inEdits := get()
	if err := c.RestartNameNode(ctx); err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]*common.TokenProto{"from the image": inImage, "from the edits": inEdits} {
		if err := renew(tok); err != nil {
			t.Errorf("token %s after the restart: %v", name, err)
		}
	}
	// Authenticating with a token (SASL DIGEST-MD5): the owner's identity
	// without a Kerberos ticket; no new token may be had that way; a
	// forged password and a cancelled token are refused.
	withToken := func(tok *common.TokenProto, method string, req, resp proto.Message) error {
		rc := ipc.NewClient(ipc.ClientConfig{Addresses: []string{c.NameNodeAddr()}, Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol",
			Token: tok, TokenUser: "hdfs@" + realm, MaxRetries: -1})
		defer rc.Close()
		return rc.Call(ctx, method, req, resp)
	}
	var fi hdfs.GetFileInfoResponseProto
	if err := withToken(inEdits, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &fi); err != nil || fi.GetFs() == nil {
		t.Fatalf("call with a delegation token: %v", err)
	}
	if err := withToken(inEdits, "mkdirs", &hdfs.MkdirsRequestProto{Src: proto.String("/by-token"), Masked: &hdfs.FsPermissionProto{Perm: proto.Uint32(0o755)},
		CreateParent: proto.Bool(true)}, &hdfs.MkdirsResponseProto{}); err != nil {
		t.Fatalf("mkdirs with a delegation token: %v", err)
	}
	if err := withToken(inEdits, "getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String("hdfs")},
		&common.GetDelegationTokenResponseProto{}); err == nil || !strings.Contains(err.Error(), "only with kerberos or web authentication") {
		t.Errorf("a token asked with a token: %v", err)
	}
	forged := proto.Clone(inEdits).(*common.TokenProto)
	forged.Password[1] ^= 1
	if err := withToken(forged, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &fi); err == nil || !strings.Contains(err.Error(), "digest response does not match") {
		t.Errorf("forged token: %v", err)
	}
	gone := get()
	if err := call("cancelDelegationToken", &common.CancelDelegationTokenRequestProto{Token: gone}, &common.CancelDelegationTokenResponseProto{}); err != nil {
		t.Fatal(err)
	}
	if err := withToken(gone, "getFileInfo", &hdfs.GetFileInfoRequestProto{Src: proto.String("/")}, &fi); err == nil || !strings.Contains(err.Error(), "can't be found") {
		t.Errorf("cancelled token: %v", err)
	}

	// Max lifetime 6 s.
	time.Sleep(time.Until(time.UnixMilli(maxDate(t, inImage)).Add(200 * time.Millisecond)))
	if err := renew(inImage); err == nil || !strings.Contains(err.Error(), "tried to renew an expired token") {
		t.Errorf("renewal past the max lifetime: %v", err)
	}
}

func maxDate(t *testing.T, tok *common.TokenProto) int64 {
	t.Helper()
	id, err := dtoken.Unmarshal(tok.GetIdentifier())
	if err != nil {
		t.Fatal(err)
	}
	return id.MaxDate
}
