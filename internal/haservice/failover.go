package haservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Conn is a Service reached over a connection that must be closed.
type Conn interface {
	Service
	Close() error
}

// Dialer returns a connection to t whose every call is bounded by timeout
// (0: by the caller's ctx only) and retries connecting connectRetries times
// (negative: never). It must not block: connecting happens on the first
// call.
type Dialer func(t *Target, timeout time.Duration, connectRetries int) Conn

// ClientDialer is the Dialer of real services: a Client per call site, as
// Hadoop makes a proxy per call site, calling as user.
func ClientDialer(user string, cfg Config, logger *slog.Logger) Dialer {
	return func(t *Target, timeout time.Duration, retries int) Conn {
		if retries == 0 {
			retries = -1 // ClientConfig's 0 means the default of one retry
		}
		return NewClient(ClientConfig{
			Address:        t.DialAddress(),
			User:           user,
			Timeout:        timeout,
			ConnectRetries: retries,
			RetryInterval:  cfg.ConnectRetryInterval,
			DialTimeout:    cfg.ConnectTimeout,
			Logger:         logger,
			Kerberos:       cfg.Kerberos,
			Protection:     cfg.Protection,
		})
	}
}

// hadoopConnectRetries is the ipc.client.connect.max.retries Hadoop sets on
// every HA proxy.
const hadoopConnectRetries = 1

// FailoverController moves the active role from one service to another
// (Hadoop's FailoverController). It holds no state between calls and is
// safe for concurrent use, though two failovers of the same services at
// once make no sense.
type FailoverController struct {
	Config Config
	// Source is sent with every state change: RequestByUser or
	// RequestByUserForced from haadmin, RequestByZKFC from a failover
	// controller daemon.
	Source RequestSource
	Dial   Dialer
	Fencer *Fencer
	Logger *slog.Logger
}

func (fc *FailoverController) log() *slog.Logger {
	if fc.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return fc.Logger
}

// Failover makes to active in place of from:
//
//  1. pre-failover checks on to (not the same service as from; reachable;
//     standby; ready to become active unless forceActive; healthy);
//  2. graceful fence: transitionToStandby on from, bounded by
//     GracefulFenceTimeout;
//  3. if that failed, or forceFence, fence from with its fencing methods;
//     a failover whose old active could not be fenced stops here;
//  4. transitionToActive on to, bounded by NewActiveTimeout;
//  5. if that failed and from was not fenced, fail back: the same
//     sequence from to to from, forcing both the fence and the activation.
//
// Errors are *FailoverError with Hadoop's messages, except ErrNoFencer
// when from has no usable fencing configuration.
func (fc *FailoverController) Failover(ctx context.Context, from, to *Target, forceFence, forceActive bool) error {
	if !from.FencingConfigured || from.FencingErr != nil {
		if from.FencingErr != nil {
			return fmt.Errorf("%w: %w", ErrNoFencer, from.FencingErr)
		}
		return ErrNoFencer
	}
	if err := fc.preFailoverChecks(ctx, from, to, forceActive); err != nil {
		return err
	}
	tryFence := true
	if fc.TryGracefulFence(ctx, from) {
		tryFence = forceFence
	}
	if tryFence && !fc.fencer().Fence(ctx, from) {
		return &FailoverError{Msg: "Unable to fence " + from.String() + ". Fencing failed."}
	}

	conn := fc.Dial(to, fc.Config.NewActiveTimeout, hadoopConnectRetries)
	err := conn.TransitionToActive(ctx, fc.Source)
	conn.Close()
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrServiceFailed) {
		fc.log().Error(fmt.Sprintf("Unable to make %s active (%s). Failing back.", to, Message(err)))
	} else {
		fc.log().Error(fmt.Sprintf("Unable to make %s active (unable to connect). Failing back.", to), "err", err)
	}
	msg := "Unable to failover to " + to.String()
	if !tryFence {
		// The old active was not fenced, so it can take over again. The
		// new one is fenced unconditionally in case it is still becoming
		// active (its answer may only have timed out).
		if ferr := fc.Failover(ctx, to, from, true, true); ferr != nil {
			msg += ". Failback to " + from.String() + " failed (" + ferr.Error() + ")"
			fc.log().Error(msg)
		}
	}
	return &FailoverError{Msg: msg, Cause: err}
}

func (fc *FailoverController) fencer() *Fencer {
	if fc.Fencer == nil {
		return &Fencer{Timeout: fc.Config.ShellFenceTimeout, Logger: fc.Logger}
	}
	return fc.Fencer
}

// preFailoverChecks refuses a failover to a service that is the old one,
// unreachable, not standby, not ready (unless forceActive) or unhealthy.
func (fc *FailoverController) preFailoverChecks(ctx context.Context, from, to *Target, forceActive bool) error {
	if from.SameAddress(to) {
		return &FailoverError{Msg: "Can't failover a service to itself"}
	}
	conn := fc.Dial(to, fc.Config.NewActiveTimeout, hadoopConnectRetries)
	defer conn.Close()
	st, err := conn.GetServiceStatus(ctx)
	if err != nil {
		msg := "Unable to get service state for " + to.String()
		fc.log().Error(msg, "err", err)
		return &FailoverError{Msg: msg, Cause: err}
	}
	if st.State != Standby {
		return &FailoverError{Msg: "Can't failover to an " + st.State.String() + " service"}
	}
	if !st.ReadyToBecomeActive {
		if !forceActive {
			return &FailoverError{Msg: to.String() + " is not ready to become active: " + st.NotReadyReason}
		}
		fc.log().Warn("Service is not ready to become active, but forcing: " + st.NotReadyReason)
	}
	if err := conn.MonitorHealth(ctx); err != nil {
		if errors.Is(err, ErrHealthCheckFailed) {
			return &FailoverError{Msg: "Can't failover to an unhealthy service", Cause: err}
		}
		return &FailoverError{Msg: "Got an IO exception", Cause: err}
	}
	return nil
}

// TryGracefulFence asks svc to become standby, bounded by
// GracefulFenceTimeout and GracefulFenceConnectRetries, and reports whether
// it did. It is how a failover avoids fencing an old active that still
// answers.
func (fc *FailoverController) TryGracefulFence(ctx context.Context, svc *Target) bool {
	conn := fc.Dial(svc, fc.Config.GracefulFenceTimeout, fc.Config.GracefulFenceConnectRetries)
	defer conn.Close()
	err := conn.TransitionToStandby(ctx, fc.Source)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrServiceFailed):
		fc.log().Warn(fmt.Sprintf("Unable to gracefully make %s standby (%s)", svc, Message(err)))
	default:
		fc.log().Warn(fmt.Sprintf("Unable to gracefully make %s standby (unable to connect)", svc), "err", err)
	}
	return false
}

// Message is an error's text as Hadoop's getMessage gives it: a remote
// exception's message without its class, else the error's text.
func Message(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}
