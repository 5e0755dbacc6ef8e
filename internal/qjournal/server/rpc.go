package server

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	hdfspb "github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	qpb "github.com/hdfsgo/hdfsgo/internal/proto/qjournal"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/quorum"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// refusalClass is the Java class of each kind of refusal.
var refusalClass = map[quorum.Kind]string{
	quorum.KindIO:              remoteerr.ClassIOException,
	quorum.KindOutOfSync:       remoteerr.ClassJournalOutOfSync,
	quorum.KindIllegalArgument: remoteerr.ClassIllegalArgument,
	quorum.KindIllegalState:    remoteerr.ClassIllegalState,
	quorum.KindAssertion:       remoteerr.ClassAssertion,
}

// rpcErr translates a journal's error for the wire: a refusal gets its
// Java class; a bad journal id is IllegalArgumentException; the rest keeps
// the class remoteerr gives it (IOException for I/O errors).
func rpcErr(err error) error {
	if err == nil {
		return nil
	}
	var r *quorum.Refusal
	if errors.As(err, &r) {
		return remoteerr.New(refusalClass[r.Kind], "%s", r.Msg)
	}
	if errors.Is(err, protocol.ErrBadJournalID) {
		return remoteerr.New(remoteerr.ClassIllegalArgument, "%v", err)
	}
	return err
}

func unsupported(method string) error {
	return remoteerr.New(remoteerr.ClassUnsupported, "QJournalProtocol.%s is not supported by this JournalNode: journal upgrade and rollback are not implemented", method)
}

// clientOf names the caller in refusals: its IP.
func clientOf(ctx context.Context) string {
	if c, ok := ipc.CallerFromContext(ctx); ok && c.Remote != nil {
		if h, _, err := net.SplitHostPort(c.Remote.String()); err == nil {
			return "/" + h
		}
		return c.Remote.String()
	}
	return "unknown"
}

func requestOf(r *qpb.RequestInfoProto) quorum.Request {
	q := quorum.Request{Epoch: r.GetEpoch(), Serial: r.GetIpcSerialNumber()}
	if r.CommittedTxId != nil {
		q.Committed, q.HasCommitted = int64(r.GetCommittedTxId()), true
	}
	return q
}

// namespaceOf reads a NamespaceInfoProto.
func namespaceOf(p *hdfspb.NamespaceInfoProto) NamespaceInfo {
	si := p.GetStorageInfo()
	return NamespaceInfo{LayoutVersion: int32(si.GetLayoutVersion()), NamespaceID: int32(si.GetNamespceID()),
		ClusterID: si.GetClusterID(), CTime: int64(si.GetCTime()), BlockPoolID: p.GetBlockPoolID()}
}

// fromURL is the JournalNode's web address (GetJournalStateResponseProto's
// fromURL and httpPort). Callers keep the host they reached the RPC server
// on and take the scheme and port from it, as Hadoop's do.
func (jn *JournalNode) fromURL(context.Context) (string, uint32) {
	addr := jn.web.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	return (&url.URL{Scheme: "http", Host: addr}).String(), uint32(p)
}

func (jn *JournalNode) journalFor(id *qpb.JournalIdProto) (*Journal, error) {
	j, err := jn.journal(id.GetIdentifier())
	return j, rpcErr(err)
}

func (jn *JournalNode) manifest(ctx context.Context, req *qpb.GetEditLogManifestRequestProto) (*qpb.GetEditLogManifestResponseProto, error) {
	j, err := jn.journalFor(req.GetJid())
	if err != nil {
		return nil, err
	}
	logs, committed, err := j.Manifest(int64(req.GetSinceTxId()), req.GetInProgressOk())
	if err != nil {
		return nil, rpcErr(err)
	}
	m := &hdfspb.RemoteEditLogManifestProto{}
	if committed > 0 {
		m.CommittedTxnId = proto.Uint64(uint64(committed))
	}
	for _, l := range logs {
		m.Logs = append(m.Logs, &hdfspb.RemoteEditLogProto{StartTxId: proto.Uint64(uint64(l.Start)),
			EndTxId: proto.Uint64(uint64(l.End)), IsInProgress: proto.Bool(l.InProgress)})
	}
	u, port := jn.fromURL(ctx)
	return &qpb.GetEditLogManifestResponseProto{Manifest: m, HttpPort: proto.Uint32(port), FromURL: proto.String(u)}, nil
}

// registerRPC serves QJournalProtocol and InterQJournalProtocol.
func (jn *JournalNode) registerRPC() {
	svc := jn.rpc.Service(protocol.QJournalProtocol)
	svc.Describe(qpb.File_qjournal_QJournalProtocol_proto.Services().ByName("QJournalProtocolService"))
	ipc.Handle(svc, "isFormatted", func(ctx context.Context, req *qpb.IsFormattedRequestProto) (*qpb.IsFormattedResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		return &qpb.IsFormattedResponseProto{IsFormatted: proto.Bool(j.IsFormatted())}, nil
	})
	ipc.Handle(svc, "format", func(ctx context.Context, req *qpb.FormatRequestProto) (*qpb.FormatResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		return &qpb.FormatResponseProto{}, rpcErr(j.Format(namespaceOf(req.GetNsInfo()), req.GetForce()))
	})
	ipc.Handle(svc, "getJournalState", func(ctx context.Context, req *qpb.GetJournalStateRequestProto) (*qpb.GetJournalStateResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		e, err := j.JournalState()
		if err != nil {
			return nil, rpcErr(err)
		}
		u, port := jn.fromURL(ctx)
		return &qpb.GetJournalStateResponseProto{LastPromisedEpoch: proto.Uint64(e), HttpPort: proto.Uint32(port), FromURL: proto.String(u)}, nil
	})
	ipc.Handle(svc, "newEpoch", func(ctx context.Context, req *qpb.NewEpochRequestProto) (*qpb.NewEpochResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		last, err := j.NewEpoch(namespaceOf(req.GetNsInfo()), req.GetEpoch(), clientOf(ctx))
		if err != nil {
			return nil, rpcErr(err)
		}
		resp := &qpb.NewEpochResponseProto{}
		if last > 0 {
			resp.LastSegmentTxId = proto.Uint64(uint64(last))
		}
		return resp, nil
	})
	ipc.Handle(svc, "journal", func(ctx context.Context, req *qpb.JournalRequestProto) (*qpb.JournalResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		return &qpb.JournalResponseProto{}, rpcErr(j.Journal(requestOf(req.GetReqInfo()), clientOf(ctx),
			int64(req.GetSegmentTxnId()), int64(req.GetFirstTxnId()), int(req.GetNumTxns()), req.GetRecords()))
	})
	ipc.Handle(svc, "heartbeat", func(ctx context.Context, req *qpb.HeartbeatRequestProto) (*qpb.HeartbeatResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		return &qpb.HeartbeatResponseProto{}, rpcErr(j.Heartbeat(requestOf(req.GetReqInfo()), clientOf(ctx)))
	})
	ipc.Handle(svc, "startLogSegment", func(ctx context.Context, req *qpb.StartLogSegmentRequestProto) (*qpb.StartLogSegmentResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		return &qpb.StartLogSegmentResponseProto{}, rpcErr(j.StartLogSegment(requestOf(req.GetReqInfo()), clientOf(ctx),
			int64(req.GetTxid()), req.GetLayoutVersion()))
	})
	ipc.Handle(svc, "finalizeLogSegment", func(ctx context.Context, req *qpb.FinalizeLogSegmentRequestProto) (*qpb.FinalizeLogSegmentResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		return &qpb.FinalizeLogSegmentResponseProto{}, rpcErr(j.FinalizeLogSegment(requestOf(req.GetReqInfo()), clientOf(ctx),
			int64(req.GetStartTxId()), int64(req.GetEndTxId())))
	})
	ipc.Handle(svc, "purgeLogs", func(ctx context.Context, req *qpb.PurgeLogsRequestProto) (*qpb.PurgeLogsResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		return &qpb.PurgeLogsResponseProto{}, rpcErr(j.PurgeLogs(requestOf(req.GetReqInfo()), clientOf(ctx), int64(req.GetMinTxIdToKeep())))
	})
	ipc.Handle(svc, "getEditLogManifest", jn.manifest)
	ipc.Handle(svc, "getJournaledEdits", func(ctx context.Context, req *qpb.GetJournaledEditsRequestProto) (*qpb.GetJournaledEditsResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		max := int(min(req.GetMaxTxns(), 1<<20))
		data, n, err := j.JournaledEdits(int64(req.GetSinceTxId()), max)
		if err != nil {
			return nil, rpcErr(err)
		}
		resp := &qpb.GetJournaledEditsResponseProto{TxnCount: proto.Uint32(uint32(n))}
		if n > 0 {
			resp.EditLog = data
		}
		return resp, nil
	})
	ipc.Handle(svc, "prepareRecovery", func(ctx context.Context, req *qpb.PrepareRecoveryRequestProto) (*qpb.PrepareRecoveryResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		r, err := j.PrepareRecovery(requestOf(req.GetReqInfo()), clientOf(ctx), int64(req.GetSegmentTxId()))
		if err != nil {
			return nil, rpcErr(err)
		}
		resp := &qpb.PrepareRecoveryResponseProto{LastWriterEpoch: proto.Uint64(r.LastWriterEpoch)}
		if r.Segment != nil {
			resp.SegmentState = toProto(*r.Segment)
		}
		if r.HasAccepted {
			resp.AcceptedInEpoch = proto.Uint64(r.AcceptedInEpoch)
		}
		if r.HasCommitted {
			resp.LastCommittedTxId = proto.Uint64(uint64(r.LastCommittedTxID))
		}
		return resp, nil
	})
	ipc.Handle(svc, "acceptRecovery", func(ctx context.Context, req *qpb.AcceptRecoveryRequestProto) (*qpb.AcceptRecoveryResponseProto, error) {
		j, err := jn.journalFor(req.GetReqInfo().GetJournalId())
		if err != nil {
			return nil, err
		}
		if err := j.AcceptRecovery(ctx, requestOf(req.GetReqInfo()), clientOf(ctx), fromProto(req.GetStateToAccept()), req.GetFromURL()); err != nil {
			jn.deps.Logger.Warn("acceptRecovery failed", "journal", j.jid, "segment", fromProto(req.GetStateToAccept()).String(), "err", err)
			return nil, rpcErr(err)
		}
		return &qpb.AcceptRecoveryResponseProto{}, nil
	})
	ipc.Handle(svc, "discardSegments", func(ctx context.Context, req *qpb.DiscardSegmentsRequestProto) (*qpb.DiscardSegmentsResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		return &qpb.DiscardSegmentsResponseProto{}, rpcErr(j.DiscardSegments(int64(req.GetStartTxId())))
	})
	ipc.Handle(svc, "getJournalCTime", func(ctx context.Context, req *qpb.GetJournalCTimeRequestProto) (*qpb.GetJournalCTimeResponseProto, error) {
		j, err := jn.journalFor(req.GetJid())
		if err != nil {
			return nil, err
		}
		c, err := j.CTime()
		if err != nil {
			return nil, rpcErr(err)
		}
		return &qpb.GetJournalCTimeResponseProto{ResultCTime: proto.Int64(c)}, nil
	})
	ipc.Handle(svc, "doPreUpgrade", func(ctx context.Context, req *qpb.DoPreUpgradeRequestProto) (*qpb.DoPreUpgradeResponseProto, error) {
		return nil, unsupported("doPreUpgrade")
	})
	ipc.Handle(svc, "doUpgrade", func(ctx context.Context, req *qpb.DoUpgradeRequestProto) (*qpb.DoUpgradeResponseProto, error) {
		return nil, unsupported("doUpgrade")
	})
	ipc.Handle(svc, "doFinalize", func(ctx context.Context, req *qpb.DoFinalizeRequestProto) (*qpb.DoFinalizeResponseProto, error) {
		return nil, unsupported("doFinalize")
	})
	ipc.Handle(svc, "canRollBack", func(ctx context.Context, req *qpb.CanRollBackRequestProto) (*qpb.CanRollBackResponseProto, error) {
		return nil, unsupported("canRollBack")
	})
	ipc.Handle(svc, "doRollback", func(ctx context.Context, req *qpb.DoRollbackRequestProto) (*qpb.DoRollbackResponseProto, error) {
		return nil, unsupported("doRollback")
	})

	inter := jn.rpc.Service(protocol.InterQJournalProtocol)
	inter.Describe(qpb.File_qjournal_InterQJournalProtocol_proto.Services().ByName("InterQJournalProtocolService"))
	ipc.Handle(inter, "getEditLogManifestFromJournal", jn.manifest)
}
