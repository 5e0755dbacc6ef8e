package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/balancer"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/dtsasl"
	"github.com/hdfsgo/hdfsgo/internal/namenode/hosts"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

const balancerUsage = `Usage: hdfs balancer
	[-policy <policy>]	the balancing policy: datanode or blockpool
	[-threshold <threshold>]	Percentage of disk capacity
	[-exclude [-f <hosts-file> | <comma-separated list of hosts>]]	Excludes the specified datanodes.
	[-include [-f <hosts-file> | <comma-separated list of hosts>]]	Includes only the specified datanodes.
	[-source [-f <hosts-file> | <comma-separated list of hosts>]]	Pick only the specified datanodes as source nodes.
	[-blockpools <comma-separated list of blockpool ids>]	The balancer will only run on blockpools included in this list.
	[-idleiterations <idleiterations>]	Number of consecutive idle iterations (-1 for Infinite) before exit.
	[-runDuringUpgrade]	Whether to run the balancer during an ongoing HDFS upgrade.This is usually not desired since it will not affect used space on over-utilized machines.
	[-sortTopNodes]	Sort datanodes based on the utilization so that highly utilized datanodes get scheduled first.
`

// runBalancer is `hdfs balancer`: Hadoop's options, its table on stdout and
// its exit statuses (a negative status exits as 256 + status).
func runBalancer(inv *Invocation) int {
	start := time.Now()
	cfg, err := balancerConfig(inv)
	if err != nil {
		return dispatcherUsageError(inv, err, balancerUsage, "Balancing", start)
	}
	return runUntilSignal(inv, "balancer", func(ctx context.Context) balancer.ExitStatus {
		return balancer.Run(ctx, cfg, inv.Env.Stdout)
	})
}

// balancerConfig reads the options and the configuration keys.
func balancerConfig(inv *Invocation) (balancer.Config, error) {
	c := inv.Conf
	cfg, err := dispatcherConfig(inv)
	if err != nil {
		return cfg, err
	}
	cfg.Threshold, cfg.IdleIterations = 10, 5
	if cfg.DataTransfer, err = dtsasl.ConfigFrom(c); err != nil {
		return cfg, err
	}
	if err := balancerKerberos(inv, &cfg); err != nil {
		return cfg, err
	}
	args := inv.Args
	all := "[" + strings.Join(args, ", ") + "]"
	hostList := func(i int, kind string) (map[string]bool, int, error) {
		if i+1 >= len(args) {
			return nil, i, fmt.Errorf("List of %s nodes | -f <filename> is missing: args=%s", kind, all)
		}
		i++
		set := map[string]bool{}
		if strings.EqualFold(args[i], "-f") {
			if i+1 >= len(args) {
				return nil, i, fmt.Errorf("File containing %s nodes is not specified: args=%s", kind, all)
			}
			i++
			data, err := os.ReadFile(args[i])
			if err != nil {
				return nil, i, fmt.Errorf("Failed to read %s node list from file: %s", kind, args[i])
			}
			entries, _ := hosts.ParsePlain(data)
			for _, e := range entries {
				set[e.String()] = true
			}
			return set, i, nil
		}
		for _, h := range strings.Split(args[i], ",") {
			if h = strings.TrimSpace(h); h != "" {
				set[h] = true
			}
		}
		return set, i, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.EqualFold(a, "-threshold"):
			if i+1 >= len(args) {
				return cfg, fmt.Errorf("Threshold value is missing: args = %s", all)
			}
			i++
			v, err := strconv.ParseFloat(args[i], 64)
			if err != nil || v < 1 || v > 100 {
				return cfg, fmt.Errorf("Expecting a number in the range of [1.0, 100.0]: %s", args[i])
			}
			cfg.Threshold = v
		case strings.EqualFold(a, "-policy"):
			if i+1 >= len(args) {
				return cfg, fmt.Errorf("Policy value is missing: args = %s", all)
			}
			i++
			switch strings.ToLower(args[i]) {
			case "datanode":
				cfg.Policy = balancer.PolicyDataNode
			case "blockpool":
				cfg.Policy = balancer.PolicyBlockPool
			default:
				return cfg, fmt.Errorf("Cannot parse string \"%s\"", args[i])
			}
		case strings.EqualFold(a, "-exclude"):
			if cfg.Exclude, i, err = hostList(i, "exclude"); err != nil {
				return cfg, err
			}
		case strings.EqualFold(a, "-include"):
			if cfg.Include, i, err = hostList(i, "include"); err != nil {
				return cfg, err
			}
		case strings.EqualFold(a, "-source"):
			if cfg.Source, i, err = hostList(i, "source"); err != nil {
				return cfg, err
			}
		case strings.EqualFold(a, "-blockpools"):
			if i+1 >= len(args) {
				return cfg, fmt.Errorf("blockpools value is missing: args = %s", all)
			}
			i++
			cfg.BlockPools = strings.Split(args[i], ",")
		case strings.EqualFold(a, "-idleiterations"):
			if i+1 >= len(args) {
				return cfg, fmt.Errorf("idleiterations value is missing: args = %s", all)
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil {
				return cfg, fmt.Errorf("For input string: \"%s\"", args[i])
			}
			cfg.IdleIterations = n
		case strings.EqualFold(a, "-runDuringUpgrade"):
			cfg.RunDuringUpgrade = true
		case strings.EqualFold(a, "-sortTopNodes"):
			cfg.SortTopNodes = true
		case strings.EqualFold(a, "-asService"), strings.EqualFold(a, "-hotBlockTimeInterval"), strings.EqualFold(a, "-limitOverUtilizedNum"):
			return cfg, fmt.Errorf("balancer: %s is not supported", a)
		default:
			return cfg, fmt.Errorf("args = %s", all)
		}
	}
	if cfg.Include != nil && cfg.Exclude != nil {
		return cfg, errors.New("-exclude and -include options cannot be specified together.")
	}
	var errs []error
	r := c.Reader(&errs)
	num, size, dur := r.Int, r.Size, r.Duration
	cfg.MaxConcurrentMoves = int(num(conf.DFSDataNodeBalanceMaxMoves))
	cfg.GetBlocksSize = size(conf.DFSBalancerGetBlocksSize)
	cfg.GetBlocksMinSize = size(conf.DFSBalancerGetBlocksMinSize)
	cfg.MaxSizeToMove = size(conf.DFSBalancerMaxSizeToMove)
	cfg.BlockSize = size(conf.DFSBlockSize)
	readMoveTiming(r, &cfg)
	cfg.MaxNoMoveInterval = dur(conf.DFSBalancerMaxNoMoveInterval)
	cfg.MaxIterationTime = dur(conf.DFSBalancerMaxIterationTime)
	cfg.MovedWinWidth = dur(conf.DFSBalancerMovedWinWidth)
	if err := errors.Join(errs...); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// balancerKerberos logs the balancer in when
// hadoop.security.authentication=kerberos, as Hadoop's does: from
// dfs.balancer.keytab.file as dfs.balancer.kerberos.principal (_HOST: this
// host's name) when dfs.balancer.keytab.enabled, else from the ticket
// cache of whoever runs it. Its NameNode connections then speak SASL
// GSSAPI with hadoop.rpc.protection.
func balancerKerberos(inv *Invocation, cfg *balancer.Config) error {
	c := inv.Conf
	on, err := security.Kerberos(c)
	if err != nil || !on {
		return err
	}
	p, err := security.ServerPrincipal(c, security.NameNode)
	if err != nil {
		return err
	}
	if cfg.Protection, err = security.Protection(c); err != nil {
		return err
	}
	useKeytab, err := c.Bool(conf.DFSBalancerKeytabEnabled)
	if err != nil {
		return err
	}
	if useKeytab {
		host, _ := os.Hostname()
		id, err := security.RoleIdentity(c, security.Balancer, host, inv.Env.Getenv)
		if err != nil {
			return err
		}
		cfg.Kerberos, cfg.User = id.InitiatorFor(p), id.User
		return nil
	}
	kc, err := security.ClientLogin(c, inv.Env.Getenv)
	if err != nil {
		return err
	}
	cfg.Kerberos = &security.Initiator{Client: kc, Principal: p}
	cfg.User, _, _ = strings.Cut(kc.Credentials.UserName(), "/")
	return nil
}
