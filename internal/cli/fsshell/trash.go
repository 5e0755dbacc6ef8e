package fsshell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Trash as HDFS clients do it (Hadoop's TrashPolicyDefault): the trash of
// a user is /user/<user>/.Trash; -rm renames a path to the same path
// under .Trash/Current; -expunge renames Current to a checkpoint named by
// the time (yyMMddHHmmss) and deletes the checkpoints older than the
// trash interval. The NameNode's emptier does the same for every user when
// the server's fs.trash.interval is above zero.

// checkpointLayout is the name of a trash checkpoint (Java's yyMMddHHmmss).
const checkpointLayout = "060102150405"

// trashRoot is the user's trash directory.
func (c *cmd) trashRoot() string { return "/user/" + c.fs.User() + "/.Trash" }

// trashInterval is the interval that decides whether -rm uses the trash:
// the NameNode's when it is above zero, else the client's.
func (c *cmd) trashInterval() (time.Duration, error) {
	sd, err := c.fs.ServerDefaults(c.ctx)
	if err != nil {
		return 0, err
	}
	if sd.TrashInterval > 0 {
		return sd.TrashInterval, nil
	}
	return c.env.TrashInterval, nil
}

// moveToTrash renames it into the trash. moved is false when it is in the
// trash already (the caller deletes it for good).
func (c *cmd) moveToTrash(it *item) (moved bool, err error) {
	root := "/user/" + it.fs.User() + "/.Trash" // on the item's own file system
	abs := it.abs
	if abs == root || strings.HasPrefix(abs, root+"/") {
		return false, nil
	}
	if abs == "/" || strings.HasPrefix(path.Dir(root)+"/", abs+"/") {
		return false, &shellError{msg: fmt.Sprintf("Cannot move \"%s\" to the trash, as it contains the trash. Consider using -skipTrash option", it.fs.URI()+abs)}
	}
	current := root + "/Current"
	dst := current + abs
	fail := func(err error) (bool, error) {
		return false, &shellError{msg: "Failed to move to trash: " + it.fs.URI() + abs + ": " + remoteText(err) + ". Consider using -skipTrash option"}
	}
	if err := it.fs.MkdirAll(c.ctx, path.Dir(dst), 0o700); err != nil {
		return fail(err)
	}
	target := dst
	for i := 0; i < 100; i++ {
		_, err := it.fs.Stat(c.ctx, target)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return fail(err)
		}
		target = dst + strconv.FormatInt(c.now().UnixMilli()+int64(i), 10)
	}
	if err := it.fs.RenameToTrash(c.ctx, abs, target); err != nil {
		return fail(err)
	}
	c.printf("Moved: '%s' to trash at: %s\n", it.fs.URI()+abs, it.fs.URI()+current)
	return true, nil
}

func runExpunge(c *cmd, args []string) error {
	f, _, err := parseFlags(args, 0, 0, []string{"immediate"}, false)
	if err != nil {
		return err
	}
	interval, err := c.trashInterval()
	if err != nil {
		c.failErr(c.trashRoot(), err)
		return nil
	}
	root := c.trashRoot()
	if _, err := c.fs.Stat(c.ctx, root); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		c.failErr(root, err)
		return nil
	}
	now := c.now()
	immediate := f.on("immediate")
	if !immediate {
		c.deleteCheckpoints(root, now, interval, false)
	}
	c.createCheckpoint(root, now)
	if immediate {
		c.deleteCheckpoints(root, now, interval, true)
	}
	return nil
}

// checkpointTime parses a checkpoint name (yyMMddHHmmss, or the older
// yyMMddHHmm) in the local zone.
func (c *cmd) checkpointTime(name string) (time.Time, bool) {
	loc := c.tz()
	for _, layout := range []string{checkpointLayout, "0601021504"} {
		if len(name) == len(layout) {
			if t, err := time.ParseInLocation(layout, name, loc); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

func (c *cmd) deleteCheckpoints(root string, now time.Time, interval time.Duration, all bool) {
	kids, err := c.fs.ReadDir(c.ctx, root)
	if err != nil {
		c.failErr(root, err)
		return
	}
	for _, k := range kids {
		name := k.Name()
		if name == "Current" {
			continue
		}
		t, ok := c.checkpointTime(name)
		if !ok {
			c.warn("Unexpected item in trash: " + root + "/" + name + ". Ignoring.")
			continue
		}
		if all || now.Sub(t) > interval {
			if err := c.fs.RemoveAll(c.ctx, root+"/"+name); err != nil {
				c.warn("Couldn't delete checkpoint: " + root + "/" + name + " Ignoring.")
				continue
			}
			c.printf("Deleted trash checkpoint: %s/%s\n", root, name)
		}
	}
}

func (c *cmd) createCheckpoint(root string, now time.Time) {
	current := root + "/Current"
	if _, err := c.fs.Stat(c.ctx, current); err != nil {
		return
	}
	loc := c.tz()
	base := root + "/" + now.In(loc).Format(checkpointLayout)
	cp := base
	for attempt := 1; attempt <= 1000; attempt++ {
		err := c.fs.Rename(c.ctx, current, cp)
		if err == nil {
			c.printf("Created trash checkpoint: %s\n", cp)
			return
		}
		if !errors.Is(err, fs.ErrExist) {
			c.failErr(current, err)
			return
		}
		cp = base + "-" + strconv.Itoa(attempt)
	}
	c.fail("Failed to checkpoint trash: " + cp)
}
