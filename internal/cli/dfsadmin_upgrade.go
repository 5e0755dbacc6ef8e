package cli

import (
	"context"
	"fmt"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// The upgrade commands of dfsadmin, as Hadoop 3 has them:
//
//	-finalizeUpgrade                   every NameNode of an HA nameservice, each named
//	-upgrade <query | finalize>        query: "Upgrade finalized" / "Upgrade not finalized"
//	-rollingUpgrade [<query|prepare|finalize>]
//	                                   query and finalize say no rolling upgrade is in
//	                                   progress; prepare is refused (not supported)

// upgradeTargets returns the NameNodes an upgrade command addresses: each
// NameNode of the nameservice when fs.defaultFS names an HA nameservice
// (ha true), else the one NameNode.
func upgradeTargets(inv *Invocation) (addrs []string, ha bool, err error) {
	addrs, authority, err := fsshell.NameNodeAddresses(inv.Conf)
	if err != nil {
		return nil, false, err
	}
	return addrs, authority != "" && slices.Contains(inv.Conf.Nameservices(), authority), nil
}

// oneNameNode is a client of the NameNode at addr only (no failover).
func oneNameNode(inv *Invocation, addr string) *ipc.Client {
	u := inv.Env.Getenv("HADOOP_USER_NAME")
	if u == "" {
		if cu, err := user.Current(); err == nil {
			u = cu.Username
		}
	}
	cfg := ipc.ClientConfig{Addresses: []string{addr}, User: u, Protocol: clientProtocol, MaxRetries: 1}
	// A login failure shows as the NameNode's refusal of a SIMPLE caller;
	// the other commands report it as it is.
	_ = withKerberos(inv, &cfg, security.NameNode)
	return ipc.NewClient(cfg)
}

// perNameNode runs call against each NameNode of an HA nameservice; it
// prints ok(addr) or failed(addr) for each and joins the errors, counted
// as Hadoop's MultipleIOException does.
func perNameNode(ctx context.Context, inv *Invocation, addrs []string, call func(*ipc.Client) error, ok, failed func(addr string)) error {
	var errs []error
	for _, a := range addrs {
		c := oneNameNode(inv, a)
		err := call(c)
		c.Close()
		if err != nil {
			failed(a)
			errs = append(errs, fmt.Errorf("%s: %s", a, errMessage(err)))
			continue
		}
		ok(a)
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%d exceptions [%s]", len(errs), strings.Join(msgs, ", "))
}

// finalizeUpgradeCmd is dfsadmin -finalizeUpgrade.
func finalizeUpgradeCmd(inv *Invocation, args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(inv.Env.Stderr, "Usage: hdfs dfsadmin [-finalizeUpgrade]")
		return exitAdminError
	}
	return finalizeUpgrade(inv, "finalizeUpgrade")
}

func finalizeUpgrade(inv *Invocation, cmd string) int {
	addrs, ha, err := upgradeTargets(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", cmd, err)
		return exitAdminError
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	finalize := func(c *ipc.Client) error {
		return c.Call(ctx, "finalizeUpgrade", &hdfs.FinalizeUpgradeRequestProto{}, &hdfs.FinalizeUpgradeResponseProto{})
	}
	w := inv.Env.Stdout
	if !ha {
		c, _, err := nnClient(inv)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", cmd, err)
			return exitAdminError
		}
		defer c.Close()
		if err := finalize(c); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "%s: %s\n", cmd, errMessage(err))
			return exitAdminError
		}
		fmt.Fprintln(w, "Finalize upgrade successful")
		return exitOK
	}
	active := false
	for _, a := range addrs {
		c := oneNameNode(inv, a)
		var resp hdfs.HAServiceStateResponseProto
		if c.Call(ctx, "getHAServiceState", &hdfs.HAServiceStateRequestProto{}, &resp) == nil &&
			resp.GetState() == common.HAServiceStateProto_ACTIVE {
			active = true
		}
		c.Close()
	}
	if !active {
		fmt.Fprintf(inv.Env.Stderr, "%s: Cannot finalize with no NameNode active\n", cmd)
		return exitAdminError
	}
	err = perNameNode(ctx, inv, addrs, finalize,
		func(a string) { fmt.Fprintf(w, "Finalize upgrade successful for %s\n", a) },
		func(a string) { fmt.Fprintf(w, "Finalize upgrade failed for %s\n", a) })
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "%s: %v\n", cmd, err)
		return exitAdminError
	}
	return exitOK
}

const upgradeUsage = "Usage: hdfs dfsadmin [-upgrade <query | finalize>]"

// upgradeCmd is dfsadmin -upgrade query|finalize.
func upgradeCmd(inv *Invocation, args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(inv.Env.Stderr, upgradeUsage)
		return exitAdminError
	}
	switch strings.ToLower(args[0]) {
	case "finalize":
		return finalizeUpgrade(inv, "upgrade")
	case "query":
	default:
		fmt.Fprintln(inv.Env.Stderr, upgradeUsage)
		return exitAdminError
	}
	addrs, ha, err := upgradeTargets(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "upgrade: %v\n", err)
		return exitAdminError
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	finalized := false
	query := func(c *ipc.Client) error {
		var resp hdfs.UpgradeStatusResponseProto
		err := c.Call(ctx, "upgradeStatus", &hdfs.UpgradeStatusRequestProto{}, &resp)
		finalized = resp.GetUpgradeFinalized()
		return err
	}
	w := inv.Env.Stdout
	if !ha {
		c, _, err := nnClient(inv)
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "upgrade: %v\n", err)
			return exitAdminError
		}
		defer c.Close()
		if err := query(c); err != nil {
			fmt.Fprintf(inv.Env.Stderr, "upgrade: %s\n", errMessage(err))
			return exitAdminError
		}
		if finalized {
			fmt.Fprintln(w, "Upgrade finalized")
		} else {
			fmt.Fprintln(w, "Upgrade not finalized")
		}
		return exitOK
	}
	err = perNameNode(ctx, inv, addrs, query, func(a string) {
		if finalized {
			fmt.Fprintf(w, "Upgrade finalized for %s\n", a)
		} else {
			fmt.Fprintf(w, "Upgrade not finalized for %s\n", a)
		}
	}, func(a string) { fmt.Fprintf(inv.Env.Stderr, "Getting upgrade status failed for %s\n", a) })
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "upgrade: %v\n", err)
		return exitAdminError
	}
	return exitOK
}

const rollingUpgradeUsage = "Usage: hdfs dfsadmin [-rollingUpgrade [<query|prepare|finalize>]]"

// rollingUpgradeCmd is dfsadmin -rollingUpgrade [query|prepare|finalize]:
// the NameNode answers that no rolling upgrade is in progress, and refuses
// to prepare one.
func rollingUpgradeCmd(inv *Invocation, args []string) int {
	action := hdfs.RollingUpgradeActionProto_QUERY
	if len(args) > 1 {
		fmt.Fprintln(inv.Env.Stderr, rollingUpgradeUsage)
		return exitAdminError
	}
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "query":
		case "prepare":
			action = hdfs.RollingUpgradeActionProto_START
		case "finalize":
			action = hdfs.RollingUpgradeActionProto_FINALIZE
		default:
			fmt.Fprintf(inv.Env.Stderr, "rollingUpgrade: Unknown action: %s\n%s\n", args[0], rollingUpgradeUsage)
			return exitAdminError
		}
	}
	c, _, err := nnClient(inv)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "rollingUpgrade: %v\n", err)
		return exitAdminError
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var resp hdfs.RollingUpgradeResponseProto
	if err := c.Call(ctx, "rollingUpgrade", &hdfs.RollingUpgradeRequestProto{Action: action.Enum()}, &resp); err != nil {
		fmt.Fprintf(inv.Env.Stderr, "rollingUpgrade: %s\n", errMessage(err))
		return exitAdminError
	}
	if resp.GetRollingUpgradeInfo() != nil {
		// Our NameNode never starts one; another might.
		fmt.Fprintf(inv.Env.Stdout, "Rolling upgrade of block pool %s, finalized: %v\n",
			resp.GetRollingUpgradeInfo().GetStatus().GetBlockPoolId(), resp.GetRollingUpgradeInfo().GetStatus().GetFinalized())
		return exitOK
	}
	fmt.Fprintln(inv.Env.Stdout, "There is no rolling upgrade in progress or rolling upgrade has already been finalized.")
	return exitOK
}
