package cli

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"

	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// kerberosLogins caches the tools' Kerberos login per configuration, so
// that one command reads the ticket cache once.
var kerberosLogins sync.Map // configuration (*conf.Conf) -> *kerberosLogin

type kerberosLogin struct {
	once sync.Once
	ini  *security.Initiator // nil: SIMPLE
	q    security.QOP
	err  error
}

// withKerberos makes cfg authenticate as the invoking user with Kerberos
// when hadoop.security.authentication=kerberos: the ticket cache
// (KRB5CCNAME) or hdfsgo.client.keytab.file, a ticket for the role's
// principal, hadoop.rpc.protection. Under SIMPLE it leaves cfg as it is.
func withKerberos(inv *Invocation, cfg *ipc.ClientConfig, role security.Role) error {
	c := inv.Conf
	if role == security.NameNode {
		tok, err := fsshell.TokenFromEnv(inv.Env.Getenv)
		if err != nil {
			return err
		}
		if tok != nil {
			id, err := dtoken.Unmarshal(tok.Identifier)
			if err != nil {
				return fmt.Errorf("HADOOP_TOKEN_FILE_LOCATION: %w", err)
			}
			cfg.Token = &common.TokenProto{Identifier: tok.Identifier, Password: tok.Password,
				Kind: proto.String(tok.Kind), Service: proto.String(tok.Service)}
			cfg.TokenUser = id.Owner
			return nil
		}
	}
	v, _ := kerberosLogins.LoadOrStore(c, &kerberosLogin{})
	l := v.(*kerberosLogin)
	l.once.Do(func() {
		kc, err := security.ClientLogin(c, inv.Env.Getenv)
		if err != nil || kc == nil {
			l.err = err
			return
		}
		if l.q, l.err = security.Protection(c); l.err != nil {
			return
		}
		l.ini = &security.Initiator{Client: kc}
	})
	if l.err != nil || l.ini == nil {
		return l.err
	}
	p, err := security.ServerPrincipal(c, role)
	if err != nil {
		return err
	}
	cfg.Kerberos = &security.Initiator{Client: l.ini.Client, Principal: p}
	cfg.Protection = l.q
	return nil
}
