package client

import (
	"context"
	"io/fs"
	"iter"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// ReadDir returns the entries of directory name in the NameNode's order
// (by name). It pages through getListing until the NameNode reports no
// remaining entries. For a file, the NameNode answers with the file
// itself.
func (f *FileSystem) ReadDir(ctx context.Context, name string) ([]*FileInfo, error) {
	var out []*FileInfo
	for fi, err := range f.ListDir(ctx, name) {
		if err != nil {
			return out, err
		}
		out = append(out, fi)
	}
	return out, nil
}

// ListDir is ReadDir as an iterator: it asks for the next page only when
// the previous one is consumed. After an error the sequence ends.
func (f *FileSystem) ListDir(ctx context.Context, name string) iter.Seq2[*FileInfo, error] {
	return func(yield func(*FileInfo, error) bool) {
		const op = "readdir"
		p, err := f.resolve(op, name)
		if err != nil {
			yield(nil, err)
			return
		}
		startAfter := []byte{}
		for {
			req := &hdfs.GetListingRequestProto{Src: proto.String(p), StartAfter: startAfter, NeedLocation: proto.Bool(false)}
			resp := &hdfs.GetListingResponseProto{}
			if err := f.call(ctx, "getListing", req, resp); err != nil {
				yield(nil, &fs.PathError{Op: op, Path: name, Err: err})
				return
			}
			dl := resp.DirList
			if dl == nil {
				yield(nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist})
				return
			}
			for _, s := range dl.PartialListing {
				local := string(s.GetPath())
				full := p
				if local != "" {
					full = path.Join(p, local)
				}
				if !yield(newFileInfo(full, s), nil) {
					return
				}
			}
			if dl.GetRemainingEntries() == 0 {
				return
			}
			n := len(dl.PartialListing)
			if n == 0 {
				// More entries announced but none sent: asking again with
				// the same startAfter would loop forever.
				yield(nil, &fs.PathError{Op: op, Path: name, Err: ErrBadResponse})
				return
			}
			startAfter = dl.PartialListing[n-1].GetPath()
		}
	}
}
