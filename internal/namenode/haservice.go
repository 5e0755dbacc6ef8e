package namenode

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/ha"
)

// haService is the NameNode's side of HAServiceProtocol (hdfs haadmin, a
// failover controller), served on the NameNode's RPC port.
type haService struct {
	nn *NameNode
}

var _ haservice.Service = haService{}

func registerHAServiceProtocol(nn *NameNode) {
	haservice.Register(nn.rpc, haService{nn: nn})
}

func (s haService) checkSuper(ctx context.Context) error {
	return (&clientRPC{nn: s.nn, ns: s.nn.ns}).checkSuper(ctx)
}

// MonitorHealth reports the NameNode unhealthy when it failed (its edit log
// can no longer make edits durable) or when a name dir has less free space
// than dfs.namenode.resource.du.reserved.
func (s haService) MonitorHealth(ctx context.Context) error {
	if err := s.checkSuper(ctx); err != nil {
		return err
	}
	if err := s.nn.Err(); err != nil {
		return haservice.HealthCheckFailed("The NameNode has failed: " + err.Error())
	}
	for _, d := range s.nn.cfg.allDirs() {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err != nil {
			continue
		}
		if free := int64(st.Bavail) * int64(st.Bsize); free < s.nn.cfg.ResourceReserved {
			return haservice.HealthCheckFailed("The NameNode has no resources available")
		}
	}
	return nil
}

// checkChange applies Hadoop's rules for who may change the state.
func (s haService) checkChange(ctx context.Context, src haservice.RequestSource) error {
	if err := s.checkSuper(ctx); err != nil {
		return err
	}
	if !s.nn.cfg.HA.Enabled {
		return haservice.ServiceFailed("HA for namenode is not enabled")
	}
	ci, _ := ipc.CallerFromContext(ctx)
	forced, err := haservice.CheckStateChange(src, s.nn.cfg.HA.AutomaticFailover, ci.Remote)
	if err != nil {
		return err
	}
	if forced {
		s.nn.deps.Logger.Warn(fmt.Sprintf("Allowing manual HA control from %v even though automatic HA is enabled, because the user specified the force flag", ci.Remote))
	}
	return nil
}

func (s haService) TransitionToActive(ctx context.Context, src haservice.RequestSource) error {
	if err := s.checkChange(ctx, src); err != nil {
		return err
	}
	if err := s.nn.TransitionToActive(ctx); err != nil {
		return haservice.ServiceFailed(transitionMessage("active", err))
	}
	return nil
}

func (s haService) TransitionToStandby(ctx context.Context, src haservice.RequestSource) error {
	if err := s.checkChange(ctx, src); err != nil {
		return err
	}
	if err := s.nn.TransitionToStandby(ctx); err != nil {
		return haservice.ServiceFailed(transitionMessage("standby", err))
	}
	return nil
}

func (s haService) TransitionToObserver(ctx context.Context, src haservice.RequestSource) error {
	if err := s.checkChange(ctx, src); err != nil {
		return err
	}
	if s.nn.HAState() == ha.Active {
		return haservice.ServiceFailed("Cannot transition from 'active' to 'observer'")
	}
	return haservice.ServiceFailed("the observer state is not supported by this NameNode")
}

// GetServiceStatus: an active is ready; a standby is ready unless in safe
// mode; other states are not.
func (s haService) GetServiceStatus(ctx context.Context) (haservice.Status, error) {
	if err := s.checkSuper(ctx); err != nil {
		return haservice.Status{}, err
	}
	if !s.nn.cfg.HA.Enabled {
		return haservice.Status{}, haservice.ServiceFailed("HA for namenode is not enabled")
	}
	switch st := s.nn.HAState(); st {
	case ha.Active:
		return haservice.Status{State: haservice.Active, ReadyToBecomeActive: true}, nil
	case ha.Standby:
		var safe bool
		var tip string
		s.nn.ns.readLocked(func() { safe, tip = s.nn.ns.mu.bm.SafeModeStatus(s.nn.deps.Clock.Now()) })
		if safe {
			return haservice.Status{State: haservice.Standby, NotReadyReason: "The NameNode is in safemode. " + tip}, nil
		}
		return haservice.Status{State: haservice.Standby, ReadyToBecomeActive: true}, nil
	case ha.Initializing:
		return haservice.Status{State: haservice.Initializing, NotReadyReason: "State is initializing"}, nil
	default:
		return haservice.Status{State: haservice.Stopping, NotReadyReason: "State is " + st.String()}, nil
	}
}

func transitionMessage(to string, err error) string {
	var te *ha.ErrTransition
	if errors.As(err, &te) {
		return te.Error()
	}
	return fmt.Sprintf("Failed to transition to %s: %v", to, err)
}
