// Package ha holds the NameNode's high-availability rules as pure
// functions: the HA states and the transitions between them, the operation
// categories every RPC method belongs to, and which categories each state
// serves. It does no I/O and keeps no state; package namenode drives the
// transitions (stopping and starting the services of each state) and asks
// Check before every call.
//
// # States
//
//	INITIALIZING ──start, non-HA──▶ ACTIVE
//	     │
//	     └──start, HA──▶ STANDBY ⇄ ACTIVE        (transitionToActive / transitionToStandby)
//	                        │         │
//	                        └────┬────┘
//	                             ▼
//	                          STOPPING           (shutdown, from any state)
//
// An HA NameNode always starts in standby: only an administrator (hdfs
// haadmin) or a failover controller makes one active, after fencing the
// old one. A standby tails the shared edits and serves only UNCHECKED
// calls, and READ calls when dfs.ha.allow.stale.reads is set; an active
// serves everything.
//
// # Operation categories
//
//	UNCHECKED   served in every state: HA and safe-mode administration,
//	            DataNode reports, getHAServiceState
//	READ        namespace and block reads
//	WRITE       namespace mutations, leases, block allocation
//	CHECKPOINT  the Checkpoint and Backup nodes' calls (startCheckpoint, ...)
//	JOURNAL     the edit log's own calls (rollEditLog), and the active's
//	            stream to a Backup Node (JournalProtocol)
//
// A Backup or Checkpoint Node is not in an HA state but in a role: CheckAt
// serves UNCHECKED, CHECKPOINT and JOURNAL there, READ on a Backup Node
// only, and answers the rest with "Operation category X is not supported
// at Backup Node".
package ha

import "fmt"

// State is a NameNode's HA state (HAServiceProtocol's HAServiceState).
type State int

// States, in Hadoop's names.
const (
	Initializing State = iota
	Standby
	Active
	Stopping
)

func (s State) String() string {
	switch s {
	case Initializing:
		return "initializing"
	case Standby:
		return "standby"
	case Active:
		return "active"
	case Stopping:
		return "stopping"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Category is an RPC method's operation category (Hadoop's
// NameNode.OperationCategory).
type Category int

// Categories.
const (
	Unchecked Category = iota
	Read
	Write
	Checkpoint
	Journal
)

func (c Category) String() string {
	switch c {
	case Unchecked:
		return "UNCHECKED"
	case Read:
		return "READ"
	case Write:
		return "WRITE"
	case Checkpoint:
		return "CHECKPOINT"
	case Journal:
		return "JOURNAL"
	}
	return fmt.Sprintf("Category(%d)", int(c))
}

// StandbyError is what a call of a category the state does not serve gets:
// org.apache.hadoop.ipc.StandbyException, on which clients fail over to the
// next NameNode.
type StandbyError struct {
	Category Category
	State    State
	// At names the node's role when it is not a NameNode proper ("Backup
	// Node", "Checkpoint Node"): the message then says so, as Hadoop's
	// Backup Node does.
	At string
}

func (e *StandbyError) Error() string {
	if e.At != "" {
		return fmt.Sprintf("Operation category %s is not supported at %s", e.Category, e.At)
	}
	return fmt.Sprintf("Operation category %s is not supported in state %s. Visit https://s.apache.org/sbnn-error", e.Category, e.State)
}

// Check reports whether a call of category c may run in state s.
func Check(s State, c Category, allowStaleReads bool) error {
	switch {
	case s == Active, c == Unchecked:
		return nil
	case s == Standby && c == Read && allowStaleReads:
		return nil
	}
	return &StandbyError{Category: c, State: s}
}

// CheckAt is Check for a node that is not a NameNode proper: a Backup Node
// or a Checkpoint Node (role names it). They serve UNCHECKED, CHECKPOINT and
// JOURNAL calls; a Backup Node, whose namespace follows the active's,
// serves READ calls too (serveReads); nothing else.
func CheckAt(role string, serveReads bool, c Category) error {
	switch c {
	case Unchecked, Checkpoint, Journal:
		return nil
	case Read:
		if serveReads {
			return nil
		}
	}
	return &StandbyError{Category: c, State: Standby, At: role}
}

// ErrTransition is a transition the state machine does not allow.
type ErrTransition struct {
	From, To State
}

func (e *ErrTransition) Error() string {
	return fmt.Sprintf("Transition from state %s to %s is not allowed", e.From, e.To)
}

// CanTransition reports whether from may move to to. A transition to the
// state a NameNode is in is allowed and does nothing (Hadoop answers it
// without work, so that a failover controller may repeat itself).
func CanTransition(from, to State) error {
	switch {
	case from == to, to == Stopping:
		return nil
	case from == Initializing && (to == Standby || to == Active):
		return nil
	case from == Standby && to == Active, from == Active && to == Standby:
		return nil
	}
	return &ErrTransition{From: from, To: to}
}
