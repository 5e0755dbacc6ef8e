package conf

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by this package. Value errors arrive wrapped in a
// *ValueError naming the key, the value and where it came from.
var (
	// ErrNotSet: the key has no value (or an empty one) and the getter
	// needs one.
	ErrNotSet = errors.New("conf: not set")
	// ErrInvalidInt: the value is not a decimal or 0x-hex integer in range.
	ErrInvalidInt = errors.New("conf: invalid integer")
	// ErrInvalidBool: the value is neither "true" nor "false".
	ErrInvalidBool = errors.New("conf: invalid boolean")
	// ErrInvalidFloat: the value is not a floating point number.
	ErrInvalidFloat = errors.New("conf: invalid float")
	// ErrInvalidDuration: the value is not an integer with an optional
	// ns/us/ms/s/m/h/d suffix, or it overflows.
	ErrInvalidDuration = errors.New("conf: invalid duration")
	// ErrInvalidSize: the value is not an integer with an optional
	// k/m/g/t/p/e suffix, or it overflows.
	ErrInvalidSize = errors.New("conf: invalid size")
	// ErrExpansionDepth: ${var} substitution did not finish within
	// MaxSubstitutions steps (usually a cycle).
	ErrExpansionDepth = errors.New("conf: variable substitution depth too large")
	// ErrMalformed: a configuration file is not well-formed XML or not a
	// <configuration> document.
	ErrMalformed = errors.New("conf: malformed configuration file")
	// ErrInclude: a configuration file uses XInclude, which is not supported.
	ErrInclude = errors.New("conf: xi:include is not supported")
	// ErrTooLarge: a configuration file is larger than MaxFileSize.
	ErrTooLarge = errors.New("conf: configuration file too large")
	// ErrNoConfDir: the configuration directory given does not exist or is
	// not a directory.
	ErrNoConfDir = errors.New("conf: configuration directory not found")
	// ErrBadOverride: a -D argument is not of the form key=value.
	ErrBadOverride = errors.New("conf: override must be key=value")
	// ErrNoNameNode: no NameNode RPC address can be derived from the
	// configuration.
	ErrNoNameNode = errors.New("conf: incorrect configuration: namenode address " +
		DFSNameNodeRPCAddress + " is not configured and " + FSDefaultFS + " is not an hdfs:// URI")
)

// ValueError reports a value that a getter could not use.
type ValueError struct {
	Key    string
	Value  string
	Source string // file path, "-D", "default", or "" when the key is unset
	Err    error  // one of the sentinels above, possibly wrapped with detail
}

func (e *ValueError) Error() string {
	reason := strings.TrimPrefix(e.Err.Error(), "conf: ")
	if e.Source == "" {
		return fmt.Sprintf("conf: %s: %s", e.Key, reason)
	}
	return fmt.Sprintf("conf: %s=%q (from %s): %s", e.Key, e.Value, e.Source, reason)
}

func (e *ValueError) Unwrap() error { return e.Err }
