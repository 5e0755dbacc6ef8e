package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/imagetransfer"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	hdfspb "github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func rpcClient(t *testing.T, addr string) *ipc.Client {
	c := ipc.NewClient(ipc.ClientConfig{Addresses: []string{addr}, User: "hdfs", Protocol: protocol.QJournalProtocol, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

func jidProto(id string) *qpb.JournalIdProto {
	return &qpb.JournalIdProto{Identifier: proto.String(id)}
}

// TestRefusals: the JournalNode's answers to calls it must refuse carry
// Hadoop's exception classes.
func TestRefusals(t *testing.T) {
	s := startJNs(t, 1, nil)
	c := rpcClient(t, s.addrs[0])
	ctx := context.Background()
	var st qpb.GetJournalStateResponseProto
	err := c.Call(ctx, "getJournalState", &qpb.GetJournalStateRequestProto{Jid: jidProto("fresh")}, &st)
	if !errors.Is(err, remoteerr.ErrJournalNotFormatted) || !strings.Contains(err.Error(), "not formatted ; journal id: fresh") {
		t.Errorf("an unformatted journal: %v", err)
	}
	err = c.Call(ctx, "getJournalState", &qpb.GetJournalStateRequestProto{Jid: jidProto(".bad")}, &st)
	if !errors.Is(err, remoteerr.ErrInvalidRequest) && !strings.Contains(err.Error(), "IllegalArgumentException") {
		t.Errorf("a bad journal id: %v", err)
	}
	for _, m := range []struct {
		name string
		req  proto.Message
		resp proto.Message
	}{
		{"doPreUpgrade", &qpb.DoPreUpgradeRequestProto{Jid: jidProto(jid)}, &qpb.DoPreUpgradeResponseProto{}},
		{"doUpgrade", &qpb.DoUpgradeRequestProto{Jid: jidProto(jid), SInfo: storageInfo()}, &qpb.DoUpgradeResponseProto{}},
		{"doFinalize", &qpb.DoFinalizeRequestProto{Jid: jidProto(jid)}, &qpb.DoFinalizeResponseProto{}},
		{"canRollBack", &qpb.CanRollBackRequestProto{Jid: jidProto(jid), Storage: storageInfo(), PrevStorage: storageInfo(),
			TargetLayoutVersion: proto.Int32(-1)}, &qpb.CanRollBackResponseProto{}},
		{"doRollback", &qpb.DoRollbackRequestProto{Jid: jidProto(jid)}, &qpb.DoRollbackResponseProto{}},
	} {
		err := c.Call(ctx, m.name, m.req, m.resp)
		if !errors.Is(err, remoteerr.ErrUnsupported) || !strings.Contains(err.Error(), "QJournalProtocol."+m.name+" is not supported") {
			t.Errorf("%s: %v", m.name, err)
		}
	}
	// A journal() batch that is not whole records is refused and nothing
	// is written.
	s.format()
	w := s.newWriter(nil)
	w.become()
	last, err := w.mkdirs("a", 3)
	if err != nil {
		t.Fatal(err)
	}
	good := encodeMkdirs(t, last+1, 2)
	req := &qpb.JournalRequestProto{ReqInfo: &qpb.RequestInfoProto{JournalId: jidProto(jid), Epoch: proto.Uint64(1),
		IpcSerialNumber: proto.Uint64(1 << 40)}, FirstTxnId: proto.Uint64(uint64(last + 1)), NumTxns: proto.Uint32(2),
		Records: good[:len(good)-1], SegmentTxnId: proto.Uint64(1)}
	err = c.Call(ctx, "journal", req, &qpb.JournalResponseProto{})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a torn batch: %v", err)
	}
	if got := s.journal(0).Status().HighestWrittenTxID; got != last {
		t.Errorf("after a refused batch the journal holds up to %d, want %d", got, last)
	}
	// A serial number not above the last one is out of sync.
	req.Records, req.ReqInfo.IpcSerialNumber = good, proto.Uint64(0)
	err = c.Call(ctx, "journal", req, &qpb.JournalResponseProto{})
	if !errors.Is(err, remoteerr.ErrJournalOutOfSync) || !strings.Contains(err.Error(), "IPC serial 0 from client /127.0.0.1 was not higher than prior highest IPC serial") {
		t.Errorf("an old serial number: %v", err)
	}
}

func storageInfo() *hdfspb.StorageInfoProto {
	return &hdfspb.StorageInfoProto{LayoutVersion: proto.Uint32(1), NamespceID: proto.Uint32(1), ClusterID: proto.String("c"), CTime: proto.Uint64(0)}
}

func encodeMkdirs(t *testing.T, first int64, n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		var err error
		if b, err = editlog.EncodeRecord(b, first+int64(i), mkdirOp(i)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestPromisePersists: the promised and writer epochs and the committed
// txid survive a restart of the JournalNode, in Hadoop's files.
func TestPromisePersists(t *testing.T) {
	s := startJNs(t, 3, nil)
	s.format()
	a := s.newWriter(nil)
	a.become()
	if _, err := a.mkdirs("a", 5); err != nil {
		t.Fatal(err)
	}
	b := s.newWriter(nil)
	b.become() // epoch 2
	if _, err := b.mkdirs("b", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := b.mkdirs("c", 1); err != nil { // carries the committed txid of b's batch
		t.Fatal(err)
	}
	// A quorum of two acknowledged; wait until node 0 has it all too.
	for deadline := time.Now().Add(10 * time.Second); ; {
		st := s.journal(0).Status()
		if st.LastPromisedEpoch == 2 && st.LastWriterEpoch == 2 && st.CommittedTxID > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 0 did not catch up: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.stop(0)
	cur := filepath.Join(s.dirs[0], jid, "current")
	for name, want := range map[string]string{"last-promised-epoch": "2\n", "last-writer-epoch": "2\n"} {
		got, err := os.ReadFile(filepath.Join(cur, name))
		if err != nil || string(got) != want {
			t.Errorf("%s holds %q, %v; want %q", name, got, err, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(cur, "committed-txid")); err != nil || string(got) == "" {
		t.Errorf("committed-txid: %q %v", got, err)
	}
	s.start(0)
	st := s.journal(0).Status()
	if st.LastPromisedEpoch != 2 || st.LastWriterEpoch != 2 || st.CommittedTxID == 0 {
		t.Fatalf("after a restart: %+v", st)
	}
	// The first writer stays fenced by the restarted node too.
	if _, err := a.mkdirs("late", 1); err == nil {
		t.Fatal("the fenced writer wrote after a JournalNode restart")
	}
}

// TestGetJournal: /getJournal serves a segment byte for byte, and refuses
// bad queries (400), another namespace (403) and unknown segments (404).
func TestGetJournal(t *testing.T) {
	s := startJNs(t, 1, nil)
	s.format()
	w := s.newWriter(nil)
	w.become()
	if _, err := w.mkdirs("a", 4); err != nil {
		t.Fatal(err)
	}
	if _, err := w.roll(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.nodes[0].HTTPAddr().String()
	si := imagetransfer.StorageInfoOf(version).String()
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(protocol.GetJournalURL(base, jid, 1, si))
	want, _ := os.ReadFile(filepath.Join(s.dirs[0], jid, "current", editlog.FinalizedName(1, 6)))
	if code != 200 || body != string(want) || len(want) == 0 {
		t.Fatalf("GET segment 1: %d, %d bytes (want %d)", code, len(body), len(want))
	}
	for _, tc := range []struct {
		url  string
		code int
		text string
	}{
		{base + "/getJournal?jid=" + jid, 400, "missing segmentTxId"},
		{base + "/getJournal?jid=" + jid + "&segmentTxId=x", 400, "not a positive txid"},
		{protocol.GetJournalURL(base, jid, 1, "-1:1:0:CID-other"), 403, "This node has storage info '" + si + "' but the requesting node expected '-1:1:0:CID-other'"},
		{protocol.GetJournalURL(base, jid, 99, si), 404, "No edit log found starting at txid 99"},
		{protocol.GetJournalURL(base, "nosuch", 1, si), 404, "No journal"},
	} {
		code, body := get(tc.url)
		if code != tc.code || !strings.Contains(body, tc.text) {
			t.Errorf("GET %s: %d %q, want %d %q", tc.url, code, body, tc.code, tc.text)
		}
	}
	// The JMX bean and the status page.
	code, body = get(base + "/jmx?qry=Hadoop:service=JournalNode,name=Journal-" + jid)
	for _, k := range []string{`"LastPromisedEpoch": 1`, `"LastWriterEpoch": 1`, `"TxnsWritten"`, `"BatchesWritten"`, `"Syncs60sNumOps"`, `"CurrentLagTxns": 0`} {
		if code != 200 || !strings.Contains(body, k) {
			t.Errorf("/jmx lacks %s: %d %s", k, code, body)
		}
	}
	code, body = get(base + "/")
	if code != 200 || !strings.Contains(body, "JournalNode") || !strings.Contains(body, fmt.Sprintf("<td>%s</td>", jid)) {
		t.Errorf("status page: %d %s", code, body)
	}
}
