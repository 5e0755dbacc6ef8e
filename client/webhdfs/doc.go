// Package webhdfs is a client of Hadoop's WebHDFS REST API: a file system
// named by a webhdfs://host:port URI (the NameNode's web port, 9870 when
// the URI names none) that it reaches only over HTTP. Namespace calls go
// to the NameNode's /webhdfs/v1; CREATE, APPEND and OPEN follow the
// NameNode's 307 to a DataNode in two steps, as Hadoop's WebHdfsFileSystem
// does, so the data never passes through the NameNode.
//
// Errors are *fs.PathError values whose Err is the server's
// RemoteException turned into a Go error (package remoteerr), so
// errors.Is(err, fs.ErrNotExist), fs.ErrPermission and fs.ErrExist work as
// with the RPC client. A FileSystem is safe for concurrent use; it holds no
// goroutines and needs no Close.
//
//	fsys, err := webhdfs.New("webhdfs://127.0.0.1:9870", "alice")
//	list, err := fsys.ReadDir(ctx, "/user/alice")
//	err = fsys.Create(ctx, "/user/alice/f", strings.NewReader("hello"), webhdfs.CreateOptions{})
//	rc, err := fsys.Open(ctx, "/user/alice/f", 0, -1)
//
// With Kerberos (hadoop.security.authentication=kerberos on the cluster),
// NewKerberos authenticates with SPNEGO from a gokrb5 client (a ticket
// cache or a keytab) to the NameNode's HTTP principal, fetches a
// delegation token once and sends it (delegation=) with every later
// request instead of user.name; GetDelegationToken, RenewDelegationToken
// and CancelDelegationToken are the token operations.
package webhdfs
