package remoteerr

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// Java exception class names that servers and clients name in code.
const (
	ClassIOException          = "java.io.IOException"
	ClassFileNotFound         = "java.io.FileNotFoundException"
	ClassFileAlreadyExists    = "org.apache.hadoop.fs.FileAlreadyExistsException"
	ClassAlreadyBeingCreated  = "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
	ClassAccessControl        = "org.apache.hadoop.security.AccessControlException"
	ClassHadoopIllegalArg     = "org.apache.hadoop.HadoopIllegalArgumentException"
	ClassIllegalArgument      = "java.lang.IllegalArgumentException"
	ClassPathIsNotEmptyDir    = "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
	ClassStandby              = "org.apache.hadoop.ipc.StandbyException"
	ClassRetriable            = "org.apache.hadoop.ipc.RetriableException"
	ClassSafeMode             = "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
	ClassParentNotDirectory   = "org.apache.hadoop.fs.ParentNotDirectoryException"
	ClassLeaseExpired         = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"
	ClassQuotaExceeded        = "org.apache.hadoop.hdfs.protocol.QuotaExceededException"
	ClassNSQuotaExceeded      = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"
	ClassDSQuotaExceeded      = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException"
	ClassPathComponentTooLong = "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException"
	ClassMaxDirectoryItems    = "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException"
	ClassInvalidPath          = "org.apache.hadoop.fs.InvalidPathException"
	ClassUnsupported          = "java.lang.UnsupportedOperationException"
	ClassNoSuchMethod         = "org.apache.hadoop.ipc.RpcNoSuchMethodException"
	ClassNoSuchProtocol       = "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
	ClassNotReplicatedYet     = "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException"
	ClassSnapshotAccess       = "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException"
	ClassUnresolvedPath       = "org.apache.hadoop.hdfs.protocol.UnresolvedPathException"
	ClassUnresolvedLink       = "org.apache.hadoop.fs.UnresolvedLinkException"
	ClassInvalidRequest       = "org.apache.hadoop.fs.InvalidRequestException"
	ClassVersionMismatch      = "org.apache.hadoop.ipc.RPC$VersionMismatch"
	ClassHealthCheckFailed    = "org.apache.hadoop.ha.HealthCheckFailedException"
	ClassServiceFailed        = "org.apache.hadoop.ha.ServiceFailedException"
	ClassUnregisteredNode     = "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException"
	ClassJournalOutOfSync     = "org.apache.hadoop.hdfs.qjournal.protocol.JournalOutOfSyncException"
	ClassJournalNotFormatted  = "org.apache.hadoop.hdfs.qjournal.protocol.JournalNotFormattedException"
	ClassCacheMiss            = "org.apache.hadoop.hdfs.qjournal.server.JournaledEditsCache$CacheMissException"
	ClassNewerTxnID           = "org.apache.hadoop.hdfs.qjournal.server.NewerTxnIdException"
	ClassIllegalState         = "java.lang.IllegalStateException"
	ClassAssertion            = "java.lang.AssertionError"
)

// Sentinels for Hadoop conditions that have no io/fs or syscall
// equivalent. Each matches, through errors.Is, a remote *Error of the
// class(es) the table gives it, and is translated to that class by ClassOf.
var (
	// ErrStandby: the NameNode is in standby state; try another one.
	ErrStandby = errors.New("remoteerr: operation not supported in standby state")
	// ErrRetriable: the server asks the client to retry the same call later.
	ErrRetriable = errors.New("remoteerr: retriable")
	// ErrSafeMode: the NameNode is in safe mode.
	ErrSafeMode = errors.New("remoteerr: name node is in safe mode")
	// ErrParentNotDirectory: a path's parent is a file.
	ErrParentNotDirectory = errors.New("remoteerr: parent path is not a directory")
	// ErrLeaseExpired: the caller holds no (or another's) lease on the file.
	ErrLeaseExpired = errors.New("remoteerr: lease expired")
	// ErrAlreadyBeingCreated: the file is open for writing by a client.
	// It also matches fs.ErrExist.
	ErrAlreadyBeingCreated = errors.New("remoteerr: file already being created")
	// ErrQuotaExceeded: a namespace or space quota or a file-system limit
	// would be exceeded. Every quota/limit class matches it.
	ErrQuotaExceeded = errors.New("remoteerr: quota exceeded")
	// ErrNSQuotaExceeded: the namespace quota would be exceeded.
	ErrNSQuotaExceeded = errors.New("remoteerr: namespace quota exceeded")
	// ErrDSQuotaExceeded: the disk-space quota would be exceeded.
	ErrDSQuotaExceeded = errors.New("remoteerr: disk space quota exceeded")
	// ErrPathComponentTooLong: a path component exceeds
	// dfs.namenode.fs-limits.max-component-length.
	ErrPathComponentTooLong = errors.New("remoteerr: path component too long")
	// ErrMaxDirectoryItems: a directory would exceed
	// dfs.namenode.fs-limits.max-directory-items.
	ErrMaxDirectoryItems = errors.New("remoteerr: too many items in directory")
	// ErrInvalidPath: the path is not a valid HDFS path. It also matches
	// fs.ErrInvalid.
	ErrInvalidPath = errors.New("remoteerr: invalid path")
	// ErrUnsupported: the operation is not supported.
	ErrUnsupported = errors.New("remoteerr: operation not supported")
	// ErrNoSuchMethod: the server's protocol has no such method.
	ErrNoSuchMethod = errors.New("remoteerr: no such method")
	// ErrNoSuchProtocol: the server serves no such protocol.
	ErrNoSuchProtocol = errors.New("remoteerr: no such protocol")
	// ErrNotReplicatedYet: the previous block has not reached minimal
	// replication yet.
	ErrNotReplicatedYet = errors.New("remoteerr: block not replicated yet")
	// ErrSnapshotAccess: the path is inside a read-only snapshot. It also
	// matches fs.ErrPermission.
	ErrSnapshotAccess = errors.New("remoteerr: modification on a read-only snapshot")
	// ErrUnresolvedPath: the path crosses a symbolic link.
	ErrUnresolvedPath = errors.New("remoteerr: unresolved symbolic link in path")
	// ErrInvalidRequest: the request's arguments are inconsistent.
	ErrInvalidRequest = errors.New("remoteerr: invalid request")
	// ErrVersionMismatch: the peer speaks another RPC version.
	ErrVersionMismatch = errors.New("remoteerr: RPC version mismatch")
	// ErrHealthCheckFailed: an HA service reports itself unhealthy
	// (HAServiceProtocol.monitorHealth).
	ErrHealthCheckFailed = errors.New("remoteerr: health check failed")
	// ErrServiceFailed: an HA service could not make the state transition
	// it was asked for.
	ErrServiceFailed = errors.New("remoteerr: service failed")
	// ErrUnregisteredNode: a node of another namespace, or one the server
	// does not know, called (a Checkpoint or Backup Node whose storage is
	// another cluster's).
	ErrUnregisteredNode = errors.New("remoteerr: unregistered node")
	// ErrJournalOutOfSync: a JournalNode refused a write that does not
	// follow what it holds (wrong segment, txid or IPC serial number).
	ErrJournalOutOfSync = errors.New("remoteerr: journal out of sync")
	// ErrJournalNotFormatted: the JournalNode's journal was never formatted.
	ErrJournalNotFormatted = errors.New("remoteerr: journal not formatted")
	// ErrCacheMiss: a JournalNode's edit cache no longer holds the
	// transactions asked for (getJournaledEdits); read them from the
	// segment files instead.
	ErrCacheMiss = errors.New("remoteerr: journaled edits cache miss")
	// ErrNewerTxnID: a JournalNode was asked for transactions beyond the
	// ones it holds.
	ErrNewerTxnID = errors.New("remoteerr: requested transactions are newer than the journal's")
	// ErrIllegalState: the call is not valid in the server's current state.
	ErrIllegalState = errors.New("remoteerr: illegal state")
	// ErrAssertion: the server found an invariant broken and refused to go on.
	ErrAssertion = errors.New("remoteerr: assertion failed")
	// ErrIO is the fallback: it matches java.io.IOException and every class
	// the table does not know (nearly every Hadoop RPC error is an
	// IOException in Java).
	ErrIO = errors.New("remoteerr: I/O error")
)

// entry ties a Java class to the Go errors it matches. The first target is
// the one ClassOf looks for when translating a Go error into this class.
type entry struct {
	class   string
	targets []error
}

// alsoFrom lists Go errors that ClassOf translates into a class although
// they are not the first target of its entry.
var alsoFrom = []struct {
	err   error
	class string
}{
	{errors.ErrUnsupported, ClassUnsupported},
}

// table is THE mapping. Order matters for ClassOf: more specific classes
// come before the ones whose targets they share (AlreadyBeingCreated before
// FileAlreadyExists, the quota subclasses before QuotaExceeded, ...).
// Subclass relations of the Java hierarchy appear as extra targets.
var table = []entry{
	{ClassFileNotFound, []error{fs.ErrNotExist}},
	// Before FileAlreadyExists: syscall.ENOTEMPTY also matches fs.ErrExist.
	{ClassPathIsNotEmptyDir, []error{syscall.ENOTEMPTY}},
	{ClassAlreadyBeingCreated, []error{ErrAlreadyBeingCreated, fs.ErrExist}},
	{ClassFileAlreadyExists, []error{fs.ErrExist}},
	{ClassSnapshotAccess, []error{ErrSnapshotAccess, fs.ErrPermission}},
	{ClassAccessControl, []error{fs.ErrPermission}},
	{ClassInvalidPath, []error{ErrInvalidPath, fs.ErrInvalid}},
	{ClassHadoopIllegalArg, []error{fs.ErrInvalid}},
	{ClassIllegalArgument, []error{fs.ErrInvalid}},
	{ClassStandby, []error{ErrStandby}},
	{ClassRetriable, []error{ErrRetriable}},
	{ClassSafeMode, []error{ErrSafeMode}},
	{ClassParentNotDirectory, []error{ErrParentNotDirectory}},
	{ClassLeaseExpired, []error{ErrLeaseExpired}},
	{ClassNSQuotaExceeded, []error{ErrNSQuotaExceeded, ErrQuotaExceeded}},
	{ClassDSQuotaExceeded, []error{ErrDSQuotaExceeded, ErrQuotaExceeded}},
	{ClassPathComponentTooLong, []error{ErrPathComponentTooLong, ErrQuotaExceeded}},
	{ClassMaxDirectoryItems, []error{ErrMaxDirectoryItems, ErrQuotaExceeded}},
	{ClassQuotaExceeded, []error{ErrQuotaExceeded}},
	{ClassUnsupported, []error{ErrUnsupported, errors.ErrUnsupported}},
	{ClassNoSuchMethod, []error{ErrNoSuchMethod}},
	{ClassNoSuchProtocol, []error{ErrNoSuchProtocol}},
	{ClassNotReplicatedYet, []error{ErrNotReplicatedYet}},
	{ClassUnresolvedPath, []error{ErrUnresolvedPath}},
	{ClassInvalidRequest, []error{ErrInvalidRequest}},
	{ClassVersionMismatch, []error{ErrVersionMismatch}},
	{ClassHealthCheckFailed, []error{ErrHealthCheckFailed}},
	{ClassServiceFailed, []error{ErrServiceFailed}},
	{ClassUnregisteredNode, []error{ErrUnregisteredNode}},
	{ClassJournalOutOfSync, []error{ErrJournalOutOfSync}},
	{ClassJournalNotFormatted, []error{ErrJournalNotFormatted}},
	{ClassCacheMiss, []error{ErrCacheMiss}},
	{ClassNewerTxnID, []error{ErrNewerTxnID}},
	{ClassIllegalState, []error{ErrIllegalState}},
	{ClassAssertion, []error{ErrAssertion}},
	{ClassIOException, []error{ErrIO}},
}

// byClass indexes table by class name. It is built once and never written
// afterwards.
var byClass = func() map[string]*entry {
	m := make(map[string]*entry, len(table)+1)
	for i := range table {
		m[table[i].class] = &table[i]
	}
	// The deprecated location of AccessControlException still appears on
	// the wire from older servers.
	m["org.apache.hadoop.fs.permission.AccessControlException"] = m[ClassAccessControl]
	return m
}()

// Error is an exception that crossed the RPC boundary: the Java class name
// and the message, exactly as carried by RpcResponseHeaderProto.
type Error struct {
	Class   string
	Message string
}

// Error returns "<class>: <message>", the way Java prints an exception, or
// just the class when there is no message.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

// Is reports whether target is one of the Go errors the table assigns to
// e.Class; unknown classes match ErrIO. Two *Error values match when their
// classes are equal.
func (e *Error) Is(target error) bool {
	if t, ok := target.(*Error); ok {
		return t.Class == e.Class
	}
	ent, ok := byClass[e.Class]
	if !ok {
		return target == ErrIO
	}
	for _, t := range ent.targets {
		if t == target {
			return true
		}
	}
	return false
}

// New returns an *Error of the given class with a formatted message.
func New(class, format string, args ...any) *Error {
	return &Error{Class: class, Message: fmt.Sprintf(format, args...)}
}

// FileNotFound is Hadoop's "File does not exist: <path>".
func FileNotFound(path string) *Error {
	return &Error{Class: ClassFileNotFound, Message: "File does not exist: " + path}
}

// AlreadyExists is Hadoop's FileAlreadyExistsException for path.
func AlreadyExists(path string) *Error {
	return &Error{Class: ClassFileAlreadyExists, Message: path + " already exists"}
}

// AccessControl is an AccessControlException with the given message.
func AccessControl(msg string) *Error {
	return &Error{Class: ClassAccessControl, Message: msg}
}

// Standby is the StandbyException a standby NameNode answers every client
// call with; op names the refused operation category (e.g. "read").
func Standby(op string) *Error {
	return &Error{Class: ClassStandby, Message: "Operation category " + op + " is not supported in state standby"}
}

// ClassOf translates an error a handler returned into the Java class and
// message sent to the peer: a *Error (possibly wrapped) keeps its class and
// message; otherwise the first table entry whose first target matches via
// errors.Is gives the class and err.Error() the message; otherwise the
// class is java.io.IOException. A nil error yields empty strings.
func ClassOf(err error) (class, message string) {
	if err == nil {
		return "", ""
	}
	var re *Error
	if errors.As(err, &re) {
		return re.Class, re.Message
	}
	for i := range table {
		if errors.Is(err, table[i].targets[0]) {
			return table[i].class, err.Error()
		}
	}
	for _, a := range alsoFrom {
		if errors.Is(err, a.err) {
			return a.class, err.Error()
		}
	}
	return ClassIOException, err.Error()
}

// FromRemote builds the error a client returns for an exception received
// from a server.
func FromRemote(class, message string) error {
	if class == "" {
		class = ClassIOException
	}
	return &Error{Class: class, Message: message}
}

// IsRetriable reports whether err is a RetriableException from the server
// (the same call may be sent again with the same call id).
func IsRetriable(err error) bool { return errors.Is(err, ErrRetriable) }

// IsStandby reports whether err is a StandbyException from the server.
func IsStandby(err error) bool { return errors.Is(err, ErrStandby) }
