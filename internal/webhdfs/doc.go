// Package webhdfs holds what the two sides of Hadoop's WebHDFS REST API
// (/webhdfs/v1/PATH?op=...) share: the parser of a request's method, path
// and query parameters (Parse), the JSON bodies (FileStatus, ContentSummary,
// ...) and the RemoteException error answer with its HTTP status
// (WriteError, StatusOf).
//
// Callers: the NameNode serves the namespace operations and answers
// CREATE, APPEND, OPEN and GETFILECHECKSUM with a 307 redirect to a
// DataNode; the DataNode's /webhdfs/v1 moves the data through the ordinary
// client (write pipeline, block reader); the WebHDFS client (package
// client/webhdfs) decodes the same bodies. The package imports the standard
// library and internal/remoteerr only; it keeps no state and is safe for
// concurrent use.
//
// # Requests
//
//	GET    /webhdfs/v1/PATH?op=GETFILESTATUS|LISTSTATUS|LISTSTATUS_BATCH|GETCONTENTSUMMARY|
//	                           GETQUOTAUSAGE|GETFILECHECKSUM|GETHOMEDIRECTORY|
//	                           GETSERVERDEFAULTS|GETTRASHROOT|OPEN
//	PUT    /webhdfs/v1/PATH?op=CREATE|MKDIRS|RENAME|SETREPLICATION|SETOWNER|
//	                           SETPERMISSION|SETTIMES
//	POST   /webhdfs/v1/PATH?op=APPEND|CONCAT|TRUNCATE
//	DELETE /webhdfs/v1/PATH?op=DELETE
//
// Parameter names are matched without regard to case, as Hadoop does;
// user.name names the caller (hadoop.http.staticuser.user, "dr.who", when
// absent) and doas the user to act as, which the NameNode allows as its
// proxy-user keys (hadoop.proxyuser.*) say.
// With Kerberos the caller is instead who SPNEGO proved or the owner of
// the delegation token in delegation= (see internal/security/spnego), and
// GETDELEGATIONTOKEN, RENEWDELEGATIONTOKEN and CANCELDELEGATIONTOKEN
// (token=) are served.
//
// # Errors
//
//	HTTP/1.1 404 Not Found
//	Content-Type: application/json
//
//	{"RemoteException":{"exception":"FileNotFoundException",
//	  "javaClassName":"java.io.FileNotFoundException",
//	  "message":"File does not exist: /foo"}}
//
// The status follows the exception's class as in Hadoop's WebHDFS:
// FileNotFoundException 404; SecurityException 401; other IOExceptions
// (AccessControlException, FileAlreadyExistsException, SafeModeException,
// ...) 403; IllegalArgumentException and UnsupportedOperationException 400;
// anything else 500.
package webhdfs
