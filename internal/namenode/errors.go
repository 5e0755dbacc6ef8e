package namenode

import (
	"errors"

	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// namespaceClasses maps the namespace's sentinels to Java exception classes.
// Order matters: refinements come before the errors they wrap.
var namespaceClasses = []struct {
	err   error
	class string
}{
	{namespace.ErrNotFound, remoteerr.ClassFileNotFound},
	{namespace.ErrAlreadyBeingCreated, remoteerr.ClassAlreadyBeingCreated},
	{namespace.ErrExists, remoteerr.ClassFileAlreadyExists},
	{namespace.ErrPermission, remoteerr.ClassAccessControl},
	{namespace.ErrNotEmpty, remoteerr.ClassPathIsNotEmptyDir},
	{namespace.ErrParentNotDir, remoteerr.ClassParentNotDirectory},
	{namespace.ErrNotDir, "org.apache.hadoop.fs.PathIsNotDirectoryException"},
	{namespace.ErrInvalidPath, remoteerr.ClassInvalidPath},
	{namespace.ErrNSQuotaExceeded, remoteerr.ClassNSQuotaExceeded},
	{namespace.ErrDSQuotaExceeded, remoteerr.ClassDSQuotaExceeded},
	{namespace.ErrComponentTooLong, remoteerr.ClassPathComponentTooLong},
	{namespace.ErrMaxDirItems, remoteerr.ClassMaxDirectoryItems},
	{namespace.ErrLeaseMismatch, remoteerr.ClassLeaseExpired},
	{namespace.ErrNotUnderConstruction, remoteerr.ClassLeaseExpired},
	{namespace.ErrIllegalArgument, remoteerr.ClassHadoopIllegalArg},
	{namespace.ErrRenameInvalid, remoteerr.ClassIOException},
	{namespace.ErrBlockMismatch, remoteerr.ClassIOException},
	{namespace.ErrIO, remoteerr.ClassIOException},
	{namespace.ErrACL, "org.apache.hadoop.hdfs.protocol.AclException"},
	{namespace.ErrSnapshot, "org.apache.hadoop.hdfs.protocol.SnapshotException"},
	{namespace.ErrSnapshotAccess, remoteerr.ClassSnapshotAccess},
}

// toRemote turns an error of the namespace core into the RemoteException a
// Hadoop NameNode would send; other errors pass through (the RPC layer maps
// them with remoteerr's table).
func toRemote(err error) error {
	if err == nil {
		return nil
	}
	var re *remoteerr.Error
	if errors.As(err, &re) {
		return err
	}
	for _, m := range namespaceClasses {
		if errors.Is(err, m.err) {
			return remoteerr.New(m.class, "%s", err.Error())
		}
	}
	return err
}

// unsupported answers calls whose implementation has not landed yet.
func unsupported(method string) error {
	return remoteerr.New(remoteerr.ClassUnsupported, "%s is not supported by this NameNode yet", method)
}
