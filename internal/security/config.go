package security

import (
	"fmt"
	"net"
	"os"
	"strings"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Role names the keys of one daemon's Kerberos identity.
type Role struct {
	Name         string // for messages: "NameNode"
	PrincipalKey string // dfs.namenode.kerberos.principal
	KeytabKey    string // dfs.namenode.keytab.file
}

// The daemons' roles.
var (
	NameNode          = Role{"NameNode", conf.DFSNameNodeKerberosPrincipal, conf.DFSNameNodeKeytabFile}
	DataNode          = Role{"DataNode", conf.DFSDataNodeKerberosPrincipal, conf.DFSDataNodeKeytabFile}
	JournalNode       = Role{"JournalNode", conf.DFSJournalNodeKerberosPrincipal, conf.DFSJournalNodeKeytabFile}
	SecondaryNameNode = Role{"SecondaryNameNode", conf.DFSSecondaryNameNodeKerberosPrincipal, conf.DFSSecondaryNameNodeKeytabFile}
	Balancer          = Role{"Balancer", conf.DFSBalancerKerberosPrincipal, conf.DFSBalancerKeytabFile}
)

// Kerberos reports whether hadoop.security.authentication is kerberos.
func Kerberos(c *conf.Conf) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(c.String(conf.HadoopSecurityAuthentication))); v {
	case "simple", "":
		return false, nil
	case "kerberos":
		return true, nil
	default:
		return false, fmt.Errorf("%s: unknown authentication %q (want simple or kerberos; from %s)",
			conf.HadoopSecurityAuthentication, v, c.Source(conf.HadoopSecurityAuthentication))
	}
}

// Protection returns hadoop.rpc.protection.
func Protection(c *conf.Conf) (QOP, error) {
	return ParseProtection(conf.HadoopRPCProtection, c.String(conf.HadoopRPCProtection))
}

// Krb5Config loads the Kerberos configuration: $KRB5_CONFIG, else
// /etc/krb5.conf.
func Krb5Config(env func(string) string) (*krbconfig.Config, string, error) {
	path := env("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	if i := strings.IndexByte(path, ':'); i >= 0 {
		path = path[:i] // the first of a list
	}
	kc, err := krbconfig.Load(path)
	if err != nil {
		return nil, path, fmt.Errorf("Kerberos configuration %s (KRB5_CONFIG): %v", path, err)
	}
	return kc, path, nil
}

// HostOf returns the host name a principal's _HOST stands for on a daemon
// listening at addr: the address's name, or for an IP address its reverse
// name, or the machine's name.
func HostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if ip := net.ParseIP(host); ip != nil || host == "" {
		if ip != nil && !ip.IsUnspecified() {
			if names, err := net.LookupAddr(host); err == nil && len(names) > 0 {
				return strings.ToLower(strings.TrimSuffix(names[0], "."))
			}
		}
		h, _ := os.Hostname()
		return strings.ToLower(h)
	}
	return strings.ToLower(host)
}

// Identity is a daemon's Kerberos identity: what its RPC server accepts
// and how it logs in as a client of other daemons.
type Identity struct {
	Acceptor  *Acceptor         // for the daemon's own RPC server
	Client    *krbclient.Client // logged in with the keytab
	Principal string            // the daemon's principal, _HOST replaced
	User      string            // its short name (auth_to_local)
}

// RoleIdentity loads the role's keytab and logs in with it, when Kerberos
// is on (nil, nil when it is off). addr is the daemon's RPC address, whose
// host replaces _HOST.
func RoleIdentity(c *conf.Conf, role Role, addr string, env func(string) string) (*Identity, error) {
	on, err := Kerberos(c)
	if err != nil || !on {
		return nil, err
	}
	principal := c.String(role.PrincipalKey)
	if principal == "" {
		return nil, fmt.Errorf("%s: %s is not set (needed with %s=kerberos)", role.Name, role.PrincipalKey, conf.HadoopSecurityAuthentication)
	}
	ktPath := c.String(role.KeytabKey)
	if ktPath == "" {
		return nil, fmt.Errorf("%s: %s is not set (needed with %s=kerberos)", role.Name, role.KeytabKey, conf.HadoopSecurityAuthentication)
	}
	kt, err := keytab.Load(ktPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %s=%s: %v", role.Name, role.KeytabKey, ktPath, err)
	}
	kc, _, err := Krb5Config(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", role.Name, err)
	}
	q, err := Protection(c)
	if err != nil {
		return nil, err
	}
	rules, err := ParseRules(c.String(conf.HadoopSecurityAuthToLocal))
	if err != nil {
		return nil, err
	}
	self, err := ParsePrincipal(ReplaceHost(principal, HostOf(addr)))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", role.Name, role.PrincipalKey, err)
	}
	if self.Realm == "" {
		self.Realm = kc.LibDefaults.DefaultRealm
	}
	name := self.Primary
	if self.Instance != "" {
		name += "/" + self.Instance
	}
	cl := krbclient.NewWithKeytab(name, self.Realm, kt, kc, krbclient.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("%s: Kerberos login as %s with keytab %s: %v", role.Name, self, ktPath, err)
	}
	user, err := rules.ShortName(self.String(), kc.LibDefaults.DefaultRealm)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", role.Name, self, err)
	}
	return &Identity{
		Acceptor: &Acceptor{Keytab: kt, KeytabPath: ktPath, Principal: principal, Rules: rules,
			DefaultRealm: kc.LibDefaults.DefaultRealm, Protection: q},
		Client: cl, Principal: self.String(), User: user,
	}, nil
}

// ClientLogin returns the Kerberos client of the hdfs command when
// Kerberos is on (nil, nil when it is off): from the keytab of
// hdfsgo.client.keytab.file when set, else from the ticket cache
// ($KRB5CCNAME, default /tmp/krb5cc_UID), as after kinit.
func ClientLogin(c *conf.Conf, env func(string) string) (*krbclient.Client, error) {
	on, err := Kerberos(c)
	if err != nil || !on {
		return nil, err
	}
	kc, _, err := Krb5Config(env)
	if err != nil {
		return nil, err
	}
	if ktPath := c.String(conf.HDFSGoClientKeytabFile); ktPath != "" {
		kt, err := keytab.Load(ktPath)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %v", conf.HDFSGoClientKeytabFile, ktPath, err)
		}
		p, err := ParsePrincipal(c.String(conf.HDFSGoClientKerberosPrincipal))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", conf.HDFSGoClientKerberosPrincipal, err)
		}
		if p.Realm == "" {
			p.Realm = kc.LibDefaults.DefaultRealm
		}
		name := p.Primary
		if p.Instance != "" {
			name += "/" + p.Instance
		}
		cl := krbclient.NewWithKeytab(name, p.Realm, kt, kc, krbclient.DisablePAFXFAST(true))
		if err := cl.Login(); err != nil {
			return nil, fmt.Errorf("Kerberos login as %s with keytab %s: %v", p, ktPath, err)
		}
		return cl, nil
	}
	path := env("KRB5CCNAME")
	if path == "" {
		path = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
	}
	path = strings.TrimPrefix(path, "FILE:")
	cc, err := credentials.LoadCCache(path)
	if err != nil {
		return nil, fmt.Errorf("no Kerberos ticket: cannot read the ticket cache %s (KRB5CCNAME): %v; run kinit first", path, err)
	}
	cl, err := krbclient.NewFromCCache(cc, kc, krbclient.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("no usable Kerberos ticket in %s: %v; run kinit first", path, err)
	}
	return cl, nil
}

// ServerPrincipal returns the NameNode principal a client asks a ticket
// for (dfs.namenode.kerberos.principal), or an error naming the key.
func ServerPrincipal(c *conf.Conf, role Role) (string, error) {
	p := c.String(role.PrincipalKey)
	if p == "" {
		return "", fmt.Errorf("Failed to specify server's Kerberos principal name (%s is not set)", role.PrincipalKey)
	}
	return p, nil
}

// ServerAcceptor returns what the daemon's RPC server accepts; nil (SIMPLE)
// for a nil Identity.
func (id *Identity) ServerAcceptor() *Acceptor {
	if id == nil {
		return nil
	}
	return id.Acceptor
}

// InitiatorFor returns the initiator the daemon uses to call a server
// whose principal is serverPrincipal; nil (SIMPLE) for a nil Identity.
func (id *Identity) InitiatorFor(serverPrincipal string) *Initiator {
	if id == nil {
		return nil
	}
	return &Initiator{Client: id.Client, Principal: serverPrincipal}
}
