package authorize

import (
	"net"
	"net/netip"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// IPC returns the ipc.ServerConfig.Authorize of a daemon configured by c
// (a DataNode's IPC port, a JournalNode): proxy users and, with
// hadoop.security.authorization, the service ACLs, read once at start. A
// nil c (a daemon started without configuration files, in tests) gives
// nil: no check beyond what the ipc server does by itself.
func IPC(c *conf.Conf) (func(ipc.ConnAuth) error, error) {
	if c == nil {
		return nil, nil
	}
	groups, err := HostGroups(c)
	if err != nil {
		return nil, err
	}
	ch, err := NewChecker(c, groups)
	if err != nil {
		return nil, err
	}
	return func(ca ipc.ConnAuth) error {
		return ch.Check(Conn{User: ca.User, RealUser: ca.RealUser, Principal: ca.Principal, TokenAuth: ca.TokenAuth,
			Protocol: ca.Protocol, Addr: AddrOf(ca.Remote)})
	}, nil
}

// AddrOf is the IP address of a connection's remote address (the zero
// Addr when it has none).
func AddrOf(a net.Addr) netip.Addr {
	if a == nil {
		return netip.Addr{}
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// WebAdmins returns who may see a daemon's administrative web endpoints
// (web.Config.Admins) under c: nil (everyone) unless
// hadoop.security.authorization is on; then dfs.cluster.administrators,
// superUser (the daemon's own user) and dfs.permissions.superusergroup.
func WebAdmins(c *conf.Conf, superUser string) (*web.Admins, error) {
	if c == nil {
		return nil, nil
	}
	on, err := c.Bool(conf.HadoopSecurityAuthorization)
	if err != nil || !on {
		return nil, err
	}
	groups, err := HostGroups(c)
	if err != nil {
		return nil, err
	}
	jmx, err := c.Bool(conf.HadoopSecurityInstrumentationRequiresAdmin)
	if err != nil {
		return nil, err
	}
	return &web.Admins{ACL: ParseACL(c.String(conf.DFSClusterAdministrators)).Allows, SuperUser: superUser,
		SuperGroup: c.String(conf.DFSPermissionsSuperUserGroup), Groups: groups,
		StaticUser: c.String(conf.HadoopHTTPStaticUser), InstrumentationRequiresAdmin: jmx}, nil
}
