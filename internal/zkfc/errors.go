package zkfc

import "errors"

// Errors of this package. The CLI turns the first five into Hadoop's exit
// codes.
var (
	// ErrFormatDenied: -formatZK found the parent znode and was not allowed
	// to clear it (exit code 2).
	ErrFormatDenied = errors.New("zkfc: formatting denied")
	// ErrNoParentZNode: the parent znode does not exist; run -formatZK
	// (exit code 3).
	ErrNoParentZNode = errors.New("zkfc: parent znode does not exist")
	// ErrNoFencer: the local NameNode has no usable fencing method
	// (exit code 4).
	ErrNoFencer = errors.New("zkfc: fencing is not configured")
	// ErrAutoFailoverDisabled: dfs.ha.automatic-failover.enabled is off for
	// the local NameNode (exit code 5).
	ErrAutoFailoverDisabled = errors.New("zkfc: automatic failover is not enabled")
	// ErrNoZooKeeper: no session could be opened with the quorum (exit
	// code 6).
	ErrNoZooKeeper = errors.New("zkfc: unable to connect to ZooKeeper")
	// ErrBadConfig: the configuration cannot run a controller; the error
	// names the key.
	ErrBadConfig = errors.New("zkfc: bad configuration")
	// ErrBadACL: ha.zookeeper.acl or ha.zookeeper.auth cannot be parsed.
	ErrBadACL = errors.New("zkfc: bad ZooKeeper ACL or auth")
	// ErrBadZNodeData: a znode does not hold an ActiveNodeInfo, or one that
	// names a NameNode the configuration does not know at that address.
	ErrBadZNodeData = errors.New("zkfc: bad znode data")
	// ErrFatal: the controller stopped on a fatal error (Hadoop's "ZK
	// Failover Controller failed").
	ErrFatal = errors.New("zkfc: ZK Failover Controller failed")
)
