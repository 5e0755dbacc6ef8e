package namenode

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/authorize"
	"github.com/hdfsgo/hdfsgo/internal/security/proxyuser"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// RefreshAuthorizationPolicyProtocolName is the protocol of dfsadmin
// -refreshServiceAcl.
const RefreshAuthorizationPolicyProtocolName = "org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol"

// AccessConfig is who may connect and act for whom.
type AccessConfig struct {
	// ConfDir is the configuration directory (hadoop-policy.xml is read
	// from it; "" when the configuration came from defaults and -D only).
	ConfDir string
	// ProxyUsers are the hadoop.proxyuser.NAME.{hosts,groups,users} keys.
	ProxyUsers *proxyuser.Policy
	// ServiceAuthorization is hadoop.security.authorization (false); ACLs
	// is the policy read from hadoop-policy.xml when it is true.
	ServiceAuthorization bool
	ACLs                 *authorize.Policy
	// StaticGroups is hadoop.user.group.static.mapping.overrides: users
	// whose groups are these, whatever the operating system says.
	StaticGroups map[string][]string
	// WebAdmins is dfs.cluster.administrators (nobody): with
	// ServiceAuthorization, only they, the superuser and the supergroup
	// see /conf, /stacks, /logLevel and /logs/. WebStaticUser is
	// hadoop.http.staticuser.user (dr.who), the web user of a request
	// without user.name; InstrumentationRequiresAdmin
	// (hadoop.security.instrumentation.requires.admin, false) limits /jmx
	// too.
	WebAdmins                    authorize.ACL
	WebStaticUser                string
	InstrumentationRequiresAdmin bool
}

// accessConfigFrom reads the proxy users, the service ACLs and the static
// group mapping of c.
func accessConfigFrom(c *conf.Conf, errs *[]error) AccessConfig {
	a := AccessConfig{ConfDir: c.Dir()}
	var err error
	if a.ProxyUsers, err = proxyuser.FromConf(c, nil); err != nil {
		*errs = append(*errs, err)
	}
	a.ServiceAuthorization, err = c.Bool(conf.HadoopSecurityAuthorization)
	if err != nil {
		*errs = append(*errs, err)
	}
	if a.ServiceAuthorization {
		if a.ACLs, err = authorize.Load(c, a.ConfDir); err != nil {
			*errs = append(*errs, err)
		}
	}
	a.WebAdmins = authorize.ParseACL(c.String(conf.DFSClusterAdministrators))
	a.WebStaticUser = c.String(conf.HadoopHTTPStaticUser)
	if a.InstrumentationRequiresAdmin, err = c.Bool(conf.HadoopSecurityInstrumentationRequiresAdmin); err != nil {
		*errs = append(*errs, err)
	}
	if a.StaticGroups, err = authorize.ParseStaticGroups(c.String(conf.HadoopUserGroupStaticMapping)); err != nil {
		*errs = append(*errs, fmt.Errorf("%s: %v", conf.HadoopUserGroupStaticMapping, err))
	}
	return a
}

// connAccess decides the RPC connections (ipc.ServerConfig.Authorize):
// proxy users, then the protocol's ACL (authorize.Checker). The checker is
// replaced whole by the refresh calls.
type connAccess struct {
	nn      *NameNode
	checker atomic.Pointer[authorize.Checker]
}

func newConnAccess(nn *NameNode) *connAccess {
	a := &connAccess{nn: nn}
	ch := &authorize.Checker{Proxies: nn.cfg.Access.ProxyUsers, Groups: nn.groups.groups}
	if nn.cfg.Access.ServiceAuthorization {
		ch.ACLs = nn.cfg.Access.ACLs
	}
	a.checker.Store(ch)
	return a
}

// authorize is the ipc server's Authorize.
func (a *connAccess) authorize(ca ipc.ConnAuth) error {
	return a.checker.Load().Check(connOf(ca))
}

func connOf(ca ipc.ConnAuth) authorize.Conn {
	return authorize.Conn{User: ca.User, RealUser: ca.RealUser, Principal: ca.Principal, TokenAuth: ca.TokenAuth,
		Protocol: ca.Protocol, Addr: authorize.AddrOf(ca.Remote)}
}

// webProxy decides a WebHDFS doas request with the same proxy-user rules
// as RPC.
func (a *connAccess) webProxy(real, user, remote string) error {
	ip, _ := netip.ParseAddr(remote)
	return a.checker.Load().Proxies.Authorize(proxyuser.Request{Real: real, User: user, Groups: a.nn.groups.groups(user), Addr: ip.Unmap()})
}

// swap replaces the checker by a copy changed by f.
func (a *connAccess) swap(f func(*authorize.Checker)) {
	ch := *a.checker.Load()
	f(&ch)
	a.checker.Store(&ch)
}

// reloadConf reads the configuration files again, as the refresh calls
// do in Hadoop.
func (nn *NameNode) reloadConf() (*conf.Conf, error) {
	if nn.deps.ReloadConf != nil {
		return nn.deps.ReloadConf()
	}
	return conf.Load(conf.Options{Dir: nn.cfg.Access.ConfDir})
}

// refreshProxyUsers is dfsadmin -refreshSuperUserGroupsConfiguration:
// the hadoop.proxyuser.* keys read again from core-site.xml.
func (nn *NameNode) refreshProxyUsers() error {
	c, err := nn.reloadConf()
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "refreshSuperUserGroupsConfiguration: %v", err)
	}
	p, err := proxyuser.FromConf(c, nil)
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "refreshSuperUserGroupsConfiguration: %v", err)
	}
	nn.access.swap(func(ch *authorize.Checker) { ch.Proxies = p })
	nn.deps.Logger.Info("refreshed the proxy users (hadoop.proxyuser.*)")
	return nil
}

// refreshServiceACL is dfsadmin -refreshServiceAcl: hadoop-policy.xml
// read again.
func (nn *NameNode) refreshServiceACL() error {
	if !nn.cfg.Access.ServiceAuthorization {
		return remoteerr.New(classAuthorization, "Service Level Authorization not enabled!")
	}
	c, err := nn.reloadConf()
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "refreshServiceAcl: %v", err)
	}
	p, err := authorize.Load(c, nn.cfg.Access.ConfDir)
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "refreshServiceAcl: %v", err)
	}
	nn.access.swap(func(ch *authorize.Checker) { ch.ACLs = p })
	nn.deps.Logger.Info("refreshed the service-level authorization policy", "file", p.File())
	return nil
}

const classAuthorization = "org.apache.hadoop.security.authorize.AuthorizationException"

// registerRefreshPolicy serves dfsadmin -refreshServiceAcl.
func registerRefreshPolicy(nn *NameNode, c *clientRPC) {
	handle(nn, nn.rpc.Service(RefreshAuthorizationPolicyProtocolName), "refreshServiceAcl",
		func(ctx context.Context, _ *common.RefreshServiceAclRequestProto) (*common.RefreshServiceAclResponseProto, error) {
			if err := c.checkSuper(ctx); err != nil {
				return nil, err
			}
			return nil, nn.refreshServiceACL()
		})
}

// webUGI prints a WebHDFS caller for the audit log, as an RPC caller's:
// SIMPLE (user.name), KERBEROS (SPNEGO) or TOKEN (delegation=), PROXY for
// doas.
func webUGI(wc webCaller) string {
	return authorize.UGI(authorize.Conn{User: wc.user, RealUser: wc.realUser, Principal: wc.principal, TokenAuth: wc.tokenAuth})
}

// webAdmins is who may see the web server's administrative endpoints:
// nil (everyone) unless hadoop.security.authorization is on.
func (nn *NameNode) webAdmins() *web.Admins {
	a := nn.cfg.Access
	if !a.ServiceAuthorization {
		return nil
	}
	return &web.Admins{ACL: a.WebAdmins.Allows, SuperUser: nn.cfg.SuperUser, SuperGroup: nn.cfg.SuperGroup,
		Groups: nn.groups.groups, StaticUser: a.WebStaticUser, InstrumentationRequiresAdmin: a.InstrumentationRequiresAdmin}
}
