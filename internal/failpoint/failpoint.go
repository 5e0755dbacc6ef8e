// Package failpoint names the points, before and after each durability step
// of a storage transition (upgrade, rollback, finalize), where a crash test
// stops a NameNode or a DataNode, and arms one of them in a process only
// when a test asks for it precisely.
//
// Every failpoint is in the list below (Names); the code that owns a step
// calls Func.Hit with its name. In production Func is nil and Hit does
// nothing.
//
// # Arming in a process (tests only)
//
// A test that runs the built binary sets the environment variable
//
//	HDFSGO_FAILPOINT=<name>@<pid>
//
// where <pid> is the test process's own pid (the parent of the daemon it
// starts). FromEnv arms the failpoint only if <name> is in the list and
// <pid> is the daemon's parent process id, so a variable left in a shell
// profile, copied into a service definition or inherited by a grandchild
// never fires: no production process has the test as its parent. When it
// fires, the process writes one line to stderr and sends itself SIGKILL:
// nothing is flushed, closed or unlocked, as if kill -9 had come from
// outside at that moment.
//
// # In-process tests
//
// Error(name) returns a Func that makes the step fail with ErrInjected
// instead: the code stops there without cleaning up, which leaves the disk
// as a crash would (every step before it is synced), and the test opens
// the directories again.
//
// Callers: the NameNode (package namenode) and the DataNode (its storage
// package), which receive a Func through their Deps; the `hdfs namenode`
// and `hdfs datanode` commands call FromEnv. The package has no state; it
// is safe for concurrent use.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// EnvVar is the environment variable that arms a failpoint in a process.
const EnvVar = "HDFSGO_FAILPOINT"

// Name is a failpoint.
type Name string

// The failpoints. "after X" means: X is done and synced, the next step has
// not begun.
const (
	// NameNode upgrade (hdfs namenode -upgrade), every name, edits and
	// file:// shared edits dir:
	NNUpgradeAfterRename  Name = "nn-upgrade-after-rename"  // current → previous.tmp, new empty current
	NNUpgradeAfterImage   Name = "nn-upgrade-after-image"   // new image in the new currents, no VERSION yet
	NNUpgradeMidVersion   Name = "nn-upgrade-mid-version"   // the first dir's new VERSION written, not the others'
	NNUpgradeAfterVersion Name = "nn-upgrade-after-version" // every new VERSION written, previous.tmp not renamed
	// NameNode rollback (hdfs namenode -rollback):
	NNRollbackAfterRemove  Name = "nn-rollback-after-remove"  // current → removed.tmp
	NNRollbackAfterRestore Name = "nn-rollback-after-restore" // previous → current, removed.tmp not deleted
	// NameNode finalize (dfsadmin -finalizeUpgrade):
	NNFinalizeAfterRename Name = "nn-finalize-after-rename" // previous → finalized.tmp, not deleted

	// DataNode, each block pool of each volume (the first one to get
	// there fires). Upgrade at start-up:
	DNUpgradeAfterRename  Name = "dn-upgrade-after-rename"  // current → previous.tmp, new empty current
	DNUpgradeMidLink      Name = "dn-upgrade-mid-link"      // the first block file linked into the new current
	DNUpgradeAfterLink    Name = "dn-upgrade-after-link"    // every block and meta file linked, dirs synced, no VERSION
	DNUpgradeAfterVersion Name = "dn-upgrade-after-version" // new VERSION written, previous.tmp not renamed
	// Rollback (hdfs datanode -rollback):
	DNRollbackAfterRemove  Name = "dn-rollback-after-remove"  // current → removed.tmp
	DNRollbackAfterRestore Name = "dn-rollback-after-restore" // previous → current, removed.tmp not deleted
	// Finalize (DNA_FINALIZE):
	DNFinalizeAfterRename Name = "dn-finalize-after-rename" // previous → finalized.tmp, not deleted
	DNFinalizeMidDelete   Name = "dn-finalize-mid-delete"   // part of finalized.tmp deleted
)

// Names returns every failpoint, in the order above.
func Names() []Name {
	return []Name{
		NNUpgradeAfterRename, NNUpgradeAfterImage, NNUpgradeMidVersion, NNUpgradeAfterVersion,
		NNRollbackAfterRemove, NNRollbackAfterRestore, NNFinalizeAfterRename,
		DNUpgradeAfterRename, DNUpgradeMidLink, DNUpgradeAfterLink, DNUpgradeAfterVersion,
		DNRollbackAfterRemove, DNRollbackAfterRestore, DNFinalizeAfterRename, DNFinalizeMidDelete,
	}
}

// Known reports whether n is in the list.
func Known(n Name) bool {
	for _, k := range Names() {
		if k == n {
			return true
		}
	}
	return false
}

// ErrInjected is what an Error failpoint makes its step return.
var ErrInjected = errors.New("failpoint: injected crash")

// Func is called at each failpoint. A nil Func does nothing.
type Func func(Name) error

// Hit runs f at failpoint n: nil (go on) unless f stops the step there.
func (f Func) Hit(n Name) error {
	if f == nil {
		return nil
	}
	return f(n)
}

// Error returns a Func that fails the step at n with ErrInjected, every
// time n is reached (in-process crash tests).
func Error(n Name) Func {
	return func(at Name) error {
		if at == n {
			return fmt.Errorf("%w at %s", ErrInjected, n)
		}
		return nil
	}
}

// FromEnv reads HDFSGO_FAILPOINT through getenv and returns the Func that
// kills this process at the named failpoint, or nil when the variable is
// unset. ppid is this process's parent (os.Getppid()). A value that is
// malformed, names no failpoint or names another parent arms nothing and
// is returned as an error, for the caller to log.
func FromEnv(getenv func(string) string, ppid int) (Func, error) {
	v := getenv(EnvVar)
	if v == "" {
		return nil, nil
	}
	name, pid, ok := strings.Cut(v, "@")
	n, err := strconv.Atoi(pid)
	switch {
	case !ok || err != nil:
		return nil, fmt.Errorf("failpoint: %s=%q is not <name>@<parent pid>; nothing armed", EnvVar, v)
	case !Known(Name(name)):
		return nil, fmt.Errorf("failpoint: %s=%q names no failpoint; nothing armed", EnvVar, v)
	case n != ppid:
		return nil, fmt.Errorf("failpoint: %s=%q is for the children of process %d, this one's parent is %d; nothing armed", EnvVar, v, n, ppid)
	}
	armed := Name(name)
	return func(at Name) error {
		if at == armed {
			kill(at)
		}
		return nil
	}, nil
}

// kill ends the process at once with SIGKILL.
func kill(at Name) {
	fmt.Fprintf(os.Stderr, "failpoint %s: killing process %d\n", at, os.Getpid())
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; wait for it to land
}
