package namespace

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors. Every error returned by a Plan or read method wraps one or more
// of these (test with errors.Is); its Error() text is the message Hadoop's
// NameNode would put into the RemoteException, e.g. "File does not exist: /a/b".
// The Java class the RPC edge should report is named next to each sentinel.
var (
	// ErrNotFound: java.io.FileNotFoundException. Also matches fs.ErrNotExist.
	ErrNotFound = fmt.Errorf("namespace: not found: %w", fs.ErrNotExist)
	// ErrNotFile refines ErrNotFound ("Path is not a file: /d"); always wrapped
	// together with ErrNotFound, so it reports java.io.FileNotFoundException.
	ErrNotFile = errors.New("namespace: not a file")
	// ErrExists: org.apache.hadoop.fs.FileAlreadyExistsException. Also matches fs.ErrExist.
	ErrExists = fmt.Errorf("namespace: already exists: %w", fs.ErrExist)
	// ErrIsDir refines ErrExists ("/a already exists as a directory"); always
	// wrapped together with ErrExists (FileAlreadyExistsException).
	ErrIsDir = errors.New("namespace: is a directory")
	// ErrNotDir: org.apache.hadoop.fs.PathIsNotDirectoryException ("`/a': Is not a directory").
	ErrNotDir = errors.New("namespace: not a directory")
	// ErrPermission: org.apache.hadoop.security.AccessControlException. Also matches fs.ErrPermission.
	ErrPermission = fmt.Errorf("namespace: permission denied: %w", fs.ErrPermission)
	// ErrNotEmpty: org.apache.hadoop.fs.PathIsNotEmptyDirectoryException.
	ErrNotEmpty = errors.New("namespace: directory is not empty")
	// ErrParentNotDir: org.apache.hadoop.fs.ParentNotDirectoryException.
	ErrParentNotDir = errors.New("namespace: parent is not a directory")
	// ErrInvalidPath: org.apache.hadoop.fs.InvalidPathException.
	ErrInvalidPath = errors.New("namespace: invalid path")
	// ErrAlreadyBeingCreated: org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException.
	ErrAlreadyBeingCreated = errors.New("namespace: file already being created")
	// ErrNSQuotaExceeded: org.apache.hadoop.hdfs.protocol.NSQuotaExceededException.
	ErrNSQuotaExceeded = errors.New("namespace: namespace quota exceeded")
	// ErrDSQuotaExceeded: org.apache.hadoop.hdfs.protocol.DSQuotaExceededException.
	ErrDSQuotaExceeded = errors.New("namespace: storage space quota exceeded")
	// ErrComponentTooLong: org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException.
	ErrComponentTooLong = errors.New("namespace: path component too long")
	// ErrMaxDirItems: org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException.
	ErrMaxDirItems = errors.New("namespace: too many directory items")
	// ErrRenameInvalid: java.io.IOException (a rename rule was violated).
	ErrRenameInvalid = errors.New("namespace: invalid rename")
	// ErrLeaseMismatch: org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException
	// (the caller does not hold the lease, or the inode is not a regular file).
	ErrLeaseMismatch = errors.New("namespace: lease mismatch")
	// ErrNotUnderConstruction: org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException
	// (the file is not open for writing).
	ErrNotUnderConstruction = errors.New("namespace: file not under construction")
	// ErrIllegalArgument: org.apache.hadoop.HadoopIllegalArgumentException.
	ErrIllegalArgument = errors.New("namespace: illegal argument")
	// ErrBlockMismatch: java.io.IOException (a client named a block the file does not have).
	ErrBlockMismatch = errors.New("namespace: block mismatch")
	// ErrIO: java.io.IOException for the remaining rule violations (e.g. access
	// times disabled).
	ErrIO = errors.New("namespace: operation not allowed")
	// ErrACL: org.apache.hadoop.hdfs.protocol.AclException (a bad ACL,
	// or ACLs disabled).
	ErrACL = errors.New("namespace: invalid ACL")
	// ErrSnapshot: org.apache.hadoop.hdfs.protocol.SnapshotException.
	ErrSnapshot = errors.New("namespace: snapshot rule violated")
	// ErrSnapshotAccess: org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException
	// (a change below a ".snapshot" path).
	ErrSnapshotAccess = errors.New("namespace: modification on a read-only snapshot")
	// ErrCorrupt: Apply could not apply an op to the tree (at replay: a corrupt
	// or out-of-order edit log). Not sent to clients.
	ErrCorrupt = errors.New("namespace: op does not apply")
)

// nsError carries Hadoop's message text and the sentinels it belongs to.
type nsError struct {
	msg   string
	kinds []error
}

func (e *nsError) Error() string   { return e.msg }
func (e *nsError) Unwrap() []error { return e.kinds }

func newErr(msg string, kinds ...error) error { return &nsError{msg: msg, kinds: kinds} }

func errf(kind error, format string, args ...any) error {
	return &nsError{msg: fmt.Sprintf(format, args...), kinds: []error{kind}}
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func notFound(format string, args ...any) error { return errf(ErrNotFound, format, args...) }
