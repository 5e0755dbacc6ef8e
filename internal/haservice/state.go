package haservice

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

// State is an HA service's state (Hadoop's HAServiceState).
type State int

// States. Their String forms are Hadoop's, which haadmin prints.
const (
	Initializing State = iota
	Active
	Standby
	Observer
	Stopping
)

func (s State) String() string {
	switch s {
	case Initializing:
		return "initializing"
	case Active:
		return "active"
	case Standby:
		return "standby"
	case Observer:
		return "observer"
	case Stopping:
		return "stopping"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// stateToProto is what Hadoop's server sends for s: the wire has no
// STOPPING, which goes out as INITIALIZING like any state it does not know.
func stateToProto(s State) common.HAServiceStateProto {
	switch s {
	case Active:
		return common.HAServiceStateProto_ACTIVE
	case Standby:
		return common.HAServiceStateProto_STANDBY
	case Observer:
		return common.HAServiceStateProto_OBSERVER
	}
	return common.HAServiceStateProto_INITIALIZING
}

func stateFromProto(p common.HAServiceStateProto) (State, error) {
	switch p {
	case common.HAServiceStateProto_INITIALIZING:
		return Initializing, nil
	case common.HAServiceStateProto_ACTIVE:
		return Active, nil
	case common.HAServiceStateProto_STANDBY:
		return Standby, nil
	case common.HAServiceStateProto_OBSERVER:
		return Observer, nil
	}
	return 0, fmt.Errorf("%w: Unexpected HAServiceStateProto: %v", ErrProtocol, p)
}

// RequestSource says who asks for a state change (Hadoop's
// HAServiceProtocol.RequestSource): the NameNode refuses a manual request
// when automatic failover is on, unless the user forced it, and a failover
// controller's request when it is off (see CheckStateChange).
type RequestSource int

// Request sources, as on the wire.
const (
	RequestByUser RequestSource = iota
	RequestByUserForced
	RequestByZKFC
)

func (r RequestSource) String() string {
	switch r {
	case RequestByUser:
		return "REQUEST_BY_USER"
	case RequestByUserForced:
		return "REQUEST_BY_USER_FORCED"
	case RequestByZKFC:
		return "REQUEST_BY_ZKFC"
	}
	return fmt.Sprintf("RequestSource(%d)", int(r))
}

func (r RequestSource) proto() *common.HAStateChangeRequestInfoProto {
	src := common.HARequestSource_REQUEST_BY_USER
	switch r {
	case RequestByUserForced:
		src = common.HARequestSource_REQUEST_BY_USER_FORCED
	case RequestByZKFC:
		src = common.HARequestSource_REQUEST_BY_ZKFC
	}
	return &common.HAStateChangeRequestInfoProto{ReqSource: src.Enum()}
}

func sourceFromProto(p *common.HAStateChangeRequestInfoProto) (RequestSource, error) {
	switch p.GetReqSource() {
	case common.HARequestSource_REQUEST_BY_USER:
		return RequestByUser, nil
	case common.HARequestSource_REQUEST_BY_USER_FORCED:
		return RequestByUserForced, nil
	case common.HARequestSource_REQUEST_BY_ZKFC:
		return RequestByZKFC, nil
	}
	return 0, fmt.Errorf("%w: unknown request source %v", ErrProtocol, p.GetReqSource())
}

// Status is what getServiceStatus answers (Hadoop's HAServiceStatus).
// NotReadyReason is meaningful only when ReadyToBecomeActive is false.
type Status struct {
	State               State
	ReadyToBecomeActive bool
	NotReadyReason      string
}

func (s Status) proto() *common.GetServiceStatusResponseProto {
	resp := &common.GetServiceStatusResponseProto{
		State:               stateToProto(s.State).Enum(),
		ReadyToBecomeActive: &s.ReadyToBecomeActive,
	}
	if !s.ReadyToBecomeActive {
		reason := s.NotReadyReason
		resp.NotReadyReason = &reason
	}
	return resp
}

func statusFromProto(p *common.GetServiceStatusResponseProto) (Status, error) {
	st, err := stateFromProto(p.GetState())
	if err != nil {
		return Status{}, err
	}
	s := Status{State: st, ReadyToBecomeActive: p.GetReadyToBecomeActive()}
	if !s.ReadyToBecomeActive {
		s.NotReadyReason = p.GetNotReadyReason()
	}
	return s, nil
}
