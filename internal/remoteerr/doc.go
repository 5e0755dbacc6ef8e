// Package remoteerr is the one table that translates between Go errors and
// the Java exception class names carried in Hadoop RPC error responses. The
// ipc server calls ClassOf on every error a handler returns; the ipc client
// calls FromRemote on every error response. Nothing else should map classes.
//
// The package holds no mutable state; everything is safe for concurrent use.
//
// # Direction Java → Go
//
// A remote exception becomes an *Error{Class, Message}. Its Error text is
// "<class>: <message>" (like Java's Throwable.toString), so logs show the
// class. errors.Is matches it against the Go errors of its class:
//
//	java.io.FileNotFoundException                   fs.ErrNotExist
//	org.apache.hadoop.fs.FileAlreadyExistsException fs.ErrExist
//	...AlreadyBeingCreatedException                 fs.ErrExist, ErrAlreadyBeingCreated
//	...security.AccessControlException              fs.ErrPermission
//	...SnapshotAccessControlException               fs.ErrPermission, ErrSnapshotAccess
//	org.apache.hadoop.HadoopIllegalArgumentException fs.ErrInvalid
//	java.lang.IllegalArgumentException              fs.ErrInvalid
//	org.apache.hadoop.fs.InvalidPathException       fs.ErrInvalid, ErrInvalidPath
//	...PathIsNotEmptyDirectoryException             syscall.ENOTEMPTY
//	NSQuota/DSQuota/FSLimit subclasses              their own sentinel, ErrQuotaExceeded
//	java.lang.UnsupportedOperationException         ErrUnsupported, errors.ErrUnsupported
//	java.io.IOException and unknown classes         ErrIO
//
// and the other sentinels below one for one (ErrStandby, ErrRetriable,
// ErrSafeMode, ...). Both illegal-argument classes map to fs.ErrInvalid
// because Hadoop throws either for bad arguments and a Go caller cannot act
// differently on them.
//
// # Direction Go → Java
//
// ClassOf keeps the class of a (wrapped) *Error. Any other error is matched
// with errors.Is against the table in order, the first target of each entry
// deciding, so fs.ErrNotExist becomes java.io.FileNotFoundException,
// fs.ErrExist FileAlreadyExistsException (the class the stock Go client maps
// to os.ErrExist for every call), fs.ErrInvalid
// HadoopIllegalArgumentException, syscall.ENOTEMPTY
// PathIsNotEmptyDirectoryException; everything else java.io.IOException.
//
// # Use
//
//	// server side
//	return nil, fmt.Errorf("getFileInfo %s: %w", p, fs.ErrNotExist)
//	return nil, remoteerr.FileNotFound(p) // exact Hadoop message
//	class, msg := remoteerr.ClassOf(err)
//
//	// client side
//	err := remoteerr.FromRemote(hdr.GetExceptionClassName(), hdr.GetErrorMsg())
//	if errors.Is(err, fs.ErrNotExist) { ... }
package remoteerr
