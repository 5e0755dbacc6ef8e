package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Env is the outside world of one command run.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Signals, called by long-running commands (daemons, minicluster), starts
	// delivering SIGINT and SIGTERM to the returned channel until stop is called.
	// Short commands never call it, so Ctrl-C ends them the usual way.
	// Nil means "never".
	Signals func() (ch <-chan os.Signal, stop func())
}

// Invocation is what Main parsed before handing over to a subcommand.
type Invocation struct {
	Env  Env
	Name string   // subcommand name
	Args []string // arguments after the generic options
	// Conf is the loaded configuration: built-in defaults, then the site files of
	// the configuration directory, then -D overrides (-fs sets fs.defaultFS).
	Conf     *conf.Conf
	ConfDir  string
	LogLevel slog.Level
	// LevelVar is the logger's level, changed at run time by the daemons'
	// /logLevel (`hdfs daemonlog -setlevel`).
	LevelVar *slog.LevelVar
	Logger   *slog.Logger
	// Reload reads the configuration again the way Conf was read (the
	// same directory and -D overrides): a daemon's reconfiguration.
	Reload func() (*conf.Conf, error)
}

// command is one subcommand.
type command struct {
	name    string
	group   string // section in the usage text
	summary string
	// run executes the command and returns the exit status. Nil means the
	// command is not supported yet.
	run   func(inv *Invocation) int
	usage string // printed for "hdfs NAME -help"
}

// exit statuses
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 1 // Hadoop's tools exit 1 on usage errors as well
	// exitMinusOne is what the shell sees of a Hadoop tool's exit status
	// -1 (DFSAdmin's and DFSck's usage errors, among others).
	exitMinusOne = 255
)

// Main runs the hdfs command line with os-level I/O and returns the exit status.
func Main(args []string) int {
	return Run(Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Signals: notifySignals}, args)
}

// Run is Main with an explicit environment.
func Run(env Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) > 0 {
		args = args[1:] // program name
	}
	var confDir string
	confDirSet := false
	level := slog.LevelInfo
	// Hadoop's scripts take the root logger from HADOOP_ROOT_LOGGER
	// ("DEBUG,console"); --loglevel wins over it.
	if v := env.Getenv("HADOOP_ROOT_LOGGER"); v != "" {
		name, _, _ := strings.Cut(v, ",")
		l, err := parseLevel(strings.TrimSpace(name))
		if err != nil {
			fmt.Fprintf(env.Stderr, "hdfs: HADOOP_ROOT_LOGGER=%s: %v\n", v, err)
			return exitUsage
		}
		level = l
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "--") {
		switch args[0] {
		case "--config":
			if len(args) < 2 {
				fmt.Fprintln(env.Stderr, "hdfs: --config needs a directory")
				return exitUsage
			}
			confDir, confDirSet = args[1], true
			args = args[2:]
		case "--loglevel":
			if len(args) < 2 {
				fmt.Fprintln(env.Stderr, "hdfs: --loglevel needs a level")
				return exitUsage
			}
			l, err := parseLevel(args[1])
			if err != nil {
				fmt.Fprintf(env.Stderr, "hdfs: %v\n", err)
				return exitUsage
			}
			level = l
			args = args[2:]
		case "--help":
			printUsage(env.Stdout)
			return exitOK
		default:
			fmt.Fprintf(env.Stderr, "hdfs: unknown option %s\n", args[0])
			printUsage(env.Stderr)
			return exitUsage
		}
	}
	if len(args) == 0 {
		// Hadoop's script prints its usage and fails when given nothing.
		printUsage(env.Stdout)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	cmd, ok := commandByName(name)
	if !ok {
		fmt.Fprintf(env.Stderr, "ERROR: %s is not a known hdfs subcommand.\n", name)
		printUsage(env.Stderr)
		return exitUsage
	}
	if cmd.name == "help" {
		printUsage(env.Stdout)
		return exitOK
	}
	// FsShell has a -help command of its own: hdfs dfs -help prints it.
	if len(rest) == 1 && (rest[0] == "-help" || rest[0] == "--help" || rest[0] == "-h") && !(cmd.name == "dfs" && rest[0] == "-help") {
		printCommandUsage(env.Stdout, cmd)
		return exitOK
	}
	if cmd.run == nil {
		fmt.Fprintf(env.Stderr, "hdfs: %s is not supported yet\n", name)
		return exitFail
	}

	overrides, rest, err := parseGenericOptions(rest)
	if err != nil {
		fmt.Fprintf(env.Stderr, "hdfs %s: %v\n", name, err)
		return exitUsage
	}
	if !confDirSet {
		confDir = env.Getenv("HADOOP_CONF_DIR")
	}
	c, err := conf.Load(conf.Options{Dir: confDir, Overrides: overrides, Env: env.Getenv})
	if err != nil {
		fmt.Fprintf(env.Stderr, "hdfs %s: %v\n", name, err)
		return exitFail
	}
	levelVar := new(slog.LevelVar)
	levelVar.Set(level)
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: levelVar}))
	for _, w := range c.Warnings() {
		logger.Warn(w)
	}
	reload := func() (*conf.Conf, error) {
		return conf.Load(conf.Options{Dir: confDir, Overrides: overrides, Env: env.Getenv})
	}
	inv := &Invocation{Env: env, Name: name, Args: rest, Conf: c, ConfDir: confDir, LogLevel: level, LevelVar: levelVar, Logger: logger, Reload: reload}
	return cmd.run(inv)
}

// parseGenericOptions takes Hadoop's generic options off the front of args:
// -D key=value (also -Dkey=value) and -fs URI. Parsing stops at the first other
// argument, as Hadoop's GenericOptionsParser does.
func parseGenericOptions(args []string) ([]conf.KeyValue, []string, error) {
	var kvs []conf.KeyValue
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-D":
			if len(args) < 2 {
				return nil, nil, errors.New("-D needs key=value")
			}
			kv, err := conf.ParseKeyValue(args[1])
			if err != nil {
				return nil, nil, err
			}
			kvs = append(kvs, kv)
			args = args[2:]
		case strings.HasPrefix(a, "-D") && len(a) > 2:
			kv, err := conf.ParseKeyValue(a[2:])
			if err != nil {
				return nil, nil, err
			}
			kvs = append(kvs, kv)
			args = args[1:]
		case a == "-fs":
			if len(args) < 2 {
				return nil, nil, errors.New("-fs needs a file system URI, e.g. hdfs://host:8020")
			}
			kvs = append(kvs, conf.KeyValue{Key: conf.FSDefaultFS, Value: args[1]})
			args = args[2:]
		default:
			return kvs, args, nil
		}
	}
	return kvs, args, nil
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToUpper(s) {
	case "TRACE", "ALL", "DEBUG":
		return slog.LevelDebug, nil
	case "INFO":
		return slog.LevelInfo, nil
	case "WARN":
		return slog.LevelWarn, nil
	case "ERROR", "FATAL", "OFF":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want DEBUG, INFO, WARN or ERROR)", s)
}

func commandByName(name string) (*command, bool) {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i], true
		}
	}
	return nil, false
}

var groupOrder = []string{"Admin Commands", "Client Commands", "Daemon Commands", "hdfsgo Commands"}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: hdfs [OPTIONS] SUBCOMMAND [GENERIC OPTIONS] [SUBCOMMAND OPTIONS]

  OPTIONS is none or any of:
    --config dir        configuration directory (default $HADOOP_CONF_DIR)
    --loglevel level    log level: DEBUG, INFO, WARN or ERROR (default: the level
                        of $HADOOP_ROOT_LOGGER, e.g. DEBUG,console; else INFO)

  GENERIC OPTIONS is none or any of:
    -D key=value        override a configuration value (repeatable)
    -fs hdfs://host:port
                        the file system to use (sets fs.defaultFS)

  SUBCOMMAND is one of:
`)
	for _, g := range groupOrder {
		var cmds []command
		for _, c := range commands {
			if c.group == g {
				cmds = append(cmds, c)
			}
		}
		sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
		fmt.Fprintf(w, "\n    %s:\n", g)
		for _, c := range cmds {
			note := ""
			if c.run == nil {
				note = " (not supported yet)"
			}
			fmt.Fprintf(w, "      %-20s %s%s\n", c.name, c.summary, note)
		}
	}
	fmt.Fprint(w, "\n  \"hdfs SUBCOMMAND -help\" prints a subcommand's usage.\n")
}

func printCommandUsage(w io.Writer, c *command) {
	if c.usage != "" {
		fmt.Fprint(w, c.usage)
		return
	}
	fmt.Fprintf(w, "Usage: hdfs %s\n  %s\n", c.name, c.summary)
	if c.run == nil {
		fmt.Fprintf(w, "  %s is not supported yet.\n", c.name)
	}
}
