package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security/dtoken"
)

const fetchdtUsage = `Usage: hdfs fetchdt [OPTIONS] <token_file_path>
Options:
  --renewer <name>   the user allowed to renew the token (default: none)
  --renew            renew the delegation tokens in the file
  --cancel           cancel the delegation tokens in the file
  --print            print the delegation tokens in the file
  --webservice <url> not supported: tokens come over RPC

Without --renew, --cancel or --print, fetches a delegation token from the
NameNode (Kerberos: kinit first) and writes it to the file in Hadoop's
token storage format.
`

func runFetchdt(inv *Invocation) int {
	var renewer, file string
	renew, cancel, print := false, false, false
	args := inv.Args
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--renewer", "-renewer":
			if i+1 >= len(args) {
				fmt.Fprint(inv.Env.Stderr, fetchdtUsage)
				return exitUsage
			}
			i++
			renewer = args[i]
		case "--renew", "-renew":
			renew = true
		case "--cancel", "-cancel":
			cancel = true
		case "--print", "-print":
			print = true
		case "--webservice", "-webservice":
			fmt.Fprintln(inv.Env.Stderr, "fetchdt: --webservice is not supported: delegation tokens are fetched over RPC")
			return exitFail
		case "-h", "--help", "-help":
			fmt.Fprint(inv.Env.Stdout, fetchdtUsage)
			return exitOK
		default:
			if file != "" || (len(a) > 0 && a[0] == '-') {
				fmt.Fprint(inv.Env.Stderr, fetchdtUsage)
				return exitUsage
			}
			file = a
		}
	}
	if file == "" {
		fmt.Fprint(inv.Env.Stderr, fetchdtUsage)
		return exitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(inv.Env.Stderr, "fetchdt: %s\n", errMessage(err))
		return exitFail
	}
	if renew || cancel || print {
		b, err := os.ReadFile(file)
		if err != nil {
			return fail(err)
		}
		toks, err := dtoken.UnmarshalTokenFile(b)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", file, err))
		}
		var c interface {
			Call(context.Context, string, proto.Message, proto.Message) error
			Close() error
		}
		if renew || cancel {
			nc, _, err := nnClient(inv)
			if err != nil {
				return fail(err)
			}
			defer nc.Close()
			c = nc
		}
		ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
		defer stop()
		for _, t := range toks {
			desc := t.GetKind()
			if id, err := dtoken.Unmarshal(t.GetIdentifier()); err == nil && t.GetKind() == dtoken.Kind {
				desc = dtoken.String(id)
			}
			switch {
			case print:
				fmt.Fprintf(inv.Env.Stdout, "Token %s for %s\n", desc, t.GetService())
			case renew:
				var resp common.RenewDelegationTokenResponseProto
				if err := c.Call(ctx, "renewDelegationToken", &common.RenewDelegationTokenRequestProto{Token: t}, &resp); err != nil {
					return fail(err)
				}
				fmt.Fprintf(inv.Env.Stdout, "Renewed token for %s until: %s\n", t.GetService(),
					time.UnixMilli(int64(resp.GetNewExpiryTime())).Format(time.RFC1123))
			case cancel:
				if err := c.Call(ctx, "cancelDelegationToken", &common.CancelDelegationTokenRequestProto{Token: t},
					&common.CancelDelegationTokenResponseProto{}); err != nil {
					return fail(err)
				}
				fmt.Fprintf(inv.Env.Stdout, "Cancelled token for %s\n", t.GetService())
			}
		}
		return exitOK
	}
	nc, uri, err := nnClient(inv)
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	var resp common.GetDelegationTokenResponseProto
	if err := nc.Call(ctx, "getDelegationToken", &common.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, &resp); err != nil {
		return fail(err)
	}
	if resp.GetToken() == nil {
		return fail(remoteerr.New(remoteerr.ClassIOException,
			"the NameNode issued no delegation token (it does so only with hadoop.security.authentication=kerberos)"))
	}
	if err := os.WriteFile(file, dtoken.MarshalTokenFile([]*common.TokenProto{resp.GetToken()}), 0o600); err != nil {
		return fail(err)
	}
	fmt.Fprintf(inv.Env.Stdout, "Fetched token via %s for %s into %s\n", uri, resp.GetToken().GetService(), file)
	return exitOK
}
