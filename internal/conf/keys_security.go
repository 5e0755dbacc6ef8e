package conf

// Security keys (Kerberos, protection, tokens). HadoopSecurityAuthentication
// is with the core keys.
const (
	HadoopRPCProtection                   = "hadoop.rpc.protection"                     // authentication
	HadoopSecurityAuthToLocal             = "hadoop.security.auth_to_local"             // DEFAULT (empty)
	DFSNameNodeKerberosPrincipal          = "dfs.namenode.kerberos.principal"           // unset
	DFSNameNodeKeytabFile                 = "dfs.namenode.keytab.file"                  // unset
	DFSDataNodeKerberosPrincipal          = "dfs.datanode.kerberos.principal"           // unset
	DFSDataNodeKeytabFile                 = "dfs.datanode.keytab.file"                  // unset
	DFSJournalNodeKerberosPrincipal       = "dfs.journalnode.kerberos.principal"        // unset
	DFSJournalNodeKeytabFile              = "dfs.journalnode.keytab.file"               // unset
	DFSSecondaryNameNodeKerberosPrincipal = "dfs.secondary.namenode.kerberos.principal" // unset
	DFSSecondaryNameNodeKeytabFile        = "dfs.secondary.namenode.keytab.file"        // unset
	// hdfsgo's own: the keytab and principal the hdfs command's client
	// logs in with instead of the ticket cache (KRB5CCNAME).
	HDFSGoClientKeytabFile        = "hdfsgo.client.keytab.file"        // unset
	HDFSGoClientKerberosPrincipal = "hdfsgo.client.kerberos.principal" // unset
)

func securityTable() []keyDef {
	return append([]keyDef{
		{HadoopRPCProtection, "authentication", 0},
		{HadoopSecurityAuthToLocal, "DEFAULT", 0},
	}, append(append(append(blockTokenTable(), delegationTable()...), dataTransferTable()...), spnegoTable()...)...)
}

// Block access tokens.
const (
	DFSBlockAccessTokenEnable       = "dfs.block.access.token.enable"        // false
	DFSBlockAccessKeyUpdateInterval = "dfs.block.access.key.update.interval" // 600 minutes
	DFSBlockAccessTokenLifetime     = "dfs.block.access.token.lifetime"      // 600 minutes
)

func blockTokenTable() []keyDef {
	return []keyDef{
		{DFSBlockAccessTokenEnable, "false", 0},
		{DFSBlockAccessKeyUpdateInterval, "600", minute},
		{DFSBlockAccessTokenLifetime, "600", minute},
	}
}

// Delegation tokens.
const (
	DFSNameNodeDelegationKeyUpdateInterval  = "dfs.namenode.delegation.key.update-interval"  // 86400000 ms (1 day)
	DFSNameNodeDelegationTokenMaxLifetime   = "dfs.namenode.delegation.token.max-lifetime"   // 604800000 ms (7 days)
	DFSNameNodeDelegationTokenRenewInterval = "dfs.namenode.delegation.token.renew-interval" // 86400000 ms (1 day)
)

func delegationTable() []keyDef {
	return []keyDef{
		{DFSNameNodeDelegationKeyUpdateInterval, "86400000", ms},
		{DFSNameNodeDelegationTokenMaxLifetime, "604800000", ms},
		{DFSNameNodeDelegationTokenRenewInterval, "86400000", ms},
	}
}
