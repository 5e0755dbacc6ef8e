package fsshell

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/client"
)

// copyingSuffix marks a file being copied; it is renamed to its real name
// once complete, as Hadoop's shell does.
const copyingSuffix = "._COPYING_"

// tailBytes is how much -tail shows and -head reads (Hadoop: 1 KiB).
const tailBytes = 1024

// progressMin is the file size from which put, get and cp show a
// progress bar (only on a terminal).
const progressMin = 64 << 20

// pollInterval returns the polling interval of a waiting command: the
// Env's, else Hadoop's.
func (c *cmd) pollInterval(hadoop time.Duration) time.Duration {
	if c.env.PollInterval > 0 {
		return c.env.PollInterval
	}
	return hadoop
}

// sleep waits d or until the context ends (false then).
func (c *cmd) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ---- reading commands ----

func runCat(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 1, unlimited, []string{"ignoreCrc"}, false)
	if err != nil {
		return err
	}
	c.forEachArg(rest, func(it *item) error { return c.catOne(it, false) }, nil)
	return nil
}

func runText(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 1, unlimited, []string{"ignoreCrc"}, false)
	if err != nil {
		return err
	}
	c.forEachArg(rest, func(it *item) error { return c.catOne(it, true) }, nil)
	return nil
}

func (c *cmd) catOne(it *item, decode bool) error {
	if it.isDir() {
		return pathErr(it.str, msgIsDir)
	}
	r, err := it.fs.Open(c.ctx, it.abs)
	if err != nil {
		return err
	}
	defer r.Close()
	var src io.Reader = r
	if decode {
		br := bufio.NewReader(r)
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return err
			}
			defer zr.Close()
			src = zr
		} else {
			src = br
		}
	}
	_, err = io.Copy(c.env.Stdout, src)
	return err
}

func runHead(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 1, 1, nil, false)
	if err != nil {
		return err
	}
	c.forEachLiteral(rest, func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		r, err := it.fs.Open(c.ctx, it.abs)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(c.env.Stdout, io.LimitReader(r, tailBytes))
		return err
	}, nil)
	return nil
}

func runTail(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, 1, []string{"f"}, false)
	if err != nil {
		return err
	}
	c.forEachLiteral(rest, func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		off := max(it.status().Length-tailBytes, 0)
		for {
			n, err := c.dumpFrom(it, off)
			if err != nil {
				if f.on("f") && c.ctx.Err() != nil {
					return nil // interrupted while following: the normal end
				}
				return err
			}
			off += n
			if !f.on("f") || !c.sleep(c.pollInterval(time.Second)) {
				return nil
			}
		}
	}, nil)
	return nil
}

// dumpFrom copies the file from off to its current end to stdout.
func (c *cmd) dumpFrom(it *item, off int64) (int64, error) {
	r, err := it.fs.Open(c.ctx, it.abs)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if off >= r.Size() {
		return 0, nil
	}
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(c.env.Stdout, r)
}

func runChecksum(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"v"}, false)
	if err != nil {
		return err
	}
	c.forEachArg(rest, func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		sum, err := it.fs.Checksum(c.ctx, it.abs)
		if errors.Is(err, errNoChecksum) {
			// The local file system keeps no checksum: Hadoop prints NONE.
			c.printf("%s\tNONE\t\n", it.str)
			return nil
		}
		if err != nil {
			return err
		}
		if f.on("v") {
			c.printf("%s\t%s\tBlockSize=%d\n", it.str, sum, it.status().BlockSize)
			return nil
		}
		c.printf("%s\t%s\n", it.str, sum)
		return nil
	}, nil)
	return nil
}

// ---- local file system side ----

// localItem is a path on the local file system.
type localItem struct {
	str string // as typed or derived
	fi  os.FileInfo
}

func statLocal(p string) (*localItem, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &localItem{str: p}, nil
	}
	if err != nil {
		return nil, err
	}
	return &localItem{str: p, fi: fi}, nil
}

// localSources expands local arguments with the shell's glob rules of
// filepath.Glob; "-" is stdin.
func (c *cmd) localSources(args []string) []*localItem {
	var out []*localItem
	for _, a := range args {
		a = localPathOf(a)
		if a == "-" {
			out = append(out, &localItem{str: "-"})
			continue
		}
		if hasGlob(a) {
			m, err := filepath.Glob(a)
			if err != nil || len(m) == 0 {
				c.fail(pathErr(a, msgNotFound).Error())
				continue
			}
			for _, p := range m {
				if li, err := statLocal(p); err == nil {
					out = append(out, li)
				}
			}
			continue
		}
		li, err := statLocal(a)
		if err != nil {
			c.fail(pathErr(a, err.Error()).Error())
			continue
		}
		if li.fi == nil {
			c.fail(pathErr(a, msgNotFound).Error())
			continue
		}
		out = append(out, li)
	}
	return out
}

// ---- put / copyFromLocal / moveFromLocal ----

func runPut(c *cmd, args []string) error { return c.put(args, false) }

func runMoveFromLocal(c *cmd, args []string) error { return c.put(args, true) }

func (c *cmd) put(args []string, move bool) error {
	threads := 1
	if !move {
		// -t THREADS and -q QUEUE (Hadoop's CopyCommandWithMultiThread):
		// up to THREADS sources are copied at once; the queue size only
		// bounds Hadoop's thread pool and is checked, not needed here.
		var err error
		if args, threads, err = intOption(args, "t", 1); err != nil {
			return err
		}
		if args, _, err = intOption(args, "q", 1024); err != nil {
			return err
		}
	}
	names := []string{"f", "p", "l", "d"}
	f, rest, err := parseFlags(args, 1, unlimited, names, false)
	if err != nil {
		return err
	}
	dstArg := "."
	if len(rest) > 1 {
		dstArg = rest[len(rest)-1]
		rest = rest[:len(rest)-1]
	}
	dst, err := c.destination(dstArg, len(rest))
	if err != nil {
		return err
	}
	c.putDirect, c.putLazy = f.on("d"), f.on("l")
	defer func() { c.putDirect, c.putLazy = false, false }()
	type job struct {
		src    *localItem
		target *item
	}
	var jobs []job
	for _, src := range c.localSources(rest) {
		target := dst
		if dst.isDir() || representsDir(dst.str) {
			// As Hadoop: stdin into a directory is a file named "-".
			t, err := c.childItem(dst, filepath.Base(src.str))
			if err != nil {
				c.failErr(dst.str, err)
				continue
			}
			target = t
		}
		jobs = append(jobs, job{src, target})
	}
	run := func(j job) {
		if err := c.putOne(j.src, j.target, f.on("f"), f.on("p")); err != nil {
			c.failErr(j.target.str, err)
			return
		}
		if move && j.src.str != "-" {
			if err := os.RemoveAll(j.src.str); err != nil {
				c.fail(err.Error())
			}
		}
	}
	if threads <= 1 || len(jobs) <= 1 {
		for _, j := range jobs {
			run(j)
		}
		return nil
	}
	c.parallel = true
	defer func() { c.parallel = false }()
	next := make(chan job)
	var wg sync.WaitGroup
	for range min(threads, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				run(j)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return nil
}

// intOption takes "-NAME N" off the options at the front of args; def is
// the value when it is absent. N must be a whole number; below 1 counts
// as 1, as Hadoop's copy commands take it.
func intOption(args []string, name string, def int) ([]string, int, error) {
	for i, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a != "-"+name {
			continue
		}
		if i+1 >= len(args) {
			return nil, 0, usagef("-%s needs a number", name)
		}
		n, err := strconv.Atoi(args[i+1])
		if err != nil {
			return nil, 0, usagef("-%s %s: not a number", name, args[i+1])
		}
		rest := append(append([]string(nil), args[:i]...), args[i+2:]...)
		return rest, max(n, 1), nil
	}
	return args, def, nil
}

// destination resolves the destination argument of a copy with n
// sources: several sources need an existing directory; one source needs
// the target's parent.
func (c *cmd) destination(arg string, n int) (*item, error) {
	items, err := c.expand(arg)
	if err != nil {
		if hasGlob(arg) {
			return nil, err
		}
		return nil, err
	}
	if len(items) > 1 {
		return nil, &shellError{msg: "`" + arg + "': Too many matches"}
	}
	dst := items[0]
	switch {
	case n > 1:
		if !dst.exists() {
			return nil, pathErr(dst.str, msgNotFound)
		}
		if !dst.isDir() {
			return nil, pathErr(dst.str, msgNotDir)
		}
	case !dst.exists():
		ok, err := c.parentExists(dst)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, c.missingParent(dst)
		}
	}
	return dst, nil
}

func (c *cmd) putOne(src *localItem, target *item, overwrite, preserve bool) error {
	if src.str == "-" {
		if target.isDir() {
			return pathErr(target.str, msgIsDir)
		}
		if target.exists() && !overwrite {
			return pathErr(target.str, msgExists)
		}
		return c.writeHDFS(c.env.Stdin, -1, "-", target, overwrite)
	}
	if src.fi.IsDir() {
		if target.exists() && !target.isDir() {
			return pathErr(target.str, msgNotDir)
		}
		if !target.exists() {
			if err := target.fs.Mkdir(c.ctx, target.abs, dirDefault); err != nil {
				return err
			}
		}
		ents, err := os.ReadDir(src.str)
		if err != nil {
			return err
		}
		for _, e := range ents {
			li, err := statLocal(filepath.Join(src.str, e.Name()))
			if err != nil || li.fi == nil {
				continue
			}
			t, err := c.childItem(target, e.Name())
			if err != nil {
				return err
			}
			if err := c.putOne(li, t, overwrite, preserve); err != nil {
				c.failErr(t.str, err)
			}
		}
		return c.preserveHDFS(preserve, target, src.fi)
	}
	if target.isDir() {
		return pathErr(target.str, msgIsDir)
	}
	if target.exists() && !overwrite {
		return pathErr(target.str, msgExists)
	}
	lf, err := os.Open(src.str)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := c.writeHDFS(lf, src.fi.Size(), src.str, target, overwrite); err != nil {
		return err
	}
	return c.preserveHDFS(preserve, target, src.fi)
}

func (c *cmd) preserveHDFS(preserve bool, target *item, fi os.FileInfo) error {
	if !preserve {
		return nil
	}
	ms := fi.ModTime().UnixMilli()
	if err := target.fs.SetTimes(c.ctx, target.abs, ms, ms); err != nil {
		return err
	}
	return target.fs.Chmod(c.ctx, target.abs, fi.Mode().Perm())
}

// writeHDFS copies r (size bytes, -1 unknown) into target through a
// temporary ._COPYING_ file renamed into place at the end (-put -d: into
// target itself; -put -l: with one replica, as Hadoop's lazy persist).
func (c *cmd) writeHDFS(r io.Reader, size int64, label string, target *item, overwrite bool) error {
	opts := client.CreateOptions{Overwrite: true}
	if c.putLazy {
		opts.Replication = 1
	}
	tmp := target.abs + copyingSuffix
	if c.putDirect {
		tmp, opts.Overwrite = target.abs, overwrite
	}
	w, err := target.fs.CreateFile(c.ctx, tmp, opts)
	if err != nil {
		if c.putDirect && errors.Is(err, fs.ErrExist) {
			return pathErr(target.str, msgExists)
		}
		return err
	}
	r = c.progress(r, size, label)
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		_ = target.fs.RemoveAll(context.WithoutCancel(c.ctx), tmp)
		return err
	}
	if err := w.Close(); err != nil {
		_ = target.fs.RemoveAll(context.WithoutCancel(c.ctx), tmp)
		return err
	}
	if c.putDirect {
		return nil
	}
	if overwrite {
		err = target.fs.RenameOverwrite(c.ctx, tmp, target.abs)
	} else {
		err = target.fs.Rename(c.ctx, tmp, target.abs)
	}
	if err != nil {
		_ = target.fs.RemoveAll(context.WithoutCancel(c.ctx), tmp)
		if errors.Is(err, fs.ErrExist) {
			return pathErr(target.str, msgExists)
		}
		return err
	}
	return nil
}

// ---- appendToFile ----

func runAppendToFile(c *cmd, args []string) error {
	_, rest, err := parseFlags(args, 2, unlimited, nil, false)
	if err != nil {
		return err
	}
	dst, err := c.newItem(rest[len(rest)-1])
	if err != nil {
		return err
	}
	if dst.isDir() {
		return pathErr(dst.str, msgIsDir)
	}
	srcs := c.localSources(rest[:len(rest)-1])
	if c.numErrors > 0 {
		return nil
	}
	var w io.WriteCloser
	if dst.exists() {
		w, err = dst.fs.Append(c.ctx, dst.abs)
	} else {
		ok, perr := c.parentExists(dst)
		if perr != nil {
			return perr
		}
		if !ok {
			return c.missingParent(dst)
		}
		w, err = dst.fs.Create(c.ctx, dst.abs)
	}
	if err != nil {
		return err
	}
	for _, s := range srcs {
		var r io.Reader
		if s.str == "-" {
			r = c.env.Stdin
		} else {
			lf, err := os.Open(s.str)
			if err != nil {
				w.Close()
				return err
			}
			defer lf.Close()
			r = lf
		}
		if _, err := io.Copy(w, r); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// ---- get / copyToLocal / getmerge ----

func runGet(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"f", "p", "ignoreCrc", "crc"}, false)
	if err != nil {
		return err
	}
	dstArg := "."
	if len(rest) > 1 {
		dstArg = localPathOf(rest[len(rest)-1])
		rest = rest[:len(rest)-1]
	}
	dst, err := statLocal(dstArg)
	if err != nil {
		return err
	}
	var srcs []*item
	for _, a := range rest {
		items, err := c.expand(a)
		if err != nil {
			c.failErr(a, err)
			continue
		}
		srcs = append(srcs, items...)
	}
	if len(rest) > 1 || len(srcs) > 1 {
		if dst.fi == nil {
			return pathErr(dst.str, msgNotFound)
		}
		if !dst.fi.IsDir() {
			return pathErr(dst.str, msgNotDir)
		}
	} else if dst.fi == nil {
		if _, err := os.Stat(filepath.Dir(filepath.Clean(dst.str))); err != nil {
			return pathErr(dst.str, msgNotFound)
		}
	}
	for _, src := range srcs {
		if !src.exists() {
			c.failErr(src.str, pathErr(src.str, msgNotFound))
			continue
		}
		target := dst.str
		if dst.fi != nil && dst.fi.IsDir() {
			target = filepath.Join(dst.str, path.Base(src.abs))
		}
		if err := c.getOne(src, target, f.on("f"), f.on("p")); err != nil {
			c.failErr(target, err)
		}
	}
	return nil
}

func (c *cmd) getOne(src *item, target string, overwrite, preserve bool) error {
	tfi, err := os.Stat(target)
	exists := err == nil
	if src.isDir() {
		if exists && !tfi.IsDir() {
			return pathErr(target, msgNotDir)
		}
		if !exists {
			if err := os.Mkdir(target, 0o755); err != nil {
				return err
			}
		}
		kids, err := c.children(src)
		if err != nil {
			return err
		}
		for _, k := range kids {
			t := filepath.Join(target, path.Base(k.abs))
			if err := c.getOne(k, t, overwrite, preserve); err != nil {
				c.failErr(t, err)
			}
		}
		return c.preserveLocal(preserve, src, target)
	}
	if exists && tfi.IsDir() {
		return pathErr(target, msgIsDir)
	}
	if exists && !overwrite {
		return pathErr(target, msgExists)
	}
	r, err := src.fs.Open(c.ctx, src.abs)
	if err != nil {
		return err
	}
	defer r.Close()
	tmp := target + copyingSuffix
	lf, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(lf, c.progress(r, r.Size(), src.str))
	if cerr := lf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return c.preserveLocal(preserve, src, target)
}

func (c *cmd) preserveLocal(preserve bool, src *item, target string) error {
	if !preserve {
		return nil
	}
	s := src.status()
	if err := os.Chtimes(target, s.AccessTime, s.ModTime); err != nil {
		return err
	}
	return os.Chmod(target, src.fi.Mode().Perm())
}

func runGetmerge(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"nl", "skip-empty-file"}, false)
	if err != nil {
		return err
	}
	dstArg := localPathOf(rest[len(rest)-1])
	if fi, err := os.Stat(dstArg); err == nil && fi.IsDir() {
		return pathErr(dstArg, msgIsDir)
	}
	var files []*item
	for _, a := range rest[:len(rest)-1] {
		items, err := c.expand(a)
		if err != nil {
			c.failErr(a, err)
			continue
		}
		for _, it := range items {
			if !it.exists() {
				c.failErr(it.str, pathErr(it.str, msgNotFound))
				continue
			}
			if !it.isDir() {
				files = append(files, it)
				continue
			}
			kids, err := c.children(it)
			if err != nil {
				c.failErr(it.str, err)
				continue
			}
			sort.Slice(kids, func(i, j int) bool { return kids[i].abs < kids[j].abs })
			for _, k := range kids {
				if !k.isDir() {
					files = append(files, k)
				}
			}
		}
	}
	out, err := os.Create(dstArg)
	if err != nil {
		return err
	}
	defer out.Close()
	for _, it := range files {
		if f.on("skip-empty-file") && it.status().Length == 0 {
			continue
		}
		r, err := it.fs.Open(c.ctx, it.abs)
		if err != nil {
			c.failErr(it.str, err)
			continue
		}
		_, err = io.Copy(out, r)
		r.Close()
		if err != nil {
			return err
		}
		if f.on("nl") {
			if _, err := out.Write([]byte("\n")); err != nil {
				return err
			}
		}
	}
	return out.Close()
}

// ---- cp ----

func runCp(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"f", "p", "d"}, false)
	if err != nil {
		return err
	}
	// A copy from file: sources is a -put, one to a file: destination a
	// -get; the local side of both is the local file system.
	var flags []string
	for _, o := range []string{"f", "p"} {
		if f.on(o) {
			flags = append(flags, "-"+o)
		}
	}
	localSrcs := 0
	for _, a := range rest[:len(rest)-1] {
		if isLocalURI(a) {
			localSrcs++
		}
	}
	switch dstLocal := isLocalURI(rest[len(rest)-1]); {
	case localSrcs > 0 && (localSrcs < len(rest)-1 || dstLocal):
		// Local to local, or sources on both file systems: the general
		// copy below, each path on its own file system.
	case localSrcs > 0:
		return c.put(append(flags, rest...), false)
	case dstLocal:
		return runGet(c, append(flags, rest...))
	}
	dstArg := rest[len(rest)-1]
	var srcs []*item
	for _, a := range rest[:len(rest)-1] {
		items, err := c.expand(a)
		if err != nil {
			c.failErr(a, err)
			continue
		}
		srcs = append(srcs, items...)
	}
	dst, err := c.destination(dstArg, len(srcs))
	if err != nil {
		return err
	}
	for _, src := range srcs {
		if !src.exists() {
			c.failErr(src.str, pathErr(src.str, msgNotFound))
			continue
		}
		target := dst
		if dst.isDir() || representsDir(dst.str) {
			t, err := c.childItem(dst, path.Base(src.abs))
			if err != nil {
				c.failErr(dst.str, err)
				continue
			}
			target = t
		}
		if src.isDir() && (target.abs == src.abs || len(target.abs) > len(src.abs) && target.abs[:len(src.abs)+1] == src.abs+"/") {
			c.fail("`" + src.str + "' to `" + target.str + "': is a subdirectory of itself")
			continue
		}
		if err := c.cpOne(src, target, f.on("f"), f.on("p")); err != nil {
			c.failErr(target.str, err)
		}
	}
	return nil
}

func (c *cmd) cpOne(src, target *item, overwrite, preserve bool) error {
	if src.isDir() {
		if target.exists() && !target.isDir() {
			return pathErr(target.str, msgNotDir)
		}
		if !target.exists() {
			if err := target.fs.Mkdir(c.ctx, target.abs, dirDefault); err != nil {
				return err
			}
		}
		kids, err := c.children(src)
		if err != nil {
			return err
		}
		for _, k := range kids {
			t, err := c.childItem(target, path.Base(k.abs))
			if err != nil {
				return err
			}
			if err := c.cpOne(k, t, overwrite, preserve); err != nil {
				c.failErr(t.str, err)
			}
		}
		return nil
	}
	if target.isDir() {
		return pathErr(target.str, msgIsDir)
	}
	if target.exists() && !overwrite {
		return pathErr(target.str, msgExists)
	}
	r, err := src.fs.Open(c.ctx, src.abs)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := c.writeHDFS(r, r.Size(), src.str, target, overwrite); err != nil {
		return err
	}
	if preserve {
		s := src.status()
		if err := target.fs.SetTimes(c.ctx, target.abs, s.ModTime.UnixMilli(), s.AccessTime.UnixMilli()); err != nil {
			return err
		}
		return target.fs.Chmod(c.ctx, target.abs, src.fi.Mode()&(fs.ModePerm|fs.ModeSticky))
	}
	return nil
}

// ---- truncate ----

func runTruncate(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 2, unlimited, []string{"w"}, false)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil {
		c.warn("Illegal length, a non-negative integer expected")
		return usagef("For input string: %q", rest[0])
	}
	if n < 0 {
		return &shellError{msg: "length must be >= 0"}
	}
	var wait []*item
	c.forEachArg(rest[1:], func(it *item) error {
		if it.isDir() {
			return pathErr(it.str, msgIsDir)
		}
		if old := it.status().Length; n > old {
			return &shellError{msg: fmt.Sprintf("Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", old, n)}
		}
		done, err := it.fs.Truncate(c.ctx, it.abs, n)
		switch {
		case err != nil:
			return err
		case done:
			c.printf("Truncated %s to length: %d\n", it.str, n)
		case f.on("w"):
			wait = append(wait, it)
		default:
			c.printf("Truncating %s to length: %d. Wait for block recovery to complete before further updating this file.\n", it.str, n)
		}
		return nil
	}, nil)
	for _, it := range wait {
		c.printf("Waiting for %s ...\n", it.str)
		for {
			fi, err := it.fs.Stat(c.ctx, it.abs)
			if err != nil {
				c.failErr(it.str, err)
				break
			}
			// Done when the length is the new one and block recovery has
			// closed the file again.
			closed, cerr := it.fs.IsFileClosed(c.ctx, it.abs)
			if cerr != nil {
				c.failErr(it.str, cerr)
				break
			}
			if fi.Size() == n && closed {
				c.printf("Truncated %s to length: %d\n", it.str, n)
				break
			}
			if !c.sleep(c.pollInterval(time.Second)) {
				c.failErr(it.str, c.ctx.Err())
				break
			}
		}
	}
	return nil
}

// waitReplication is -setrep -w: poll the block locations until every
// block has n replicas, printing a dot per round, as Hadoop does.
func (c *cmd) waitReplication(items []*item, n int) {
	for _, it := range items {
		c.printf("Waiting for %s ...", it.str)
		warned := false
		for {
			locs, err := it.fs.BlockLocations(c.ctx, it.abs, 0, it.status().Length)
			if err != nil {
				c.printf("\n")
				c.failErr(it.str, err)
				break
			}
			done := true
			for _, l := range locs {
				if len(l.Hosts) != n {
					if !warned && len(l.Hosts) > n {
						c.printf("\nWARNING: the waiting time may be long for DECREASING the number of replications.\n")
						warned = true
					}
					done = false
					break
				}
			}
			if done {
				c.printf(" done\n")
				break
			}
			c.printf(".")
			if !c.sleep(c.pollInterval(10 * time.Second)) {
				c.printf("\n")
				c.failErr(it.str, c.ctx.Err())
				break
			}
		}
	}
}

// ---- progress ----

// progress wraps r with a progress bar on stderr for large files when
// stdout is a terminal.
func (c *cmd) progress(r io.Reader, size int64, label string) io.Reader {
	if size < progressMin || c.parallel || !c.isTerminal() {
		return r
	}
	return &progressReader{r: r, size: size, label: label, w: c.env.Stderr, last: -1}
}

func (c *cmd) isTerminal() bool {
	if c.env.Terminal != nil {
		return c.env.Terminal()
	}
	f, ok := c.env.Stdout.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

type progressReader struct {
	r     io.Reader
	w     io.Writer
	label string
	size  int64
	done  int64
	last  int64 // last percentage printed
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	pct := p.done * 100 / p.size
	if pct != p.last {
		p.last = pct
		const width = 40
		bar := bytes.Repeat([]byte{'='}, int(pct*width/100))
		fmt.Fprintf(p.w, "\r%s [%-*s] %3d%% %s/%s", p.label, width, bar, pct, binarySize(p.done), binarySize(p.size))
		if pct >= 100 {
			fmt.Fprintln(p.w)
		}
	}
	return n, err
}

func binarySize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, i := float64(n), 0
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}
