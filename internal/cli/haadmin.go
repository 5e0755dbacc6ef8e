package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// haCommand is one line of Hadoop's DFSHAAdmin usage table.
type haCommand struct {
	name, args, help string
	// options are the long options the command takes (without "--").
	options []string
}

// haCommands is the table in Hadoop's order (a sorted map there).
var haCommands = []haCommand{
	{name: "-checkHealth", args: "<serviceId>",
		help: "Requests that the service perform a health check.\nThe HAAdmin tool will exit with a non-zero exit code\nif the check fails."},
	{name: "-failover", args: "[--forcefence] [--forceactive] <serviceId> <serviceId>",
		help: "Failover from the first service to the second.\nUnconditionally fence services if the --forcefence option is used.\n" +
			"Try to failover to the target service even if it is not ready if the --forceactive option is used.",
		options: []string{"forcefence", "forceactive", "forcemanual"}},
	{name: "-getAllServiceState", help: "Returns the state of all the services"},
	{name: "-getServiceState", args: "<serviceId>", help: "Returns the state of the service"},
	{name: "-help", args: "<command>", help: "Displays help on the specified command"},
	{name: "-transitionToActive", args: "[--forceactive] <serviceId>", help: "Transitions the service into Active state",
		options: []string{"forceactive", "forcemanual"}},
	{name: "-transitionToObserver", args: "<serviceId>", help: "Transitions the service into Observer state",
		options: []string{"forcemanual"}},
	{name: "-transitionToStandby", args: "<serviceId>", help: "Transitions the service into Standby state",
		options: []string{"forcemanual"}},
}

const haUsageHead = "Usage: haadmin [-ns <nameserviceId>]"

// haGenericUsage is Hadoop's generic options text, cut to the options
// this command line takes.
const haGenericUsage = `Generic options supported are:
-D <property=value>               define a value for a given property
-fs <file:///|hdfs://namenode:port> specify default filesystem URL to use, overrides 'fs.defaultFS' property from configurations.

The general command line syntax is:
command [genericOptions] [commandOptions]

`

// haadminUsage is what "hdfs haadmin -help" prints.
var haadminUsage = func() string {
	var b strings.Builder
	b.WriteString(haUsageHead + "\n")
	for _, c := range haCommands {
		if c.args == "" {
			fmt.Fprintf(&b, "    [%s]\n", c.name)
		} else {
			fmt.Fprintf(&b, "    [%s %s]\n", c.name, c.args)
		}
	}
	b.WriteString("\n" + haGenericUsage)
	return b.String()
}()

// exitHAFail is what Hadoop's HA admin tool returns on every failure: -1,
// which the process exits with as 255.
const exitHAFail = 255

// checkOthersTimeout is the timeout Hadoop's -transitionToActive gives its
// look at the other NameNodes.
const checkOthersTimeout = 5 * time.Second

// maxPrompts bounds how often the --forcemanual question is asked again
// after an answer that is neither yes nor no.
const maxPrompts = 10

func haCommandByName(name string) (haCommand, bool) {
	for _, c := range haCommands {
		if c.name == name {
			return c, true
		}
	}
	return haCommand{}, false
}

// haAdmin is one run of hdfs haadmin.
type haAdmin struct {
	inv    *Invocation
	out    io.Writer
	errOut io.Writer
	ns     string
	source haservice.RequestSource
	cfg    haservice.Config
	dial   haservice.Dialer
}

func runHAAdmin(inv *Invocation) int {
	h := &haAdmin{inv: inv, out: inv.Env.Stdout, errOut: inv.Env.Stderr, source: haservice.RequestByUser}
	return h.run(inv.Args)
}

func (h *haAdmin) printUsage(w io.Writer) { fmt.Fprint(w, haadminUsage) }

func (h *haAdmin) printCommandUsage(c haCommand) {
	if c.args == "" {
		fmt.Fprintf(h.errOut, "%s [%s]\n", haUsageHead, c.name)
	} else {
		fmt.Fprintf(h.errOut, "%s [%s %s]\n", haUsageHead, c.name, c.args)
	}
}

func (h *haAdmin) run(args []string) int {
	if len(args) == 0 {
		h.printUsage(h.errOut)
		return exitHAFail
	}
	if args[0] == "-ns" {
		if len(args) == 1 {
			fmt.Fprintln(h.errOut, "Missing nameservice ID")
			h.printUsage(h.errOut)
			return exitHAFail
		}
		h.ns = args[1]
		if len(args) == 2 {
			fmt.Fprintln(h.errOut, "Missing command")
			h.printUsage(h.errOut)
			return exitHAFail
		}
		args = args[2:]
	}
	name := args[0]
	if !strings.HasPrefix(name, "-") {
		fmt.Fprintf(h.errOut, "Bad command '%s': expected command starting with '-'\n", name)
		h.printUsage(h.errOut)
		return exitHAFail
	}
	cmd, ok := haCommandByName(name)
	if !ok {
		fmt.Fprintf(h.errOut, "%s: Unknown command\n", name[1:])
		h.printUsage(h.errOut)
		return exitHAFail
	}
	if name == "-help" {
		return h.help(args)
	}
	opts, rest, ok := parseHAOptions(cmd, args[1:])
	if !ok {
		fmt.Fprintf(h.errOut, "%s: incorrect arguments\n", name[1:])
		h.printCommandUsage(cmd)
		return exitHAFail
	}
	if opts["forcemanual"] > 0 {
		if !h.confirmForceManual() {
			h.inv.Logger.Error("Aborted")
			return exitHAFail
		}
		h.source = haservice.RequestByUserForced
	}
	cfg, err := haservice.ConfigFrom(h.inv.Conf)
	if err != nil {
		return h.fail(err)
	}
	var kc ipc.ClientConfig
	if err := withKerberos(h.inv, &kc, security.NameNode); err != nil {
		return h.fail(err)
	}
	cfg.Kerberos, cfg.Protection = kc.Kerberos, kc.Protection
	h.cfg = cfg // with its Kerberos: the failover's own calls and the controllers' use it
	h.dial = haservice.ClientDialer(haUser(h.inv), cfg, nil)

	ctx, stop := h.context()
	defer stop()
	switch name {
	case "-transitionToActive":
		return h.transitionToActive(ctx, cmd, rest, opts["forceactive"] > 0)
	case "-transitionToStandby", "-transitionToObserver":
		return h.transition(ctx, cmd, rest)
	case "-failover":
		return h.failover(ctx, cmd, rest, opts)
	case "-getServiceState":
		return h.getServiceState(ctx, cmd, rest)
	case "-getAllServiceState":
		return h.getAllServiceState(ctx)
	case "-checkHealth":
		return h.checkHealth(ctx, cmd, rest)
	}
	return exitHAFail
}

// context is the command's ctx: cancelled by SIGINT or SIGTERM when the
// environment delivers them, so that a fencing command is killed rather
// than left running when the operator interrupts.
func (h *haAdmin) context() (context.Context, func()) {
	sigs := relaySignals(h.inv, "")
	return sigs.ctx, sigs.stop
}

// parseHAOptions splits a command's arguments into its options and the
// rest, as Hadoop's GnuParser does: an option may have one or two leading
// dashes and stand anywhere; "--" ends the options; an unknown option is
// an error. The counts say how often each option was given.
func parseHAOptions(cmd haCommand, args []string) (map[string]int, []string, bool) {
	opts := map[string]int{}
	var rest []string
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		known := false
		for _, o := range cmd.options {
			known = known || o == name
		}
		if !known {
			return nil, nil, false
		}
		opts[name]++
	}
	return opts, rest, true
}

func (h *haAdmin) help(args []string) int {
	if len(args) == 1 {
		h.printUsage(h.out)
		return exitOK
	}
	helpCmd, _ := haCommandByName("-help")
	if len(args) != 2 {
		h.printCommandUsage(helpCmd)
		return exitHAFail
	}
	name := args[1]
	if !strings.HasPrefix(name, "-") {
		name = "-" + name
	}
	c, ok := haCommandByName(name)
	if !ok {
		fmt.Fprintf(h.errOut, "%s: Unknown command\n", name)
		h.printUsage(h.errOut)
		return exitHAFail
	}
	if c.args == "" {
		fmt.Fprintf(h.out, "%s: %s\n", c.name, c.help)
	} else {
		fmt.Fprintf(h.out, "%s [%s]: %s\n", c.name, c.args, c.help)
	}
	return exitOK
}

// confirmForceManual asks Hadoop's question on stderr and reads the answer
// from stdin: y/yes goes on, n/no (or the end of the input) aborts.
func (h *haAdmin) confirmForceManual() bool {
	const prompt = "You have specified the --forcemanual flag. This flag is dangerous, as it can induce a split-brain scenario " +
		"that WILL CORRUPT your HDFS namespace, possibly irrecoverably.\n\n" +
		"It is recommended not to use this flag, but instead to shut down the cluster and disable automatic failover " +
		"if you prefer to manually manage your HA state.\n\n" +
		"You may abort safely by answering 'n' or hitting ^C now.\n\n" +
		"Are you sure you want to continue?"
	return confirmPrompt(bufio.NewReader(h.inv.Env.Stdin), h.errOut, prompt)
}

// resolve is Hadoop's resolveTarget: the NameNode nn of the command's
// nameservice.
func (h *haAdmin) resolve(ctx context.Context, nn string) (*haservice.Target, error) {
	rctx, cancel := context.WithTimeout(ctx, h.cfg.ConnectTimeout)
	defer cancel()
	return haservice.ResolveNameNode(rctx, h.inv.Conf, h.ns, nn, nil)
}

// fail prints an error the way Hadoop's tool does and returns its status:
// argument and configuration errors as "Illegal argument", the rest as
// "Operation failed".
func (h *haAdmin) fail(err error) int {
	var fe *haservice.FenceConfigError
	switch {
	case errors.Is(err, haservice.ErrNoTarget):
		fmt.Fprintf(h.errOut, "Illegal argument: %s\n", strings.TrimPrefix(err.Error(), haservice.ErrNoTarget.Error()+": "))
	case errors.Is(err, haservice.ErrNoFencer):
		msg := "failover requires a fencer"
		if errors.As(err, &fe) {
			msg += " (" + fe.Error() + ")"
		}
		fmt.Fprintf(h.errOut, "Illegal argument: %s\n", msg)
	case isConfigError(err):
		fmt.Fprintf(h.errOut, "Illegal argument: %v\n", err)
	default:
		fmt.Fprintf(h.errOut, "Operation failed: %s\n", haservice.Message(err))
	}
	return exitHAFail
}

// checkManual is Hadoop's checkManualStateManagementOK: with automatic
// failover on, only a --forcemanual request may change a state by hand.
func (h *haAdmin) checkManual(t *haservice.Target) bool {
	if !t.AutoFailover {
		return true
	}
	if h.source != haservice.RequestByUserForced {
		fmt.Fprintf(h.errOut, "Automatic failover is enabled for %s\n"+
			"Refusing to manually manage HA state, since it may cause\n"+
			"a split-brain scenario or other incorrect state.\n"+
			"If you are very sure you know what you are doing, please \n"+
			"specify the --forcemanual flag.\n", t)
		return false
	}
	h.inv.Logger.Warn("Proceeding with manual HA state management even though\nautomatic failover is enabled for " + t.String())
	return true
}

func (h *haAdmin) call(t *haservice.Target, timeout time.Duration) haservice.Conn {
	return h.dial(t, timeout, 1)
}

// oneNameNode checks that a command that acts on one NameNode was given
// exactly one; if not, it says so with the command's usage.
func (h *haAdmin) oneNameNode(cmd haCommand, args []string) bool {
	if len(args) == 1 {
		return true
	}
	fmt.Fprintf(h.errOut, "%s: incorrect number of arguments\n", cmd.name[1:])
	h.printCommandUsage(cmd)
	return false
}

// connect resolves NameNode id and opens a connection to its HA service
// with the call timeout; manual refuses (as checkManual) a NameNode under
// automatic failover. On failure conn is nil and code is the exit status,
// the reason printed.
func (h *haAdmin) connect(ctx context.Context, id string, manual bool, timeout time.Duration) (conn haservice.Conn, code int) {
	t, err := h.resolve(ctx, id)
	if err != nil {
		return nil, h.fail(err)
	}
	if manual && !h.checkManual(t) {
		return nil, exitHAFail
	}
	return h.call(t, timeout), exitOK
}

func (h *haAdmin) transitionToActive(ctx context.Context, cmd haCommand, args []string, forceActive bool) int {
	if !h.oneNameNode(cmd, args) {
		return exitHAFail
	}
	if !forceActive {
		refused, err := h.otherNameNodeActive(ctx, cmd, args[0])
		if err != nil {
			return h.fail(err)
		}
		if refused {
			return exitHAFail
		}
	}
	conn, code := h.connect(ctx, args[0], true, h.cfg.TransitionTimeout)
	if conn == nil {
		return code
	}
	defer conn.Close()
	if err := conn.TransitionToActive(ctx, h.source); err != nil {
		return h.fail(err)
	}
	return exitOK
}

// otherNameNodeActive is Hadoop's check before -transitionToActive: it
// refuses when another NameNode of the nameservice is active, cannot be
// asked, or is under automatic failover.
func (h *haAdmin) otherNameNodeActive(ctx context.Context, cmd haCommand, id string) (bool, error) {
	ids := haservice.NameNodeIDs(h.inv.Conf, h.ns)
	for i, other := range ids {
		if other == id {
			ids = append(ids[:i:i], ids[i+1:]...)
			break
		}
	}
	for _, other := range ids {
		t, err := h.resolve(ctx, other)
		if err != nil {
			return false, err
		}
		if !h.checkManual(t) {
			return true, nil
		}
		conn := h.call(t, checkOthersTimeout)
		st, err := conn.GetServiceStatus(ctx)
		conn.Close()
		if err != nil {
			fmt.Fprintf(h.errOut, "Unexpected error occurred  %s\n", haservice.Message(err))
			h.printCommandUsage(cmd)
			return true, nil
		}
		if st.State == haservice.Active {
			fmt.Fprintf(h.errOut, "transitionToActive: Node %s is already active\n", other)
			h.printCommandUsage(cmd)
			return true, nil
		}
	}
	return false, nil
}

func (h *haAdmin) transition(ctx context.Context, cmd haCommand, args []string) int {
	if !h.oneNameNode(cmd, args) {
		return exitHAFail
	}
	conn, code := h.connect(ctx, args[0], true, h.cfg.TransitionTimeout)
	if conn == nil {
		return code
	}
	defer conn.Close()
	var err error
	if cmd.name == "-transitionToObserver" {
		err = conn.TransitionToObserver(ctx, h.source)
	} else {
		err = conn.TransitionToStandby(ctx, h.source)
	}
	if err != nil {
		return h.fail(err)
	}
	return exitOK
}

func (h *haAdmin) failover(ctx context.Context, cmd haCommand, args []string, opts map[string]int) int {
	n := 0
	for _, c := range opts {
		n += c
	}
	if n > 3 || len(args) != 2 {
		fmt.Fprintln(h.errOut, "failover: incorrect arguments")
		h.printCommandUsage(cmd)
		return exitHAFail
	}
	forceFence, forceActive := opts["forcefence"] > 0, opts["forceactive"] > 0
	from, err := h.resolve(ctx, args[0])
	if err != nil {
		return h.fail(err)
	}
	to, err := h.resolve(ctx, args[1])
	if err != nil {
		return h.fail(err)
	}
	if from.AutoFailover != to.AutoFailover {
		fmt.Fprintf(h.errOut, "Inconsistent auto-failover configs between %s and %s!\n", from, to)
		return exitHAFail
	}
	if from.AutoFailover {
		if forceFence || forceActive {
			fmt.Fprintln(h.errOut, "forcefence and forceactive flags not supported with auto-failover enabled.")
			return exitHAFail
		}
		return h.gracefulFailoverThroughZKFCs(ctx, to)
	}
	fc := &haservice.FailoverController{
		Config: h.cfg,
		Source: h.source,
		Dial:   h.dial,
		Fencer: &haservice.Fencer{Timeout: h.cfg.ShellFenceTimeout, Logger: h.inv.Logger},
		Logger: h.inv.Logger,
	}
	if err := fc.Failover(ctx, from, to, forceFence, forceActive); err != nil {
		var fe *haservice.FailoverError
		if errors.As(err, &fe) {
			fmt.Fprintf(h.errOut, "Failover failed: %s\n", fe.Msg)
			return exitHAFail
		}
		return h.fail(err)
	}
	fmt.Fprintf(h.out, "Failover from %s to %s successful\n", args[0], args[1])
	return exitOK
}

// gracefulFailoverThroughZKFCs asks the failover controller of the new
// active (its dfs.ha.zkfc.port) for a graceful failover: the controllers
// move the active role through the election, fencing as needed.
func (h *haAdmin) gracefulFailoverThroughZKFCs(ctx context.Context, to *haservice.Target) int {
	z := haservice.NewZKFCClient(haservice.ClientConfig{Address: to.ZKFCAddress(), User: haUser(h.inv),
		Timeout: h.cfg.NewActiveTimeout, ConnectRetries: 1, RetryInterval: h.cfg.ConnectRetryInterval,
		DialTimeout: h.cfg.ConnectTimeout, Kerberos: h.cfg.Kerberos, Protection: h.cfg.Protection})
	defer z.Close()
	if err := z.GracefulFailover(ctx); err != nil {
		if errors.Is(err, haservice.ErrServiceFailed) {
			fmt.Fprintf(h.errOut, "Failover failed: %s\n", haservice.Message(err))
			return exitHAFail
		}
		return h.fail(err)
	}
	fmt.Fprintf(h.out, "Failover to %s successful\n", to)
	return exitOK
}

func (h *haAdmin) getServiceState(ctx context.Context, cmd haCommand, args []string) int {
	if !h.oneNameNode(cmd, args) {
		return exitHAFail
	}
	conn, code := h.connect(ctx, args[0], false, h.cfg.CLICheckTimeout)
	if conn == nil {
		return code
	}
	defer conn.Close()
	st, err := conn.GetServiceStatus(ctx)
	if err != nil {
		return h.fail(err)
	}
	fmt.Fprintln(h.out, st.State)
	return exitOK
}

func (h *haAdmin) getAllServiceState(ctx context.Context) int {
	ids := haservice.NameNodeIDs(h.inv.Conf, h.ns)
	if len(ids) == 0 {
		fmt.Fprintln(h.errOut, "Failed to get service IDs")
		return exitHAFail
	}
	for _, id := range ids {
		t, err := h.resolve(ctx, id)
		if err != nil {
			return h.fail(err)
		}
		conn := h.call(t, h.cfg.CLICheckTimeout)
		st, err := conn.GetServiceStatus(ctx)
		conn.Close()
		if err != nil {
			fmt.Fprintf(h.out, "%-50s %-10s\n", t.HostPort(), "Failed to connect: "+haservice.Message(err))
			continue
		}
		fmt.Fprintf(h.out, "%-50s %-10s\n", t.HostPort(), st.State)
	}
	return exitOK
}

func (h *haAdmin) checkHealth(ctx context.Context, cmd haCommand, args []string) int {
	if !h.oneNameNode(cmd, args) {
		return exitHAFail
	}
	conn, code := h.connect(ctx, args[0], false, h.cfg.CLICheckTimeout)
	if conn == nil {
		return code
	}
	defer conn.Close()
	if err := conn.MonitorHealth(ctx); err != nil {
		if errors.Is(err, haservice.ErrHealthCheckFailed) {
			fmt.Fprintf(h.errOut, "Health check failed: %s\n", haservice.Message(err))
			return exitHAFail
		}
		return h.fail(err)
	}
	return exitOK
}

// isConfigError reports a configuration value haadmin cannot use, which
// Hadoop's tool reports as an illegal argument.
func isConfigError(err error) bool {
	var ve *conf.ValueError
	return errors.As(err, &ve) || errors.Is(err, haservice.ErrInvalidConfig)
}

// haUser is the user haadmin calls as: $HADOOP_USER_NAME, else the
// invoking user.
func haUser(inv *Invocation) string {
	if u := inv.Env.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if cu, err := user.Current(); err == nil {
		return cu.Username
	}
	return ""
}
