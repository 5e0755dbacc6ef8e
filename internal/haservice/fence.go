package haservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// FenceKind is a fencing method Hadoop ships.
type FenceKind int

// Fencing methods.
const (
	// FenceShell runs a command with bash (ShellCommandFencer).
	FenceShell FenceKind = iota
	// FenceSSH kills the process on the target's port over ssh
	// (SshFenceByTcpPort). Parsed, not implemented.
	FenceSSH
	// FencePowerShell runs a PowerShell script (PowerShellFencer).
	// Parsed, not implemented.
	FencePowerShell
)

// Java classes of the fencing methods, as Hadoop names them in its logs.
const (
	classShellFencer      = "org.apache.hadoop.ha.ShellCommandFencer"
	classSSHFencer        = "org.apache.hadoop.ha.SshFenceByTcpPort"
	classPowerShellFencer = "org.apache.hadoop.ha.PowerShellFencer"
)

// fenceNames maps every name a fencing line may use to its method: the
// short names and the class names.
var fenceNames = map[string]FenceKind{
	"shell": FenceShell, classShellFencer: FenceShell,
	"sshfence": FenceSSH, classSSHFencer: FenceSSH,
	"powershell": FencePowerShell, classPowerShellFencer: FencePowerShell,
}

// FenceMethod is one line of dfs.ha.fencing.methods.
type FenceMethod struct {
	Kind FenceKind
	// Name is the method as written: a short name or a class name.
	Name string
	// Arg is the text between the parentheses; HasArg is false for a line
	// without them.
	Arg    string
	HasArg bool
	// SSHUser and SSHPort are sshfence's [user][:port]; an empty user
	// means the invoking user.
	SSHUser string
	SSHPort int
}

// String is how Hadoop logs the method: its class and argument, e.g.
// org.apache.hadoop.ha.ShellCommandFencer(/bin/true).
func (m FenceMethod) String() string {
	class := classShellFencer
	switch m.Kind {
	case FenceSSH:
		class = classSSHFencer
	case FencePowerShell:
		class = classPowerShellFencer
	}
	arg := "null"
	if m.HasArg {
		arg = m.Arg
	}
	return class + "(" + arg + ")"
}

// Line is the method written back as a configuration line.
func (m FenceMethod) Line() string {
	if !m.HasArg {
		return m.Name
	}
	return m.Name + "(" + m.Arg + ")"
}

// Hadoop's NodeFencer grammar: a class name, optionally followed by a
// parenthesised argument that runs to the line's last ')'. Java's '.'
// matches no line terminator.
var (
	fenceWithArg    = regexp.MustCompile(`^([a-zA-Z0-9.$]+)\(([^\r\n\x{85}\x{2028}\x{2029}]+?)\)$`)
	fenceWithoutArg = regexp.MustCompile(`^[a-zA-Z0-9.$]+$`)
	sshUserPort     = regexp.MustCompile(`^([^:]+?)?(?::([0-9]+))?$`)
)

// ParseFenceMethods parses a dfs.ha.fencing.methods value as Hadoop's
// NodeFencer does: one method per line, "#" starting a comment, blank
// lines ignored, each line "name" or "name(arg)". An error is a
// *FenceConfigError with Hadoop's text (without the key, which the caller
// knows). An empty spec gives no methods and no error.
func ParseFenceMethods(spec string) ([]FenceMethod, error) {
	var methods []FenceMethod
	for _, line := range strings.Split(spec, "\n") {
		line = javaTrim(stripComment(line))
		if line == "" {
			continue
		}
		m, err := parseFenceLine(line)
		if err != nil {
			return nil, err
		}
		methods = append(methods, m)
	}
	return methods, nil
}

func parseFenceLine(line string) (FenceMethod, error) {
	var m FenceMethod
	if g := fenceWithArg.FindStringSubmatch(line); g != nil {
		m.Name, m.Arg, m.HasArg = g[1], g[2], true
		if strings.Contains(m.Arg, "#") {
			// A '#' starts a comment, so it reaches an argument only when
			// a stray line terminator (a CR inside the line) follows it;
			// written out again, the line would lose the rest. Refused
			// rather than depending on the stray character.
			return m, &FenceConfigError{Msg: "Unable to parse line: '" + line + "': '#' starts a comment and cannot be part of an argument"}
		}
	} else if fenceWithoutArg.MatchString(line) {
		m.Name = line
	} else {
		return m, &FenceConfigError{Msg: "Unable to parse line: '" + line + "'"}
	}
	kind, ok := fenceNames[m.Name]
	if !ok {
		return m, &FenceConfigError{Msg: "Could not find configured fencing method " + m.Name}
	}
	m.Kind = kind
	switch kind {
	case FenceShell:
		if !m.HasArg || m.Arg == "" {
			return m, &FenceConfigError{Msg: "No argument passed to 'shell' fencing method"}
		}
	case FenceSSH:
		m.SSHPort = 22
		if m.HasArg {
			g := sshUserPort.FindStringSubmatch(m.Arg)
			if g == nil {
				return m, &FenceConfigError{Msg: "Unable to parse user and SSH port: " + m.Arg}
			}
			m.SSHUser = g[1]
			if g[2] != "" {
				p, err := strconv.ParseInt(g[2], 10, 32)
				if err != nil {
					return m, &FenceConfigError{Msg: "Port number '" + g[2] + "' invalid"}
				}
				m.SSHPort = int(p)
			}
		}
	}
	return m, nil
}

// stripComment removes what Java's replaceAll("#.*$", "") removes: from a
// '#' to the end of the line, where the line may end in one final line
// terminator. A '#' followed by a terminator in the middle of the line
// starts no comment.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '#' {
			continue
		}
		j := i + 1 + terminatorIndex(s[i+1:])
		if j == len(s) || isFinalTerminator(s[j:]) {
			return s[:i] + s[j:]
		}
	}
	return s
}

// terminatorIndex is the index of the first Java line terminator in s, or
// len(s).
func terminatorIndex(s string) int {
	for i, r := range s {
		switch r {
		case '\r', '\n', '\u0085', '\u2028', '\u2029':
			return i
		}
	}
	return len(s)
}

func isFinalTerminator(s string) bool {
	switch s {
	case "\r\n", "\r", "\n", "\u0085", "\u2028", "\u2029":
		return true
	}
	return false
}

// javaTrim is Java's String.trim: it removes every character up to ' '
// from both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// unsupportedError is a fencing method this package parses but cannot run.
type unsupportedError struct{ name string }

func (e *unsupportedError) Error() string {
	return e.name + " is not supported; use shell(...)"
}

func (e *unsupportedError) Is(target error) bool { return target == ErrFenceUnsupported }

// ShellRunner runs one shell fencing command with env as its whole
// environment and reports whether it exited with status 0.
type ShellRunner func(ctx context.Context, cmd string, env []string) bool

// Fencer runs a target's fencing methods in order until one succeeds
// (Hadoop's NodeFencer). It is safe for concurrent use.
type Fencer struct {
	// Shell runs shell(...) commands; nil means ExecShell with Timeout.
	Shell ShellRunner
	// Timeout bounds each shell command when Shell is nil
	// (hdfsgo.ha.fencing.shell.timeout).
	Timeout time.Duration
	// Environ is the environment a command inherits; nil means
	// os.Environ.
	Environ func() []string
	// Logger receives Hadoop's fencing log lines and the commands' output.
	Logger *slog.Logger
}

// Fence tries t's fencing methods in order and reports whether one of them
// fenced it. It returns false when t has none.
func (f *Fencer) Fence(ctx context.Context, t *Target) bool {
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Info("====== Beginning Service Fencing Process... ======")
	for i, m := range t.Fencing {
		log.Info(fmt.Sprintf("Trying method %d/%d: %s", i+1, len(t.Fencing), m))
		var ok bool
		switch m.Kind {
		case FenceShell:
			run := f.Shell
			if run == nil {
				run = ExecShell(f.Timeout, log)
			}
			ok = run(ctx, m.Arg, f.env(t))
		case FenceSSH:
			log.Error("Fencing method "+m.String()+" failed with an unexpected error.", "err", &unsupportedError{"sshfence"})
			continue
		case FencePowerShell:
			log.Error("Fencing method "+m.String()+" failed with an unexpected error.", "err", &unsupportedError{"powershell"})
			continue
		}
		if ok {
			log.Info("====== Fencing successful by method " + m.String() + " ======")
			return true
		}
		log.Warn("Fencing method " + m.String() + " was unsuccessful.")
		if ctx.Err() != nil {
			break
		}
	}
	log.Error("Unable to fence service by any configured method.")
	return false
}

// env is the environment of a shell fencing command, as Hadoop builds it:
// the inherited environment, then every configuration key with '.' and '-'
// turned into '_', then the target's fencing parameters as target_<name>.
// Later entries win.
func (f *Fencer) env(t *Target) []string {
	environ := f.Environ
	if environ == nil {
		environ = os.Environ
	}
	env := environ()
	if t.Conf != nil {
		for _, k := range t.Conf.Keys() {
			env = appendEnv(env, envKey.Replace(k), t.Conf.String(k))
		}
	}
	for _, p := range t.FenceParameters() {
		env = appendEnv(env, "target_"+strings.ReplaceAll(p.Name, ".", "_"), p.Value)
	}
	return env
}

// envKey turns a configuration key into a variable name, as Hadoop does
// (HADOOP-19228 added '-').
var envKey = strings.NewReplacer(".", "_", "-", "_")

// appendEnv adds k=v unless neither the kernel nor bash could take it.
func appendEnv(env []string, k, v string) []string {
	if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
		return env
	}
	return append(env, k+"="+v)
}

// ExecShell runs commands as Hadoop's shell fencer does: "bash -e -c cmd",
// stdin closed, each line of stdout logged at INFO and of stderr at WARN
// behind "[PID n] <command abbreviated to 20 characters>: ". The command
// runs in its own process group; when timeout (if > 0) passes or ctx ends,
// the whole group is killed and the command counts as failed.
func ExecShell(timeout time.Duration, log *slog.Logger) ShellRunner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, cmdline string, env []string) bool {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		cmd := exec.CommandContext(ctx, "bash", "-e", "-c", cmdline)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		// Children that keep the output open after bash exits are not
		// waited for longer than this.
		cmd.WaitDelay = 5 * time.Second
		out := &lineLogger{log: log, level: slog.LevelInfo}
		errOut := &lineLogger{log: log, level: slog.LevelWarn}
		cmd.Stdout, cmd.Stderr = out, errOut
		if err := cmd.Start(); err != nil {
			log.Warn("Unable to execute "+cmdline, "err", err)
			return false
		}
		pid := cmd.Process.Pid
		log.Info(fmt.Sprintf("Launched fencing command '%s' with pid %d", cmdline, pid))
		prefix := fmt.Sprintf("[PID %d] %s", pid, abbreviate(cmdline, 20))
		out.setPrefix(prefix)
		errOut.setPrefix(prefix)
		err := cmd.Wait()
		out.flush()
		errOut.flush()
		if ctx.Err() != nil {
			log.Warn(fmt.Sprintf("Fencing command '%s' did not finish in time and was killed", cmdline), "err", context.Cause(ctx))
			return false
		}
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				log.Warn("Waiting for fencing command failed: "+cmdline, "err", err)
			}
			return false
		}
		return cmd.ProcessState.Success()
	}
}

// maxLogLine is the longest piece of a command's output logged as one
// line; a longer line is logged in pieces.
const maxLogLine = 64 << 10

// lineLogger logs what a command writes, one log record per line. Lines
// written before the prefix (which names the pid) is known wait for it.
type lineLogger struct {
	log   *slog.Logger
	level slog.Level
	mu    struct {
		sync.Mutex
		prefix string
		ready  bool
		buf    []byte
	}
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.buf = append(l.mu.buf, p...)
	l.emitLocked(false)
	return len(p), nil
}

func (l *lineLogger) setPrefix(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.prefix, l.mu.ready = prefix, true
	l.emitLocked(false)
}

// flush logs a last line that had no newline.
func (l *lineLogger) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.ready = true
	l.emitLocked(true)
}

func (l *lineLogger) emitLocked(all bool) {
	if !l.mu.ready {
		return
	}
	for len(l.mu.buf) > 0 {
		line, rest, found := bytes.Cut(l.mu.buf, []byte{'\n'})
		if !found {
			if !all && len(line) < maxLogLine {
				return
			}
			if len(line) > maxLogLine {
				line, rest = line[:maxLogLine], line[maxLogLine:]
			}
		}
		l.log.Log(context.Background(), l.level, l.mu.prefix+": "+strings.TrimSuffix(string(line), "\r"))
		l.mu.buf = rest
	}
	l.mu.buf = nil
}

// abbreviate shortens s to at most n characters by putting "..." in its
// middle, as Hadoop abbreviates the command in its log lines.
func abbreviate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n < 5 {
		return s
	}
	r := []rune(s)
	first := (n - 3) / 2
	rest := n - first - 3
	return string(r[:first]) + "..." + string(r[len(r)-rest:])
}
