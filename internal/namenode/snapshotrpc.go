package namenode

import (
	"context"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// registerSnapshotCalls serves the snapshot calls of ClientProtocol.
// createSnapshot, deleteSnapshot and renameSnapshot are at-most-once, as
// in Hadoop.
func registerSnapshotCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "allowSnapshot", c.allowSnapshot)
	handle(c.nn, s, "disallowSnapshot", c.disallowSnapshot)
	handle(c.nn, s, "getSnapshottableDirListing", c.getSnapshottableDirListing)
	handle(c.nn, s, "createSnapshot", c.createSnapshot)
	handle(c.nn, s, "deleteSnapshot", c.deleteSnapshot)
	handle(c.nn, s, "renameSnapshot", c.renameSnapshot)
	handle(c.nn, s, "getSnapshotListing", c.getSnapshotListing)
	handle(c.nn, s, "getSnapshotDiffReport", c.getSnapshotDiffReport)
	handle(c.nn, s, "getSnapshotDiffReportListing", c.getSnapshotDiffReportListing)
}

// getSnapshotDiffReportListing pages the diff report: at most
// dfs.namenode.snapshotdiff.listing.limit entries a reply, each with the
// inode ids HDFS gives; a rename is a deleted entry with its target and a
// created entry, both marked as references, as HDFS lists them.
func (c *clientRPC) getSnapshotDiffReportListing(ctx context.Context, req *hdfs.GetSnapshotDiffReportListingRequestProto) (*hdfs.GetSnapshotDiffReportListingResponseProto, error) {
	u := c.caller(ctx)
	index := int32(-1)
	var start string
	if cur := req.GetCursor(); cur != nil {
		start, index = string(cur.GetStartPath()), cur.GetIndex()
	}
	var l namespace.DiffListing
	var err error
	c.ns.read(func(t *namespace.Tree) {
		l, err = t.SnapshotDiffListing(u, req.GetSnapshotRoot(), req.GetFromSnapshot(), req.GetToSnapshot(), start, index, c.nn.cfg.SnapshotDiffListingLimit)
	})
	if err != nil {
		return nil, toRemote(err)
	}
	r := &hdfs.SnapshotDiffReportListingProto{IsFromEarlier: proto.Bool(l.FromEarlier),
		Cursor: &hdfs.SnapshotDiffReportCursorProto{StartPath: []byte(l.LastPath), Index: proto.Int32(l.LastIndex)}}
	entry := func(e namespace.DiffEntry, dir uint64, path string, ref bool) *hdfs.SnapshotDiffReportListingEntryProto {
		return &hdfs.SnapshotDiffReportListingEntryProto{Fullpath: []byte(path), DirId: proto.Uint64(dir),
			IsReference: proto.Bool(ref), FileId: proto.Uint64(e.FileID)}
	}
	for _, e := range l.Entries {
		switch e.Type {
		case namespace.DiffModify:
			r.ModifiedEntries = append(r.ModifiedEntries, entry(e, e.DirID, e.Source, false))
		case namespace.DiffCreate:
			r.CreatedEntries = append(r.CreatedEntries, entry(e, e.DirID, e.Source, false))
		case namespace.DiffDelete:
			r.DeletedEntries = append(r.DeletedEntries, entry(e, e.DirID, e.Source, false))
		case namespace.DiffRename:
			d := entry(e, e.DirID, e.Source, true)
			d.TargetPath = []byte(e.Target)
			r.DeletedEntries = append(r.DeletedEntries, d)
			r.CreatedEntries = append(r.CreatedEntries, entry(e, e.TargetDirID, e.Target, true))
		}
	}
	return &hdfs.GetSnapshotDiffReportListingResponseProto{DiffReport: r}, nil
}

func (c *clientRPC) getSnapshotDiffReport(ctx context.Context, req *hdfs.GetSnapshotDiffReportRequestProto) (*hdfs.GetSnapshotDiffReportResponseProto, error) {
	u := c.caller(ctx)
	var root string
	var entries []namespace.DiffEntry
	var err error
	c.ns.read(func(t *namespace.Tree) {
		root, entries, err = t.SnapshotDiff(u, req.GetSnapshotRoot(), req.GetFromSnapshot(), req.GetToSnapshot())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	r := &hdfs.SnapshotDiffReportProto{SnapshotRoot: proto.String(root), FromSnapshot: proto.String(req.GetFromSnapshot()),
		ToSnapshot: proto.String(req.GetToSnapshot()), DiffReportEntries: []*hdfs.SnapshotDiffReportEntryProto{}}
	for _, e := range entries {
		pe := &hdfs.SnapshotDiffReportEntryProto{Fullpath: []byte(e.Source), ModificationLabel: proto.String(string(e.Type))}
		if e.Type == namespace.DiffRename {
			pe.TargetPath = []byte(e.Target)
		}
		r.DiffReportEntries = append(r.DiffReportEntries, pe)
	}
	return &hdfs.GetSnapshotDiffReportResponseProto{DiffReport: r}, nil
}

func (c *clientRPC) createSnapshot(ctx context.Context, req *hdfs.CreateSnapshotRequestProto) (*hdfs.CreateSnapshotResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.CreateSnapshotResponseProto, error) {
		u := c.caller(ctx)
		var sp string
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			p, ops, err := t.PlanCreateSnapshot(u, req.GetSnapshotRoot(), req.GetSnapshotName(), c.nn.cfg.SnapshotMaxLimit, now)
			sp = p
			return ops, err
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.CreateSnapshotResponseProto{SnapshotPath: proto.String(sp)}, nil
	})
}

func (c *clientRPC) deleteSnapshot(ctx context.Context, req *hdfs.DeleteSnapshotRequestProto) (*hdfs.DeleteSnapshotResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.DeleteSnapshotResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			return t.PlanDeleteSnapshot(u, req.GetSnapshotRoot(), req.GetSnapshotName(), now)
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.DeleteSnapshotResponseProto{}, nil
	})
}

func (c *clientRPC) renameSnapshot(ctx context.Context, req *hdfs.RenameSnapshotRequestProto) (*hdfs.RenameSnapshotResponseProto, error) {
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.RenameSnapshotResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			return t.PlanRenameSnapshot(u, req.GetSnapshotRoot(), req.GetSnapshotOldName(), req.GetSnapshotNewName(), now)
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.RenameSnapshotResponseProto{}, nil
	})
}

func (c *clientRPC) getSnapshotListing(ctx context.Context, req *hdfs.GetSnapshotListingRequestProto) (*hdfs.GetSnapshotListingResponseProto, error) {
	u := c.caller(ctx)
	var snaps []namespace.SnapshotInfo
	var err error
	c.ns.read(func(t *namespace.Tree) { snaps, err = t.Snapshots(u, req.GetSnapshotRoot()) })
	if err != nil {
		return nil, toRemote(err)
	}
	l := &hdfs.SnapshotListingProto{}
	for _, s := range snaps {
		l.SnapshotListing = append(l.SnapshotListing, &hdfs.SnapshotStatusProto{
			DirStatus:      fileStatus(s.Info, []byte(s.Name)),
			SnapshotID:     proto.Uint32(uint32(s.ID)),
			ParentFullpath: []byte(s.Root),
			IsDeleted:      proto.Bool(false),
		})
	}
	return &hdfs.GetSnapshotListingResponseProto{SnapshotList: l}, nil
}

func (c *clientRPC) allowSnapshot(ctx context.Context, req *hdfs.AllowSnapshotRequestProto) (*hdfs.AllowSnapshotResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanAllowSnapshot(u, req.GetSnapshotRoot())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.AllowSnapshotResponseProto{}, nil
}

func (c *clientRPC) disallowSnapshot(ctx context.Context, req *hdfs.DisallowSnapshotRequestProto) (*hdfs.DisallowSnapshotResponseProto, error) {
	u := c.caller(ctx)
	err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
		return t.PlanDisallowSnapshot(u, req.GetSnapshotRoot())
	})
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.DisallowSnapshotResponseProto{}, nil
}

func (c *clientRPC) getSnapshottableDirListing(ctx context.Context, _ *hdfs.GetSnapshottableDirListingRequestProto) (*hdfs.GetSnapshottableDirListingResponseProto, error) {
	u := c.caller(ctx)
	var dirs []namespace.SnapshottableDir
	var counts []int
	c.ns.read(func(t *namespace.Tree) {
		dirs = t.SnapshottableDirs(u)
		for _, d := range dirs {
			counts = append(counts, t.NumSnapshots(d.Path))
		}
	})
	if len(dirs) == 0 {
		return &hdfs.GetSnapshottableDirListingResponseProto{}, nil
	}
	l := &hdfs.SnapshottableDirectoryListingProto{}
	for i, d := range dirs {
		parent, name := path.Split(d.Path)
		if d.Path == "/" {
			parent, name = "", ""
		} else if len(parent) > 1 {
			parent = parent[:len(parent)-1]
		}
		l.SnapshottableDirListing = append(l.SnapshottableDirListing, &hdfs.SnapshottableDirectoryStatusProto{
			DirStatus:      fileStatus(d.Info, []byte(name)),
			SnapshotQuota:  proto.Uint32(namespace.DefaultSnapshotQuota),
			SnapshotNumber: proto.Uint32(uint32(counts[i])),
			ParentFullpath: []byte(parent),
		})
	}
	return &hdfs.GetSnapshottableDirListingResponseProto{SnapshottableDirList: l}, nil
}
