package haservice

import (
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Errors of this package. The two that cross the wire are remoteerr's, so
// that errors.Is matches them on both sides of an RPC.
var (
	// ErrHealthCheckFailed: the service reports itself unhealthy
	// (org.apache.hadoop.ha.HealthCheckFailedException). Build one with
	// HealthCheckFailed.
	ErrHealthCheckFailed = remoteerr.ErrHealthCheckFailed
	// ErrServiceFailed: the service could not make a state transition
	// (org.apache.hadoop.ha.ServiceFailedException). Build one with
	// ServiceFailed.
	ErrServiceFailed = remoteerr.ErrServiceFailed
	// ErrFailoverFailed: a failover did not happen or did not finish; the
	// error is a *FailoverError with Hadoop's message.
	ErrFailoverFailed = errors.New("haservice: failover failed")
	// ErrNoFencer: a failover was asked for but no fencing method is
	// configured (dfs.ha.fencing.methods unset or invalid).
	ErrNoFencer = errors.New("haservice: failover requires a fencer")
	// ErrBadFencingConfig: dfs.ha.fencing.methods cannot be parsed; the
	// error is a *FenceConfigError naming the key.
	ErrBadFencingConfig = errors.New("haservice: bad fencing configuration")
	// ErrFenceUnsupported: the fencing method is known but not implemented
	// here (sshfence, powershell).
	ErrFenceUnsupported = errors.New("haservice: fencing method not supported")
	// ErrNoTarget: a service id cannot be resolved to an address.
	ErrNoTarget = errors.New("haservice: unknown HA target")
	// ErrInvalidConfig: a configuration value is out of range; the error
	// names the key.
	ErrInvalidConfig = errors.New("haservice: invalid configuration")
	// ErrProtocol: a peer sent something HAServiceProtocol does not allow.
	ErrProtocol = errors.New("haservice: protocol error")
)

// HealthCheckFailed is the error a Service's MonitorHealth returns to say
// it is unhealthy; msg reaches the caller as Hadoop's exception message.
func HealthCheckFailed(msg string) error {
	return &remoteerr.Error{Class: remoteerr.ClassHealthCheckFailed, Message: msg}
}

// ServiceFailed is the error a Service's transition returns when it could
// not make it; msg reaches the caller as Hadoop's exception message.
func ServiceFailed(msg string) error {
	return &remoteerr.Error{Class: remoteerr.ClassServiceFailed, Message: msg}
}

// FailoverError is a failover that failed (Hadoop's
// FailoverFailedException): Msg is Hadoop's text, Cause what made it.
type FailoverError struct {
	Msg   string
	Cause error
}

func (e *FailoverError) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *FailoverError) Unwrap() error { return e.Cause }

// Is matches ErrFailoverFailed.
func (e *FailoverError) Is(target error) bool { return target == ErrFailoverFailed }

// FenceConfigError is a fencing configuration that cannot be used
// (Hadoop's BadFencingConfigurationException), with the key it came from.
type FenceConfigError struct {
	Key string // e.g. dfs.ha.fencing.methods.ns1.nn1; "" when not known
	Msg string // Hadoop's text, e.g. "Unable to parse line: 'x('"
}

func (e *FenceConfigError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return fmt.Sprintf("%s: %s", e.Key, e.Msg)
}

// Is matches ErrBadFencingConfig.
func (e *FenceConfigError) Is(target error) bool { return target == ErrBadFencingConfig }
