package fsshell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// Env is everything a command touches besides the file system.
type Env struct {
	Stdout, Stderr io.Writer
	// Stdin is what -put and -appendToFile read for "-".
	Stdin io.Reader
	// PollInterval is how often -tail -f, -setrep -w and -truncate -w
	// look again; zero means Hadoop's (1 s, 10 s, 1 s).
	PollInterval time.Duration
	// Terminal reports whether stdout is a terminal (progress bars are
	// shown only then); nil means checking whether Stdout is a character
	// device.
	Terminal func() bool
	// Now is the clock for -touch and -touchz; nil means time.Now.
	Now func() time.Time
	// TZ is the zone of -ls dates and of -touch -t timestamps; nil means
	// UTC.
	TZ *time.Location
	// TrashInterval is the client's fs.trash.interval. The NameNode's
	// trash interval, when above zero, takes its place (as in Hadoop);
	// above zero, -rm without -skipTrash moves paths to the trash.
	TrashInterval time.Duration
	// SafelyDeleteLimit is hadoop.shell.safely.delete.limit.num.files:
	// -rm -safely asks before deleting more files than this at once;
	// zero or less never asks.
	SafelyDeleteLimit int64
	// LocalDefault is set when fs.defaultFS is a file: URI: paths without
	// a scheme then name local files, and Run needs no HDFS client.
	LocalDefault bool
	// DialHDFS connects to the cluster at an hdfs://HOST:PORT URI; with
	// LocalDefault, paths naming a cluster go through it. Run closes what
	// it returns.
	DialHDFS func(uri string) (*client.FileSystem, error)
}

// ExitUsage is the status of a command-line error (Hadoop's -1).
const ExitUsage = 255

// command is one FsShell command.
type command struct {
	name        string // without the dash
	usage       string // option syntax after "-name "
	desc        string // help text; lines after the first are indented
	run         func(c *cmd, args []string) error
	unsupported bool   // needs the data path: answers "not supported yet"
	replacement string // deprecated alias: the command to use instead
}

// cmd is one running command: its output streams and error count.
type cmd struct {
	ctx       context.Context
	env       Env
	fs        fileSystem        // the default file system (HDFS)
	local     fileSystem        // the file system of file: URIs
	remote    map[string]hdfsFS // clusters dialed by authority (LocalDefault)
	name      string
	numErrors int
	exitCode  int
	stdin     *bufio.Reader // Env.Stdin for questions, made on first use
	// parallel is set while -put -t N copies with several goroutines:
	// progress bars are off, and failures are counted under errMu.
	parallel bool
	errMu    sync.Mutex
	// putDirect and putLazy are -put's -d (no ._COPYING_ file) and -l
	// (replication 1), set before its copies start.
	putDirect, putLazy bool
}

// fail prints "<cmd>: <msg>" on stderr and counts an error.
func (c *cmd) fail(msg string) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	c.numErrors++
	fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.name, msg)
}

func (c *cmd) warn(msg string) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.name, msg)
}

// failErr prints err about the path shown as display.
func (c *cmd) failErr(display string, err error) {
	c.fail(c.describe(display, err))
}

func (c *cmd) printf(format string, args ...any) {
	fmt.Fprintf(c.env.Stdout, format, args...)
}

func (c *cmd) now() time.Time {
	if c.env.Now != nil {
		return c.env.Now()
	}
	return time.Now()
}

func (c *cmd) tz() *time.Location {
	if c.env.TZ != nil {
		return c.env.TZ
	}
	return time.UTC
}

// forEachArg expands each argument and hands every resulting item to fn;
// expansion errors are shown and counted. A missing item is reported as
// Hadoop does unless missing is set, which handles it instead.
func (c *cmd) forEachArg(args []string, fn func(*item) error, missing func(*item) error) {
	c.forEach(args, c.expand, fn, missing)
}

// forEachLiteral is forEachArg for the commands Hadoop does not glob
// (-head, -tail): each argument is one path, wildcards and all.
func (c *cmd) forEachLiteral(args []string, fn func(*item) error, missing func(*item) error) {
	c.forEach(args, func(a string) ([]*item, error) {
		it, err := c.newItem(a)
		if err != nil {
			return nil, err
		}
		return []*item{it}, nil
	}, fn, missing)
}

func (c *cmd) forEach(args []string, expand func(string) ([]*item, error), fn func(*item) error, missing func(*item) error) {
	for _, a := range args {
		items, err := expand(a)
		if err != nil {
			c.failErr(a, err)
			continue
		}
		for _, it := range items {
			var err error
			switch {
			case it.exists():
				err = fn(it)
			case missing != nil:
				err = missing(it)
			default:
				err = pathErr(it.str, msgNotFound)
			}
			if err != nil {
				c.failErr(it.str, err)
			}
		}
	}
}

// walk calls fn on it and, when recursive and it is a directory, on
// everything below it, parents first. Errors are shown per path.
func (c *cmd) walk(it *item, recursive bool, fn func(*item) error) error {
	if err := fn(it); err != nil {
		return err
	}
	if !recursive || !it.isDir() {
		return nil
	}
	kids, err := c.children(it)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := c.walk(k, true, fn); err != nil {
			c.failErr(k.str, err)
		}
	}
	return nil
}

// Run executes one `hdfs dfs` command line (args[0] is the command, e.g.
// "-ls") and returns the exit status: 0 on success, 1 when any path
// failed (or a -test was false), 255 for a command-line error.
func Run(ctx context.Context, env Env, fsys *client.FileSystem, args []string) int {
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	table := commands()
	if len(args) == 0 {
		printUsageAll(env.Stderr, table)
		return ExitUsage
	}
	name := args[0]
	cm := lookupCommand(table, name)
	if cm == nil {
		fmt.Fprintf(env.Stderr, "%s: Unknown command\n", name)
		if !strings.HasPrefix(name, "-") && lookupCommand(table, "-"+name) != nil {
			fmt.Fprintf(env.Stderr, "Did you mean -%s?  This command begins with a dash.\n", name)
		}
		return ExitUsage
	}
	c := &cmd{ctx: ctx, env: env, fs: hdfsFS{fsys}, local: newLocalFS(), name: cm.name}
	if cm.unsupported {
		c.warn("not supported yet")
		return 1
	}
	if cm.replacement != "" {
		c.warn("DEPRECATED: Please use '" + cm.replacement + "' instead.")
	}
	var err error
	if cm.name == "help" || cm.name == "usage" {
		err = runHelp(c, table, cm.name == "help", args[1:])
	} else {
		if env.LocalDefault {
			c.fs = c.local
			defer func() {
				for _, h := range c.remote {
					h.Close()
				}
			}()
		} else if fsys == nil {
			c.warn("no file system")
			return 1
		}
		err = cm.run(c, args[1:])
	}
	if ue, ok := err.(*usageError); ok {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, ue.msg)
		fmt.Fprintf(env.Stderr, "%s %s\n", usagePrefix, usageLine(cm))
		return ExitUsage
	}
	if err != nil {
		c.fail(c.describe("", err))
	}
	if c.numErrors > 0 {
		return 1
	}
	return c.exitCode
}

// usagePrefix starts every usage line.
const usagePrefix = "Usage: hdfs dfs [generic options]"

func usageLine(cm *command) string {
	if cm.usage == "" {
		return "-" + cm.name
	}
	return "-" + cm.name + " " + cm.usage
}

func lookupCommand(table []*command, name string) *command {
	if !strings.HasPrefix(name, "-") {
		return nil
	}
	for _, cm := range table {
		if "-"+cm.name == name {
			return cm
		}
	}
	return nil
}

// listed returns the commands -help and -usage show: supported, not
// deprecated, sorted by name.
func listed(table []*command) []*command {
	var out []*command
	for _, cm := range table {
		if !cm.unsupported && cm.replacement == "" {
			out = append(out, cm)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

const genericUsage = `Generic options supported are:
-D <property=value>                       define a value for a given property
-fs <file:///|hdfs://namenode:port>       specify the default file system URL, overriding fs.defaultFS

The general command line syntax is:
command [genericOptions] [commandOptions]
`

func printUsageAll(w io.Writer, table []*command) {
	fmt.Fprintln(w, usagePrefix)
	for _, cm := range listed(table) {
		fmt.Fprintf(w, "\t[%s]\n", usageLine(cm))
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, genericUsage)
}

// printHelpOne prints a command's help in Hadoop 3's layout: the usage
// line ending in " :", the description indented by two spaces, a blank
// line.
func printHelpOne(w io.Writer, cm *command) {
	fmt.Fprintf(w, "%s :\n", usageLine(cm))
	for _, line := range strings.Split(cm.desc, "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprintln(w)
}

func runHelp(c *cmd, table []*command, help bool, args []string) error {
	w := c.env.Stdout
	if len(args) == 0 {
		fmt.Fprintln(w, usagePrefix)
		cmds := listed(table)
		for _, cm := range cmds {
			fmt.Fprintf(w, "\t[%s]\n", usageLine(cm))
		}
		fmt.Fprintln(w)
		if help {
			for _, cm := range cmds {
				printHelpOne(w, cm)
			}
		}
		fmt.Fprint(w, genericUsage)
		return nil
	}
	for _, a := range args {
		cm := lookupCommand(table, "-"+strings.TrimPrefix(a, "-"))
		if cm == nil {
			return usagef("`%s': Unknown command", a)
		}
		if cm.unsupported {
			c.fail(cm.name + ": not supported yet")
			continue
		}
		if help {
			printHelpOne(w, cm)
		} else {
			fmt.Fprintf(w, "%s %s\n", usagePrefix, usageLine(cm))
		}
	}
	return nil
}
