package cli

import (
	"context"
	"errors"
	"fmt"

	"strings"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/cli/fsshell"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// spCommand is one `hdfs storagepolicies` command: its name, the short
// usage AdminHelper prints and the long one of -help.
type spCommand struct {
	name, short, long string
	run               func(inv *Invocation, fsys *client.FileSystem, args []string) int
}

// The long usages of the commands (-help COMMAND).
const (
	spListLong = "[-listPolicies]\n\nList all the existing block storage policies.\n"
	spSetLong  = "[-setStoragePolicy -path <path> -policy <policy>]\n\nSet the storage policy to a file/directory.\n\n" +
		"<path>    The path of the file/directory to set storage policy \n" +
		"<policy>  The name of the block storage policy                 \n\n"
	spGetLong = "[-getStoragePolicy -path <path>]\n\nGet the storage policy of a file/directory.\n\n" +
		"<path>  The path of the file/directory for getting the storage policy \n\n"
	spUnsetLong = "[-unsetStoragePolicy -path <path>]\n\nUnset the storage policy set for a file/directory.\n\n" +
		"<path>  The path of the file/directory from which the storage policy will be unset. \n\n"
)

var spCommands = []spCommand{
	{name: "-listPolicies", short: "[-listPolicies]\n", long: spListLong, run: spList},
	{name: "-setStoragePolicy", short: "[-setStoragePolicy -path <path> -policy <policy>]\n", long: spSetLong, run: spSet},
	{name: "-getStoragePolicy", short: "[-getStoragePolicy -path <path>]\n", long: spGetLong, run: spGet},
	{name: "-unsetStoragePolicy", short: "[-unsetStoragePolicy -path <path>]\n", long: spUnsetLong, run: spUnset},
}

// storagepoliciesUsage is what "hdfs storagepolicies" without a command prints.
var storagepoliciesUsage = func() string {
	var b strings.Builder
	b.WriteString("Usage: bin/hdfs storagepolicies [COMMAND]\n")
	for _, c := range spCommands {
		b.WriteString("          " + c.short)
	}
	b.WriteString("\n" + haGenericUsage)
	return b.String()
}()

func runStoragePolicies(inv *Invocation) int {
	if len(inv.Args) == 0 {
		fmt.Fprint(inv.Env.Stderr, storagepoliciesUsage)
		return exitFail
	}
	if inv.Args[0] == "-help" {
		return spHelp(inv, inv.Args[1:])
	}
	for _, c := range spCommands {
		if c.name == inv.Args[0] {
			fsys, err := fsshell.DialFromConf(inv.Conf, "", inv.Env.Stderr)
			if err != nil {
				fmt.Fprintf(inv.Env.Stderr, "storagepolicies: %v\n", err)
				return exitFail
			}
			defer fsys.Close()
			return c.run(inv, fsys, append([]string(nil), inv.Args[1:]...))
		}
	}
	fmt.Fprintf(inv.Env.Stderr, "Can't understand command '%s'\n", inv.Args[0])
	if !strings.HasPrefix(inv.Args[0], "-") {
		fmt.Fprintln(inv.Env.Stderr, "Command names must start with dashes.")
	}
	fmt.Fprint(inv.Env.Stderr, storagepoliciesUsage)
	return exitFail
}

func spHelp(inv *Invocation, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(inv.Env.Stdout, "Usage: bin/hdfs storagepolicies [COMMAND]\n")
		for _, c := range spCommands {
			fmt.Fprint(inv.Env.Stdout, c.long)
		}
		fmt.Fprintln(inv.Env.Stdout)
		return exitOK
	}
	name := args[0]
	if !strings.HasPrefix(name, "-") {
		name = "-" + name
	}
	for _, c := range spCommands {
		if c.name == name {
			fmt.Fprint(inv.Env.Stdout, c.long)
			return exitOK
		}
	}
	fmt.Fprintf(inv.Env.Stderr, "Sorry, I don't know the command '%s'.\n", args[0])
	return exitFail
}

// popArg removes "-opt VALUE" from args.
func popArg(args *[]string, opt string) (string, bool) {
	a := *args
	for i := 0; i+1 < len(a); i++ {
		if a[i] == opt {
			v := a[i+1]
			*args = append(a[:i:i], a[i+2:]...)
			return v, true
		}
	}
	return "", false
}

// prettify is Hadoop's AdminHelper.prettifyException for what the client
// library returns: the simple name of the exceptions DFSClient unwraps,
// RemoteException for the others.
func prettify(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		simple := re.Class[strings.LastIndexByte(re.Class, '.')+1:]
		switch simple {
		case "AccessControlException", "FileNotFoundException", "SafeModeException",
			"NSQuotaExceededException", "UnresolvedPathException", "SnapshotAccessControlException":
		default:
			simple = "RemoteException"
		}
		return simple + ": " + strings.SplitN(re.Message, "\n", 2)[0]
	}
	return "IOException: " + err.Error()
}

func spList(inv *Invocation, fsys *client.FileSystem, _ []string) int {
	ps, err := fsys.StoragePolicies(context.Background())
	if err != nil {
		fmt.Fprintln(inv.Env.Stderr, prettify(err))
		return 2
	}
	fmt.Fprintln(inv.Env.Stdout, "Block Storage Policies:")
	for _, p := range ps {
		fmt.Fprintf(inv.Env.Stdout, "\t%s\n", p)
	}
	return exitOK
}

func spSet(inv *Invocation, fsys *client.FileSystem, args []string) int {
	path, ok := popArg(&args, "-path")
	if !ok {
		fmt.Fprint(inv.Env.Stderr, "Please specify the path for setting the storage policy.\nUsage: "+spSetLong+"\n")
		return exitFail
	}
	policy, ok := popArg(&args, "-policy")
	if !ok {
		fmt.Fprint(inv.Env.Stderr, "Please specify the policy name.\nUsage: "+spSetLong+"\n")
		return exitFail
	}
	if err := fsys.SetStoragePolicy(context.Background(), path, policy); err != nil {
		fmt.Fprintln(inv.Env.Stderr, prettify(err))
		return 2
	}
	fmt.Fprintf(inv.Env.Stdout, "Set storage policy %s on %s\n", policy, path)
	return exitOK
}

func spGet(inv *Invocation, fsys *client.FileSystem, args []string) int {
	path, ok := popArg(&args, "-path")
	if !ok {
		fmt.Fprint(inv.Env.Stderr, "Please specify the path with -path.\nUsage:"+spGetLong+"\n")
		return exitFail
	}
	ctx := context.Background()
	st, err := fsys.Stat(ctx, path)
	if err != nil {
		var re *remoteerr.Error
		if !errors.As(err, &re) {
			fmt.Fprintf(inv.Env.Stderr, "File/Directory does not exist: %s\n", path)
			return 2
		}
		fmt.Fprintln(inv.Env.Stderr, prettify(err))
		return 2
	}
	id := st.Status().StoragePol
	if id == 0 {
		fmt.Fprintf(inv.Env.Stdout, "The storage policy of %s is unspecified\n", path)
		return exitOK
	}
	ps, err := fsys.StoragePolicies(ctx)
	if err != nil {
		fmt.Fprintln(inv.Env.Stderr, prettify(err))
		return 2
	}
	for _, p := range ps {
		if p.ID == id {
			fmt.Fprintf(inv.Env.Stdout, "The storage policy of %s:\n%s\n", path, p)
			return exitOK
		}
	}
	fmt.Fprintf(inv.Env.Stderr, "Cannot identify the storage policy for %s\n", path)
	return 2
}

func spUnset(inv *Invocation, fsys *client.FileSystem, args []string) int {
	path, ok := popArg(&args, "-path")
	if !ok {
		fmt.Fprint(inv.Env.Stderr, "Please specify the path from which the storage policy will be unsetd.\nUsage: "+spUnsetLong+"\n")
		return exitFail
	}
	if err := fsys.UnsetStoragePolicy(context.Background(), path); err != nil {
		fmt.Fprintln(inv.Env.Stderr, prettify(err))
		return 2
	}
	fmt.Fprintf(inv.Env.Stdout, "Unset storage policy from %s\n", path)
	return exitOK
}
