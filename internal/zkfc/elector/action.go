package elector

import (
	"encoding/hex"
	"fmt"
	"time"
)

// ActionKind says what an Action asks of the driver. The kinds marked
// "answer" must be answered by the named method before anything else.
type ActionKind int

// Action kinds.
const (
	// OpenSession: open ZooKeeper session Session (connect, authenticate);
	// answer SessionOpened.
	OpenSession ActionKind = iota
	// CloseSession: close session Session (its ephemeral lock goes with
	// it). No answer.
	CloseSession
	// CreateLock: create the ephemeral lock znode holding Data; answer
	// LockCreated.
	CreateLock
	// StatLock: exists(lock) with a watch; answer LockStat. The watch's
	// event comes later as LockDeleted or LockChanged.
	StatLock
	// ReadBreadcrumb: read the breadcrumb znode; answer BreadcrumbRead.
	ReadBreadcrumb
	// FenceOldActive: fence the service Data names (graceful
	// transitionToStandby, then the fencing methods); answer Fenced.
	FenceOldActive
	// WriteBreadcrumb: create the breadcrumb holding Data (Create) or set
	// it at Version; answer BreadcrumbWritten.
	WriteBreadcrumb
	// DeleteBreadcrumb: delete the breadcrumb if it holds Data, best
	// effort. No answer.
	DeleteBreadcrumb
	// MakeActive: transitionToActive on the local service; answer
	// BecameActive.
	MakeActive
	// MakeStandby: transitionToStandby on the local service; answer
	// BecameStandby.
	MakeStandby
	// CedeStandby: transitionToStandby on the local service for a cede;
	// answer CedeStandbyDone.
	CedeStandby
	// StartTimer: call Fire(Timer) after After. No answer.
	StartTimer
	// RecordAttempt: an attempt to become active ended (OK, Msg); a
	// graceful failover waits for it. No answer.
	RecordAttempt
	// Fatal: the controller cannot go on (Msg); it stops. No answer.
	Fatal
	// Log: log Msg at Level. No answer.
	Log
)

// Level is a log level.
type Level int

// Log levels.
const (
	LevelDebug Level = iota - 1
	LevelInfo
	LevelWarn
	LevelError
)

func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "DEBUG"
	case LevelInfo:
		return "INFO"
	case LevelWarn:
		return "WARN"
	case LevelError:
		return "ERROR"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// TimerKind says what a timer is for.
type TimerKind int

// Timer kinds.
const (
	// TimerRecheck ends a cede (or the pause after a state mismatch).
	TimerRecheck TimerKind = iota
	// TimerRejoin ends the pause after a failure to become active.
	TimerRejoin
	// TimerReconnect ends the pause between attempts to open a session.
	TimerReconnect
)

// Timer names a timer; Gen tells a current timer from a voided one.
type Timer struct {
	Kind TimerKind
	Gen  int
}

func (t Timer) String() string {
	name := [...]string{"recheck", "rejoin", "reconnect"}
	if int(t.Kind) < len(name) {
		return fmt.Sprintf("%s#%d", name[t.Kind], t.Gen)
	}
	return fmt.Sprintf("timer(%d)#%d", int(t.Kind), t.Gen)
}

// Action is one thing the driver must do.
type Action struct {
	Kind    ActionKind
	Session int
	Data    []byte
	Create  bool
	Version int32
	Timer   Timer
	After   time.Duration
	OK      bool
	Level   Level
	Msg     string
}

// String is the action as the transcripts show it.
func (a Action) String() string {
	switch a.Kind {
	case OpenSession:
		return fmt.Sprintf("open-session %d", a.Session)
	case CloseSession:
		return fmt.Sprintf("close-session %d", a.Session)
	case CreateLock:
		return fmt.Sprintf("create-lock session=%d data=%s", a.Session, printable(a.Data))
	case StatLock:
		return fmt.Sprintf("stat-lock session=%d", a.Session)
	case ReadBreadcrumb:
		return fmt.Sprintf("read-breadcrumb session=%d", a.Session)
	case FenceOldActive:
		return fmt.Sprintf("fence data=%s", printable(a.Data))
	case WriteBreadcrumb:
		if a.Create {
			return fmt.Sprintf("write-breadcrumb session=%d create data=%s", a.Session, printable(a.Data))
		}
		return fmt.Sprintf("write-breadcrumb session=%d version=%d data=%s", a.Session, a.Version, printable(a.Data))
	case DeleteBreadcrumb:
		return fmt.Sprintf("delete-breadcrumb session=%d data=%s", a.Session, printable(a.Data))
	case MakeActive:
		return "make-active"
	case MakeStandby:
		return "make-standby"
	case CedeStandby:
		return "cede-standby"
	case StartTimer:
		return fmt.Sprintf("timer %v after %v", a.Timer, a.After)
	case RecordAttempt:
		return fmt.Sprintf("attempt ok=%t %q", a.OK, a.Msg)
	case Fatal:
		return fmt.Sprintf("fatal %q", a.Msg)
	case Log:
		return fmt.Sprintf("log %v %s", a.Level, a.Msg)
	}
	return fmt.Sprintf("action(%d)", int(a.Kind))
}

// printable is data as text when it is, else hex.
func printable(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return hex.EncodeToString(b)
		}
	}
	return string(b)
}
