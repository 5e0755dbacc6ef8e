package fsshell

import (
	"bufio"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// Default permissions of new directories and files before the umask
// (Hadoop's FsPermission.getDirDefault and getFileDefault).
const (
	dirDefault  = 0o777
	fileDefault = 0o666
)

func runMkdir(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"p"}, false)
	if err != nil {
		return err
	}
	parents := f.on("p")
	c.forEachArg(rest, func(it *item) error {
		if !it.isDir() {
			return pathErr(it.str, msgNotDir)
		}
		if !parents {
			return pathErr(it.str, msgExists)
		}
		return nil
	}, func(it *item) error {
		if !parents {
			ok, err := c.exists(it.fs, path.Dir(it.abs))
			if err != nil {
				return err
			}
			if !ok {
				return pathErr(fmt.Sprintf("mkdir failed for path: %s. Item parent path not found: %s.", mkdirPathString(it.str), mkdirPathString(path.Dir(strings.TrimSuffix(it.str, "/")))), msgNotFound)
			}
		}
		// Like Hadoop's shell, always mkdirs with createParent: the parent
		// check above is what makes -p matter.
		return it.fs.MkdirAll(c.ctx, it.abs, dirDefault)
	})
	return nil
}

// exists reports whether abs exists.
func (c *cmd) exists(fsys fileSystem, abs string) (bool, error) {
	it := &item{abs: abs, fs: fsys}
	if err := c.lookup(it); err != nil {
		return false, err
	}
	return it.exists(), nil
}

// missingParent is Hadoop's error for a target whose parent does not
// exist: the path as typed, then the fully qualified one.
func (c *cmd) missingParent(it *item) error {
	return &shellError{msg: "`" + it.str + "': " + msgNotFound + ": `" + it.fs.URI() + it.abs + "'", notFound: true}
}

// parentExists is Hadoop's PathData.parentExists: for a path ending in
// "/", "." or ".." the path itself must exist, else its parent.
func (c *cmd) parentExists(it *item) (bool, error) {
	name := it.str[strings.LastIndex(it.str, "/")+1:]
	if name == "" || name == "." || name == ".." {
		return it.exists(), nil
	}
	return c.exists(it.fs, path.Dir(it.abs))
}

func runRmr(c *cmd, args []string) error {
	return runRm(c, append([]string{"-r"}, args...))
}

func runRm(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"f", "r", "R", "skipTrash", "safely"}, false)
	if err != nil {
		return err
	}
	safely := f.on("safely")
	ignoreFNF := f.on("f")
	recursive := f.on("r") || f.on("R")
	skipTrash := f.on("skipTrash")
	var trash *time.Duration // resolved on first use
	trashInterval := func() (time.Duration, error) {
		if trash != nil {
			return *trash, nil
		}
		d, err := c.trashInterval()
		if err != nil {
			return 0, err
		}
		trash = &d
		return d, nil
	}
	for _, a := range rest {
		items, err := c.expand(a)
		if err != nil {
			var se *shellError
			if ignoreFNF && errors.As(err, &se) && se.notFound {
				continue
			}
			c.failErr(a, err)
			continue
		}
		for _, it := range items {
			if !it.exists() {
				if !ignoreFNF {
					c.fail(pathErr(it.str, msgNotFound).Error())
				}
				continue
			}
			if it.isDir() && !recursive {
				c.fail(pathErr(it.str, msgIsDir).Error())
				continue
			}
			if !skipTrash && it.fs != c.local { // local deletes skip the trash, as in Hadoop
				d, err := trashInterval()
				if err != nil {
					c.failErr(it.str, err)
					continue
				}
				if d > 0 {
					moved, err := c.moveToTrash(it)
					if err != nil {
						c.failErr(it.str, err)
						continue
					}
					if moved {
						continue
					}
				}
			}
			if safely && !c.safeToDelete(it) {
				continue
			}
			if recursive {
				err = it.fs.RemoveAll(c.ctx, it.abs)
			} else {
				err = it.fs.Remove(c.ctx, it.abs)
			}
			if err != nil {
				c.failErr(it.str, err)
				continue
			}
			c.printf("Deleted %s\n", it.str)
		}
	}
	return nil
}

// safeToDelete is -rm -safely's question: deleting more files than
// Env.SafelyDeleteLimit at once needs a "y" on stdin.
func (c *cmd) safeToDelete(it *item) bool {
	limit := c.env.SafelyDeleteLimit
	if limit <= 0 {
		return true
	}
	s, err := it.fs.ContentSummary(c.ctx, it.abs)
	if err != nil {
		c.failErr(it.str, err)
		return false
	}
	if s.FileCount <= limit {
		return true
	}
	if c.confirm(fmt.Sprintf("Proceed deleting %d files?", s.FileCount)) {
		return true
	}
	fmt.Fprint(c.env.Stderr, "Delete aborted at user request.\n\n")
	return false
}

// confirm asks question on stderr until stdin answers y, yes, n or no (any
// case), as Hadoop's tools do; the end of stdin is a no.
func (c *cmd) confirm(question string) bool {
	if c.stdin == nil {
		in := c.env.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		c.stdin = bufio.NewReader(in)
	}
	for range 100 {
		fmt.Fprintf(c.env.Stderr, "%s (Y or N) ", question)
		line, err := c.stdin.ReadString('\n')
		answer := strings.TrimRight(line, "\r\n")
		switch strings.ToLower(answer) {
		case "y", "yes":
			return true
		case "n", "no":
			return false
		}
		if err != nil {
			fmt.Fprintln(c.env.Stderr)
			return false
		}
		fmt.Fprintf(c.env.Stderr, "Invalid input: %s\n", answer)
	}
	return false
}

func runRmdir(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"-ignore-fail-on-non-empty"}, false)
	if err != nil {
		return err
	}
	ignoreNonEmpty := f.on("-ignore-fail-on-non-empty")
	c.forEachArg(rest, func(it *item) error {
		if !it.isDir() {
			return pathErr(it.str, msgNotDir)
		}
		empty := it.status().ChildrenNum == 0
		if it.status().ChildrenNum < 0 {
			kids, err := it.fs.ReadDir(c.ctx, it.abs)
			if err != nil {
				return err
			}
			empty = len(kids) == 0
		}
		if !empty {
			if ignoreNonEmpty {
				return nil
			}
			return pathErr(it.str, msgNotEmpty)
		}
		return it.fs.Remove(c.ctx, it.abs)
	}, nil)
	return nil
}

// representsDir reports whether a path as typed names a directory by its
// form: it ends in "/", "." or "..".
func representsDir(s string) bool {
	name := s[strings.LastIndex(s, "/")+1:]
	return name == "" || name == "." || name == ".."
}

func runMv(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 2, unlimited, nil, false)
	if err != nil {
		return err
	}
	dstArg := rest[len(rest)-1]
	dsts, err := c.expand(dstArg)
	if err != nil {
		return err
	}
	if len(dsts) > 1 {
		return &shellError{msg: "`" + dstArg + "': Too many matches"}
	}
	dst := dsts[0]
	var srcs []*item
	for _, a := range rest[:len(rest)-1] {
		items, err := c.expand(a)
		if err != nil {
			c.failErr(a, err)
			continue
		}
		srcs = append(srcs, items...)
	}
	switch {
	case len(srcs) > 1:
		if !dst.exists() {
			return pathErr(dst.str, msgNotFound)
		}
		if !dst.isDir() {
			return pathErr(dst.str, msgNotDir)
		}
	case dst.exists():
		if !dst.isDir() {
			return pathErr(dst.str, msgExists)
		}
	default:
		ok, err := c.parentExists(dst)
		if err != nil {
			return err
		}
		if !ok {
			return c.missingParent(dst)
		}
	}
	for _, src := range srcs {
		if err := c.move(src, dst); err != nil {
			c.failErr(src.str, err)
		}
	}
	return nil
}

func (c *cmd) move(src, dst *item) error {
	if !src.exists() {
		return pathErr(src.str, msgNotFound)
	}
	target := dst
	if dst.isDir() || representsDir(dst.str) {
		t, err := c.childItem(dst, path.Base(src.abs))
		if err != nil {
			return err
		}
		target = t
	}
	if src.isDir() {
		if target.abs == src.abs {
			return &shellError{msg: "`" + src.str + "' to `" + target.fs.URI() + target.abs + "': are identical"}
		}
		if strings.HasPrefix(target.abs, src.abs+"/") || src.abs == "/" {
			return &shellError{msg: "`" + src.str + "' to `" + target.str + "': is a subdirectory of itself"}
		}
	}
	if target != dst && target.exists() {
		return pathErr(target.str, msgExists)
	}
	if src.fs != target.fs {
		return &shellError{msg: "`" + src.str + "': Does not match target filesystem"}
	}
	return src.fs.Rename(c.ctx, src.abs, target.abs)
}

func runTouchz(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 1, unlimited, nil, false)
	if err != nil {
		return err
	}
	c.forEachArg(rest, func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		if it.status().Length != 0 {
			return pathErr(it.str, "Not a zero-length file")
		}
		ms := c.now().UnixMilli()
		return it.fs.SetTimes(c.ctx, it.abs, ms, ms)
	}, func(it *item) error {
		ok, err := c.parentExists(it)
		if err != nil {
			return err
		}
		if !ok {
			return c.missingParent(it)
		}
		return it.fs.CreateEmptyFile(c.ctx, it.abs, fileDefault)
	})
	return nil
}

// touchLayout is Hadoop's -touch -t format yyyyMMdd:HHmmss.
const touchLayout = "20060102:150405"

// popOption removes "name value" from args (before any "--") and returns
// the value; "" with found false when name is absent.
func popOption(name string, args []string) (value string, found bool, rest []string, err error) {
	rest = append([]string(nil), args...)
	for i := 0; i < len(rest); i++ {
		if rest[i] == "--" {
			break
		}
		if rest[i] == name {
			if i+1 >= len(rest) {
				return "", false, nil, usagef("option %s requires 1 argument.", name)
			}
			value = rest[i+1]
			rest = append(rest[:i], rest[i+2:]...)
			return value, true, rest, nil
		}
	}
	return "", false, rest, nil
}

func runTouch(c *cmd, args []string) error {
	ts, haveTS, args, err := popOption("-t", args)
	if err != nil {
		return err
	}
	f, rest, err := parseFlags(args, 1, unlimited, []string{"t", "a", "m", "c"}, false)
	if err != nil {
		return err
	}
	onlyM, onlyA, noCreate := f.on("m"), f.on("a"), f.on("c")
	var when time.Time
	if haveTS {
		when, err = time.ParseInLocation(touchLayout, ts, c.tz())
		if err != nil {
			return usagef("Unable to parse the specified timestamp %s. The expected format is yyyyMMdd:HHmmss", ts)
		}
	}
	update := func(it *item) error {
		t := c.now()
		if haveTS {
			t = when
		}
		ms := t.UnixMilli()
		mtime, atime := ms, ms
		if onlyM != onlyA {
			if onlyM {
				atime = -1
			} else {
				mtime = -1
			}
		}
		return it.fs.SetTimes(c.ctx, it.abs, mtime, atime)
	}
	c.forEachArg(rest, func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		return update(it)
	}, func(it *item) error {
		ok, err := c.parentExists(it)
		if err != nil {
			return err
		}
		if !ok {
			return c.missingParent(it)
		}
		if noCreate {
			return nil
		}
		if err := it.fs.CreateEmptyFile(c.ctx, it.abs, fileDefault); err != nil {
			return err
		}
		if haveTS {
			return update(it)
		}
		return nil
	})
	return nil
}

func runSetrep(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"R", "w"}, false)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(rest[0], 10, 16)
	if err != nil {
		c.warn("Illegal replication, a positive integer expected")
		return usagef("For input string: %q", rest[0])
	}
	if n < 1 {
		return usagef("replication must be >= 1")
	}
	rep := uint16(n)
	var waitList []*item
	c.forEachArg(rest[1:], func(it *item) error {
		return c.walk(it, true, func(it *item) error {
			s := it.status()
			switch {
			case s.Type == client.TypeSymlink:
				return pathErr(it.str, "Symlinks unsupported")
			case s.Type != client.TypeFile || s.ErasureCode:
				return nil
			}
			ok, err := it.fs.SetReplication(c.ctx, it.abs, rep)
			if err != nil {
				return err
			}
			if !ok {
				return &shellError{msg: "Could not set replication for: " + it.str}
			}
			c.printf("Replication %d set: %s\n", rep, it.str)
			if f.on("w") {
				waitList = append(waitList, it)
			}
			return nil
		})
	}, nil)
	if len(waitList) > 0 {
		c.waitReplication(waitList, int(rep))
	}
	return nil
}

// mkdirPathString is a path as Hadoop's Path prints it in -mkdir's
// message: without a trailing slash.
func mkdirPathString(p string) string {
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}
