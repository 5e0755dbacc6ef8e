package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/client/webhdfs"
	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// isWebHDFS reports whether s is a webhdfs:// URI.
func isWebHDFS(s string) bool {
	return len(s) >= len("webhdfs://") && strings.EqualFold(s[:len("webhdfs://")], "webhdfs://")
}

// webhdfsArgs reports whether a dfs command names a webhdfs:// path, and
// the first such URI.
func webhdfsArgs(args []string) (string, bool) {
	for _, a := range args {
		if isWebHDFS(a) {
			return a, true
		}
	}
	return "", false
}

// webShell runs `hdfs dfs` commands whose paths are webhdfs:// URIs
// through the WebHDFS client (package client/webhdfs): -ls, -cat, -put,
// -get, -mkdir, -rm, -mv, with FsShell's output and messages.
type webShell struct {
	fsys   *webhdfs.FileSystem
	stdout io.Writer
	stderr io.Writer
	stdin  io.Reader
	trash  bool // fs.trash.interval > 0: -rm needs -skipTrash here
	cmd    string
}

// webFileSystem is the WebHDFS client of uri: with Kerberos it
// authenticates with SPNEGO from the ticket cache (or keytab) to the HTTP
// principal (dfs.web.authentication.kerberos.principal) and then uses a
// delegation token; else it sends user.name.
func webFileSystem(inv *Invocation, uri string) (*webhdfs.FileSystem, error) {
	kc, err := security.ClientLogin(inv.Conf, inv.Env.Getenv)
	if err != nil {
		return nil, err
	}
	if kc == nil {
		return webhdfs.New(uri, "")
	}
	p := inv.Conf.String(conf.DFSWebAuthenticationKerberosPrincipal)
	if p == "" {
		p = "HTTP/_HOST"
	}
	return webhdfs.NewKerberos(uri, kc, p)
}

// runWebDfs is `hdfs dfs` over WebHDFS.
func runWebDfs(inv *Invocation, uri string, trash bool) int {
	fsys, err := webFileSystem(inv, uri)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "hdfs dfs: %v\n", err)
		return exitFail
	}
	sh := &webShell{fsys: fsys, stdout: inv.Env.Stdout, stderr: inv.Env.Stderr, stdin: inv.Env.Stdin, trash: trash}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return sh.run(ctx, inv.Args)
}

func (s *webShell) run(ctx context.Context, args []string) int {
	s.cmd = strings.TrimPrefix(args[0], "-")
	flags, rest := map[string]bool{}, args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "-" {
		flags[rest[0]] = true
		rest = rest[1:]
	}
	allowed := map[string][]string{
		"ls": {}, "cat": {}, "put": {"-f"}, "copyFromLocal": {"-f"}, "get": {}, "copyToLocal": {},
		"mkdir": {"-p"}, "rm": {"-r", "-R", "-f", "-skipTrash"}, "mv": {},
	}
	ok, known := allowed[s.cmd]
	if !known {
		fmt.Fprintf(s.stderr, "%s: not supported over webhdfs:// (supported: -ls, -cat, -put, -get, -mkdir, -rm, -mv)\n", args[0])
		return exitFail
	}
	for f := range flags {
		valid := false
		for _, a := range ok {
			valid = valid || a == f
		}
		if !valid {
			fmt.Fprintf(s.stderr, "%s: Illegal option %s (over webhdfs://)\n", s.cmd, f)
			return exitFail
		}
	}
	min := 1
	switch s.cmd {
	case "put", "copyFromLocal", "get", "copyToLocal", "mv":
		min = 2
	}
	if len(rest) < min {
		fmt.Fprintf(s.stderr, "-%s: Not enough arguments: expected %d but got %d\n", s.cmd, min, len(rest))
		return exitFail
	}
	var err error
	switch s.cmd {
	case "ls":
		err = s.each(rest, func(a string) error { return s.ls(ctx, a) })
	case "cat":
		err = s.each(rest, func(a string) error { return s.cat(ctx, a) })
	case "mkdir":
		err = s.each(rest, func(a string) error { return s.mkdir(ctx, a, flags["-p"]) })
	case "rm":
		if s.trash && !flags["-skipTrash"] {
			fmt.Fprintf(s.stderr, "rm: moving to trash over webhdfs:// is not supported; use -skipTrash\n")
			return exitFail
		}
		err = s.each(rest, func(a string) error { return s.rm(ctx, a, flags["-r"] || flags["-R"], flags["-f"]) })
	case "mv":
		err = s.mv(ctx, rest[:len(rest)-1], rest[len(rest)-1])
	case "put", "copyFromLocal":
		err = s.put(ctx, rest[:len(rest)-1], rest[len(rest)-1], flags["-f"])
	case "get", "copyToLocal":
		err = s.get(ctx, rest[:len(rest)-1], rest[len(rest)-1])
	}
	if err != nil {
		return exitFail
	}
	return exitOK
}

// errFailed marks a command that printed its error already.
var errFailed = errors.New("failed")

// each runs f on every argument, going on after a failure as FsShell does.
func (s *webShell) each(args []string, f func(string) error) error {
	var failed error
	for _, a := range args {
		if err := f(a); err != nil {
			failed = errFailed
		}
	}
	return failed
}

// fail prints err for the path arg as FsShell words it and returns
// errFailed.
func (s *webShell) fail(arg string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(s.stderr, "%s: `%s': No such file or directory\n", s.cmd, arg)
	case errors.Is(err, fs.ErrExist):
		fmt.Fprintf(s.stderr, "%s: `%s': File exists\n", s.cmd, arg)
	default:
		var re *remoteerr.Error
		if errors.As(err, &re) {
			fmt.Fprintf(s.stderr, "%s: %s\n", s.cmd, re.Message)
		} else {
			fmt.Fprintf(s.stderr, "%s: %v\n", s.cmd, err)
		}
	}
	return errFailed
}

// child is the display text of a directory entry: the argument as given,
// joined with the entry's name.
func child(arg, name string) string {
	if strings.HasSuffix(arg, "/") {
		return arg + name
	}
	return arg + "/" + name
}

func (s *webShell) ls(ctx context.Context, arg string) error {
	st, err := s.fsys.Stat(ctx, arg)
	if err != nil {
		return s.fail(arg, err)
	}
	if !st.IsDir {
		s.lsLines([]*webhdfs.FileStatus{st}, []string{arg})
		return nil
	}
	list, err := s.fsys.ReadDir(ctx, arg)
	if err != nil {
		return s.fail(arg, err)
	}
	if len(list) > 0 {
		fmt.Fprintf(s.stdout, "Found %d items\n", len(list))
	}
	names := make([]string, len(list))
	for i, e := range list {
		names[i] = child(arg, e.Name)
	}
	s.lsLines(list, names)
	return nil
}

// lsLines prints FsShell's -ls lines, columns as wide as their widest
// entry:
//
//	drwxr-xr-x   - alice supergroup          0 2026-12-01 20:00 webhdfs://h:9870/d
func (s *webShell) lsLines(list []*webhdfs.FileStatus, names []string) {
	wRepl, wLen, wOwner, wGroup := 3, 10, 0, 0 // FsShell's minimum widths
	for _, e := range list {
		wRepl = max(wRepl, len(strconv.Itoa(e.Replication)))
		wLen = max(wLen, len(strconv.FormatInt(e.Length, 10)))
		wOwner = max(wOwner, len(e.Owner))
		wGroup = max(wGroup, len(e.Group))
	}
	for i, e := range list {
		kind, repl := "-", strconv.Itoa(e.Replication)
		if e.IsDir {
			kind, repl = "d", "-"
		}
		fmt.Fprintf(s.stdout, "%s%s %*s %-*s %-*s %*d %s %s\n", kind, permText(e.Perm), wRepl, repl,
			wOwner, e.Owner, wGroup, e.Group, wLen, e.Length, e.ModTime.In(time.Local).Format("2006-01-02 15:04"), names[i])
	}
}

// permText is rwxr-xr-x, with t/T for the sticky bit.
func permText(m fs.FileMode) string {
	const rwx = "rwx"
	b := []byte("---------")
	for i := range 9 {
		if m&(1<<(8-i)) != 0 {
			b[i] = rwx[i%3]
		}
	}
	if m&fs.ModeSticky != 0 {
		if m&1 != 0 {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

func (s *webShell) cat(ctx context.Context, arg string) error {
	st, err := s.fsys.Stat(ctx, arg)
	if err != nil {
		return s.fail(arg, err)
	}
	if st.IsDir {
		fmt.Fprintf(s.stderr, "cat: `%s': Is a directory\n", arg)
		return errFailed
	}
	rc, err := s.fsys.Open(ctx, arg, 0, -1)
	if err != nil {
		return s.fail(arg, err)
	}
	defer rc.Close()
	if _, err := io.Copy(s.stdout, rc); err != nil {
		return s.fail(arg, err)
	}
	return nil
}

func (s *webShell) mkdir(ctx context.Context, arg string, parents bool) error {
	st, err := s.fsys.Stat(ctx, arg)
	if err == nil {
		if parents && st.IsDir {
			return nil
		}
		return s.fail(arg, fs.ErrExist)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return s.fail(arg, err)
	}
	if !parents {
		p, err := s.fsys.Resolve(arg)
		if err != nil {
			return s.fail(arg, err)
		}
		if _, err := s.fsys.Stat(ctx, path.Dir(p)); err != nil {
			return s.fail(arg, err)
		}
	}
	if err := s.fsys.MkdirAll(ctx, arg, 0o755); err != nil {
		return s.fail(arg, err)
	}
	return nil
}

func (s *webShell) rm(ctx context.Context, arg string, recursive, force bool) error {
	st, err := s.fsys.Stat(ctx, arg)
	if err != nil {
		if force && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return s.fail(arg, err)
	}
	if st.IsDir && !recursive {
		fmt.Fprintf(s.stderr, "rm: `%s': Is a directory\n", arg)
		return errFailed
	}
	if _, err := s.fsys.Delete(ctx, arg, recursive); err != nil {
		return s.fail(arg, err)
	}
	fmt.Fprintf(s.stdout, "Deleted %s\n", arg)
	return nil
}

func (s *webShell) mv(ctx context.Context, srcs []string, dst string) error {
	var failed error
	for _, src := range srcs {
		if _, err := s.fsys.Stat(ctx, src); err != nil {
			failed = s.fail(src, err)
			continue
		}
		ok, err := s.fsys.Rename(ctx, src, dst)
		if err != nil {
			failed = s.fail(src, err)
			continue
		}
		if !ok {
			fmt.Fprintf(s.stderr, "mv: `%s' to `%s': Input/output error\n", src, dst)
			failed = errFailed
		}
	}
	return failed
}

// target is where a copied source lands: inside dst when dst is a
// directory.
func (s *webShell) remoteTarget(ctx context.Context, src, dst string) string {
	if st, err := s.fsys.Stat(ctx, dst); err == nil && st.IsDir {
		return child(dst, filepath.Base(src))
	}
	return dst
}

func (s *webShell) put(ctx context.Context, srcs []string, dst string, overwrite bool) error {
	var failed error
	for _, src := range srcs {
		local := strings.TrimPrefix(src, "file://")
		var r io.Reader
		if src == "-" {
			r = s.stdin
		} else {
			f, err := os.Open(local)
			if err != nil {
				fmt.Fprintf(s.stderr, "put: `%s': No such file or directory\n", src)
				failed = errFailed
				continue
			}
			defer f.Close()
			if fi, err := f.Stat(); err == nil && fi.IsDir() {
				fmt.Fprintf(s.stderr, "put: `%s': directories are not supported over webhdfs://\n", src)
				failed = errFailed
				continue
			}
			r = f
		}
		target := dst
		if src != "-" {
			target = s.remoteTarget(ctx, src, dst)
		}
		if err := s.fsys.Create(ctx, target, r, webhdfs.CreateOptions{Overwrite: overwrite}); err != nil {
			failed = s.fail(target, err)
		}
	}
	return failed
}

func (s *webShell) get(ctx context.Context, srcs []string, dst string) error {
	var failed error
	dst = strings.TrimPrefix(dst, "file://")
	for _, src := range srcs {
		target := dst
		if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
			p, err := s.fsys.Resolve(src)
			if err != nil {
				failed = s.fail(src, err)
				continue
			}
			target = filepath.Join(dst, path.Base(p))
		}
		if _, err := os.Stat(target); err == nil {
			fmt.Fprintf(s.stderr, "get: `%s': File exists\n", target)
			failed = errFailed
			continue
		}
		if err := s.getOne(ctx, src, target); err != nil {
			failed = err
		}
	}
	return failed
}

// getOne copies src to target through a temporary file renamed into
// place, as FsShell's ._COPYING_ file.
func (s *webShell) getOne(ctx context.Context, src, target string) error {
	st, err := s.fsys.Stat(ctx, src)
	if err != nil {
		return s.fail(src, err)
	}
	if st.IsDir {
		fmt.Fprintf(s.stderr, "get: `%s': directories are not supported over webhdfs://\n", src)
		return errFailed
	}
	rc, err := s.fsys.Open(ctx, src, 0, -1)
	if err != nil {
		return s.fail(src, err)
	}
	defer rc.Close()
	tmp := target + "._COPYING_"
	f, err := os.Create(tmp)
	if err != nil {
		fmt.Fprintf(s.stderr, "get: %v\n", err)
		return errFailed
	}
	_, err = io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return s.fail(src, err)
	}
	return nil
}
