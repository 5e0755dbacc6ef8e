package haservice

import (
	"context"
	"net"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Protocol is HAServiceProtocol's Java name, under which Register serves it
// and Client calls it.
const Protocol = "org.apache.hadoop.ha.HAServiceProtocol"

// Service is what a daemon implements to be managed by hdfs haadmin and a
// failover controller. Every method may be called concurrently with the
// others and with itself; each must return when ctx ends. The errors that
// reach the caller with Hadoop's classes are HealthCheckFailed,
// ServiceFailed and remoteerr.AccessControl; any other error reaches it as
// java.io.IOException with its text.
type Service interface {
	// MonitorHealth returns nil when the service is healthy and
	// HealthCheckFailed(reason) when it is not.
	MonitorHealth(ctx context.Context) error
	// TransitionToActive makes the service active; it returns only when
	// the service serves as active, and does nothing when it already is.
	TransitionToActive(ctx context.Context, src RequestSource) error
	// TransitionToStandby makes the service standby; when it returns nil
	// the service no longer acts as active (no write is accepted any
	// more). It does nothing when the service already is standby.
	TransitionToStandby(ctx context.Context, src RequestSource) error
	// TransitionToObserver makes the service an observer; a service that
	// has no observer state answers ServiceFailed.
	TransitionToObserver(ctx context.Context, src RequestSource) error
	// GetServiceStatus reports the state and whether the service could
	// become active now.
	GetServiceStatus(ctx context.Context) (Status, error)
}

// Register serves HAServiceProtocol on srv, calling svc for every method.
// The ipc server translates svc's errors with remoteerr; a request whose
// required request source is missing or unknown is refused before svc is
// called.
func Register(srv *ipc.Server, svc Service) {
	s := srv.Service(Protocol)
	s.Describe(common.File_common_HAServiceProtocol_proto.Services().ByName("HAServiceProtocolService"))
	ipc.Handle(s, "monitorHealth", func(ctx context.Context, _ *common.MonitorHealthRequestProto) (*common.MonitorHealthResponseProto, error) {
		if err := svc.MonitorHealth(ctx); err != nil {
			return nil, err
		}
		return &common.MonitorHealthResponseProto{}, nil
	})
	ipc.Handle(s, "transitionToActive", func(ctx context.Context, req *common.TransitionToActiveRequestProto) (*common.TransitionToActiveResponseProto, error) {
		src, err := sourceFromProto(req.GetReqInfo())
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
		}
		if err := svc.TransitionToActive(ctx, src); err != nil {
			return nil, err
		}
		return &common.TransitionToActiveResponseProto{}, nil
	})
	ipc.Handle(s, "transitionToStandby", func(ctx context.Context, req *common.TransitionToStandbyRequestProto) (*common.TransitionToStandbyResponseProto, error) {
		src, err := sourceFromProto(req.GetReqInfo())
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
		}
		if err := svc.TransitionToStandby(ctx, src); err != nil {
			return nil, err
		}
		return &common.TransitionToStandbyResponseProto{}, nil
	})
	ipc.Handle(s, "transitionToObserver", func(ctx context.Context, req *common.TransitionToObserverRequestProto) (*common.TransitionToObserverResponseProto, error) {
		src, err := sourceFromProto(req.GetReqInfo())
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIOException, "%v", err)
		}
		if err := svc.TransitionToObserver(ctx, src); err != nil {
			return nil, err
		}
		return &common.TransitionToObserverResponseProto{}, nil
	})
	ipc.Handle(s, "getServiceStatus", func(ctx context.Context, _ *common.GetServiceStatusRequestProto) (*common.GetServiceStatusResponseProto, error) {
		st, err := svc.GetServiceStatus(ctx)
		if err != nil {
			return nil, err
		}
		return st.proto(), nil
	})
}

// CheckStateChange is Hadoop's NameNode rule for a state change request:
// with automatic failover on, a plain user request is refused and a forced
// one allowed (forced reports true so the caller can log it); with it off,
// a failover controller's request is refused. remote names the caller in
// the refusal (its address, as ipc.CallerFromContext gives it); it may be
// nil. The refusals are AccessControlExceptions with Hadoop's texts.
func CheckStateChange(src RequestSource, autoFailover bool, remote net.Addr) (forced bool, err error) {
	switch src {
	case RequestByUser:
		if autoFailover {
			return false, remoteerr.AccessControl("Manual HA control for this NameNode is disallowed, because automatic HA is enabled.")
		}
	case RequestByUserForced:
		return autoFailover, nil
	case RequestByZKFC:
		if !autoFailover {
			return false, remoteerr.AccessControl("Request from ZK failover controller at " + remoteString(remote) + " denied since automatic HA is not enabled")
		}
	}
	return false, nil
}

// remoteString prints an address as Java prints Server.getRemoteAddress()
// (the IP without port), "null" when unknown.
func remoteString(a net.Addr) string {
	if a == nil {
		return "null"
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}
