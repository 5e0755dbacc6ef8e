package authorize

import (
	"fmt"
	"net/netip"
	"os/user"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security/proxyuser"
)

// Checker decides a daemon's RPC connections as Hadoop's RPC server does
// when a connection context arrives: a proxy request against the proxy
// users, then the protocol against the service ACLs. The NameNode keeps
// its own (its policies are refreshed); DataNodes and JournalNodes use
// one built from their configuration at start.
type Checker struct {
	Proxies *proxyuser.Policy
	ACLs    *Policy // nil: hadoop.security.authorization is off
	Groups  func(user string) []string
}

// NewChecker reads the proxy users and, with
// hadoop.security.authorization, the service ACLs (hadoop-policy.xml in
// c's directory). groups resolves users' groups.
func NewChecker(c *conf.Conf, groups func(string) []string) (*Checker, error) {
	ch := &Checker{Groups: groups}
	var err error
	if ch.Proxies, err = proxyuser.FromConf(c, nil); err != nil {
		return nil, err
	}
	on, err := c.Bool(conf.HadoopSecurityAuthorization)
	if err != nil {
		return nil, err
	}
	if on {
		if ch.ACLs, err = Load(c, c.Dir()); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// Conn is a connection to decide.
type Conn struct {
	User      string // effective user
	RealUser  string // the authenticated user of a proxy connection, else ""
	Principal string // Kerberos principal (a token's owner), "" for SIMPLE
	TokenAuth bool
	Protocol  string
	Addr      netip.Addr
}

// Check returns nil when the connection may go on, else the refusal.
func (ch *Checker) Check(c Conn) error {
	var groups []string
	lookup := func() []string {
		if groups == nil && ch.Groups != nil {
			groups = ch.Groups(c.User)
		}
		return groups
	}
	if c.RealUser != "" {
		name := c.RealUser
		if c.Principal != "" {
			name = c.Principal
		}
		if err := ch.Proxies.Authorize(proxyuser.Request{Real: c.RealUser, RealName: name, User: c.User,
			Groups: lookup(), Addr: c.Addr}); err != nil {
			return err
		}
	}
	if ch.ACLs == nil {
		return nil
	}
	return ch.ACLs.Authorize(c.Protocol, Subject{User: c.User, Groups: lookup(), UGI: UGI(c), Addr: c.Addr})
}

// UGI prints the connection's user as Hadoop's UserGroupInformation
// does: "joe (auth:SIMPLE)", "alice@REALM (auth:KERBEROS)", or for a
// proxy "joe (auth:PROXY) via super (auth:SIMPLE)".
func UGI(c Conn) string {
	name, auth := c.User, "SIMPLE"
	if c.RealUser != "" {
		name = c.RealUser
	}
	switch {
	case c.TokenAuth:
		name, auth = c.Principal, "TOKEN"
	case c.Principal != "":
		name, auth = c.Principal, "KERBEROS"
	}
	if c.RealUser == "" {
		return name + " (auth:" + auth + ")"
	}
	return c.User + " (auth:PROXY) via " + name + " (auth:" + auth + ")"
}

// ParseStaticGroups reads hadoop.user.group.static.mapping.overrides:
// "user=group1,group2;user2=".
func ParseStaticGroups(s string) (map[string][]string, error) {
	m := map[string][]string{}
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		user, groups, ok := strings.Cut(part, "=")
		user = strings.TrimSpace(user)
		if !ok || user == "" {
			return nil, fmt.Errorf("bad mapping %q (want user=group1,group2)", part)
		}
		m[user] = append([]string{}, splitList(groups)...)
	}
	return m, nil
}

// HostGroups returns a group resolver for daemons without a group cache:
// the static mapping of c first, else the groups of the operating-system
// account of that name (none for a user that is not one), as Hadoop's
// default shell-based mapping finds them.
func HostGroups(c *conf.Conf) (func(string) []string, error) {
	static, err := ParseStaticGroups(c.String(conf.HadoopUserGroupStaticMapping))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", conf.HadoopUserGroupStaticMapping, err)
	}
	return func(name string) []string {
		if g, ok := static[name]; ok {
			return g
		}
		u, err := user.Lookup(name)
		if err != nil {
			return nil
		}
		ids, err := u.GroupIds()
		if err != nil {
			return nil
		}
		var out []string
		for _, id := range ids {
			if g, err := user.LookupGroupId(id); err == nil {
				out = append(out, g.Name)
			}
		}
		return out
	}, nil
}
