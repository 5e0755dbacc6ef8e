package client

import (
	"context"
	"io/fs"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// CreateSnapshot takes a snapshot of the snapshottable directory dir and
// returns its path (dir/.snapshot/NAME). An empty name lets the NameNode
// choose one ("s" and the time).
func (f *FileSystem) CreateSnapshot(ctx context.Context, dir, name string) (string, error) {
	const op = "createsnapshot"
	p, err := f.resolve(op, dir)
	if err != nil {
		return "", err
	}
	req := &hdfs.CreateSnapshotRequestProto{SnapshotRoot: proto.String(p)}
	if name != "" {
		req.SnapshotName = proto.String(name)
	}
	var resp hdfs.CreateSnapshotResponseProto
	if err := f.call(ctx, "createSnapshot", req, &resp); err != nil {
		return "", &fs.PathError{Op: op, Path: dir, Err: err}
	}
	return resp.GetSnapshotPath(), nil
}

// DeleteSnapshot deletes the snapshot name of directory dir.
func (f *FileSystem) DeleteSnapshot(ctx context.Context, dir, name string) error {
	const op = "deletesnapshot"
	p, err := f.resolve(op, dir)
	if err != nil {
		return err
	}
	req := &hdfs.DeleteSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotName: proto.String(name)}
	if err := f.call(ctx, "deleteSnapshot", req, &hdfs.DeleteSnapshotResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: dir, Err: err}
	}
	return nil
}

// RenameSnapshot renames the snapshot oldName of directory dir to newName.
func (f *FileSystem) RenameSnapshot(ctx context.Context, dir, oldName, newName string) error {
	const op = "renamesnapshot"
	p, err := f.resolve(op, dir)
	if err != nil {
		return err
	}
	req := &hdfs.RenameSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotOldName: proto.String(oldName),
		SnapshotNewName: proto.String(newName)}
	if err := f.call(ctx, "renameSnapshot", req, &hdfs.RenameSnapshotResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: dir, Err: err}
	}
	return nil
}
