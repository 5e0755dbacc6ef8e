package namenode

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// The trash emptier: when the NameNode's fs.trash.interval is above zero,
// the active NameNode checkpoints every user's trash every
// fs.trash.checkpoint.interval (the trash interval when that is 0 or
// larger), at multiples of it as Hadoop's Emptier does: it deletes the
// checkpoints of /user/*/.Trash older than the trash interval and renames
// each .Trash/Current to a checkpoint named by the time (yyMMddHHmmss, in
// the NameNode's zone). The changes are ordinary deletes and renames,
// logged and applied like a client's.

// trashCheckpointLayout is Java's yyMMddHHmmss.
const trashCheckpointLayout = "060102150405"

// emptierInterval is how often the emptier runs.
func (nn *NameNode) emptierInterval() time.Duration {
	d, c := nn.cfg.TrashInterval, nn.cfg.TrashCheckpointInterval
	if c <= 0 || c > d {
		return d
	}
	return c
}

// trashEmptier runs checkpoint passes at multiples of the emptier interval.
func (nn *NameNode) trashEmptier(ctx context.Context) {
	every := nn.emptierInterval()
	clk := nn.deps.Clock
	next := clk.Now().Truncate(every).Add(every)
	t := clk.NewTicker(min(every, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		now := clk.Now()
		if now.Before(next) {
			continue
		}
		next = now.Truncate(every).Add(every)
		if err := nn.emptyTrash(ctx, now); err != nil && ctx.Err() == nil {
			nn.deps.Logger.Warn("trash emptier", "err", err)
		}
	}
}

// emptyTrash is one pass of the emptier at time now.
func (nn *NameNode) emptyTrash(ctx context.Context, now time.Time) error {
	super := namespace.Caller{User: nn.cfg.SuperUser, Super: true}
	interval := nn.cfg.TrashInterval
	var created, deleted []string
	err := nn.ns.mutate(ctx, func(t *namespace.Tree, nowMs int64) ([]op.Op, error) {
		created, deleted = nil, nil
		users, _, err := t.List(super, "/user", nil, 0)
		if errors.Is(err, namespace.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var ops []op.Op
		for _, u := range users {
			if !u.IsDir {
				continue
			}
			root := "/user/" + string(u.Name) + "/.Trash"
			kids, _, err := t.List(super, root, nil, 0)
			if err != nil {
				continue // no trash, or not a directory
			}
			names := map[string]bool{}
			hasCurrent := false
			for _, k := range kids {
				name := string(k.Name)
				names[name] = true
				if name == "Current" {
					hasCurrent = true
					continue
				}
				at, ok := checkpointTime(name)
				if !ok || now.Sub(at) <= interval {
					continue
				}
				_, del, err := t.PlanDelete(super, root+"/"+name, true, nowMs)
				if err != nil {
					return nil, err
				}
				ops = append(ops, del...)
				deleted = append(deleted, root+"/"+name)
			}
			if !hasCurrent {
				continue
			}
			base := now.In(time.Local).Format(trashCheckpointLayout)
			cp := base
			for i := 1; names[cp]; i++ {
				cp = base + "-" + strconv.Itoa(i)
			}
			ren, err := t.PlanRename2(super, root+"/Current", root+"/"+cp, false, nowMs)
			if err != nil {
				return nil, err
			}
			ops = append(ops, ren...)
			created = append(created, root+"/"+cp)
		}
		return ops, nil
	})
	for _, p := range deleted {
		nn.deps.Logger.Info("Deleted trash checkpoint", "path", p)
	}
	for _, p := range created {
		nn.deps.Logger.Info("Created trash checkpoint", "path", p)
	}
	return err
}

// checkpointTime parses a checkpoint name (yyMMddHHmmss or the older
// yyMMddHHmm) in the NameNode's zone.
func checkpointTime(name string) (time.Time, bool) {
	for _, layout := range []string{trashCheckpointLayout, "0601021504"} {
		if len(name) == len(layout) {
			if t, err := time.ParseInLocation(layout, name, time.Local); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}
