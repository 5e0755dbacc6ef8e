package conf

// The audit log, proxy users and service-level authorization.
const (
	// HadoopLogDir is the daemons' log directory (Hadoop's scripts set it
	// from $HADOOP_LOG_DIR); the NameNode writes hdfs-audit.log there.
	HadoopLogDir = "hadoop.log.dir" // unset ($HADOOP_LOG_DIR)

	DFSNameNodeAuditLoggers            = "dfs.namenode.audit.loggers"               // default
	DFSNameNodeAuditLogAsync           = "dfs.namenode.audit.log.async"             // true (Hadoop: false)
	DFSNameNodeAuditLogAsyncBlocking   = "dfs.namenode.audit.log.async.blocking"    // true
	DFSNameNodeAuditLogAsyncBufferSize = "dfs.namenode.audit.log.async.buffer.size" // 128
	DFSNameNodeAuditLogDebugCmdlist    = "dfs.namenode.audit.log.debug.cmdlist"     // unset
	// HDFSAuditLogger is log4j's hdfs.audit.logger ("LEVEL,APPENDER";
	// $HDFS_AUDIT_LOGGER): RFAAUDIT writes hdfs-audit.log, NullAppender or
	// level OFF writes nothing. Unset: RFAAUDIT when there is a log
	// directory (Hadoop's log4j.properties default is INFO,NullAppender).
	HDFSAuditLogger            = "hdfs.audit.logger"             // unset
	HDFSAuditLogMaxFileSize    = "hdfs.audit.log.maxfilesize"    // 256MB
	HDFSAuditLogMaxBackupIndex = "hdfs.audit.log.maxbackupindex" // 20

	HadoopCallerContextEnabled          = "hadoop.caller.context.enabled"            // false
	HadoopCallerContextMaxSize          = "hadoop.caller.context.max.size"           // 128
	HadoopCallerContextSignatureMaxSize = "hadoop.caller.context.signature.max.size" // 40

	// HadoopProxyUserPrefix starts the proxy-user keys:
	// hadoop.proxyuser.NAME.hosts, .groups, .users.
	HadoopProxyUserPrefix = "hadoop.proxyuser."
	// HadoopUserGroupStaticMapping gives users groups without asking the
	// operating system ("user=group1,group2;user2=").
	HadoopUserGroupStaticMapping = "hadoop.user.group.static.mapping.overrides" // dr.who=;

	// HadoopSecurityAuthorization turns on service-level authorization:
	// every RPC connection is checked against its protocol's ACL in
	// hadoop-policy.xml.
	HadoopSecurityAuthorization = "hadoop.security.authorization" // false
	// HadoopPolicyFile is the policy file's name in the configuration
	// directory (Hadoop's hadoop.policy.file system property).
	HadoopPolicyFile = "hadoop.policy.file" // hadoop-policy.xml
	// The ACL of a protocol whose key hadoop-policy.xml does not set.
	SecurityServiceAuthorizationDefaultACL        = "security.service.authorization.default.acl"         // *
	SecurityServiceAuthorizationDefaultBlockedACL = "security.service.authorization.default.acl.blocked" // unset
	// The web user of a request without user.name, and whether /jmx too
	// needs an administrator when hadoop.security.authorization is on.
	HadoopHTTPStaticUser                       = "hadoop.http.staticuser.user"                    // dr.who
	HadoopSecurityInstrumentationRequiresAdmin = "hadoop.security.instrumentation.requires.admin" // false
)

func secauthTable() []keyDef {
	return []keyDef{
		{DFSNameNodeAuditLoggers, "default", 0},
		{DFSNameNodeAuditLogAsync, "true", 0},
		{DFSNameNodeAuditLogAsyncBlocking, "true", 0},
		{DFSNameNodeAuditLogAsyncBufferSize, "128", 0},
		{HDFSAuditLogMaxFileSize, "256MB", 0},
		{HDFSAuditLogMaxBackupIndex, "20", 0},
		{HadoopCallerContextEnabled, "false", 0},
		{HadoopCallerContextMaxSize, "128", 0},
		{HadoopCallerContextSignatureMaxSize, "40", 0},
		{HadoopUserGroupStaticMapping, "dr.who=;", 0},
		{HadoopSecurityAuthorization, "false", 0},
		{HadoopPolicyFile, "hadoop-policy.xml", 0},
		{SecurityServiceAuthorizationDefaultACL, "*", 0},
		{HadoopHTTPStaticUser, "dr.who", 0},
		{HadoopSecurityInstrumentationRequiresAdmin, "false", 0},
	}
}
