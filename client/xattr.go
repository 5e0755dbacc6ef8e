package client

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// XAttr is one extended attribute: its name with the namespace prefix
// ("user.color"; the namespaces are user, trusted, security, system and
// raw) and its value (nil when it has none).
type XAttr struct {
	Name  string
	Value []byte
}

// XAttrFlag says whether SetXAttr may create an attribute, replace one, or
// both (HDFS's XAttrSetFlag).
type XAttrFlag uint32

// The flags of SetXAttr.
const (
	XAttrCreate  XAttrFlag = 1
	XAttrReplace XAttrFlag = 2
)

// ErrXAttrName: an attribute name without a known namespace prefix.
var ErrXAttrName = errors.New("An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")

var xattrNamespaces = [...]string{"user", "trusted", "security", "system", "raw"}

// xattrProto splits "user.color" as HDFS clients do (the prefix is
// case-insensitive).
func xattrProto(name string, value []byte) (*hdfs.XAttrProto, error) {
	i := strings.IndexByte(name, '.')
	if i > 0 && i+1 < len(name) {
		p := strings.ToLower(name[:i])
		for ns, n := range xattrNamespaces {
			if p == n {
				return &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_XAttrNamespaceProto(ns).Enum(), Name: proto.String(name[i+1:]), Value: value}, nil
			}
		}
	}
	return nil, ErrXAttrName
}

func xattrsFrom(ps []*hdfs.XAttrProto) []XAttr {
	out := make([]XAttr, 0, len(ps))
	for _, p := range ps {
		ns := int(p.GetNamespace())
		prefix := "unknown"
		if ns >= 0 && ns < len(xattrNamespaces) {
			prefix = xattrNamespaces[ns]
		}
		out = append(out, XAttr{Name: prefix + "." + p.GetName(), Value: p.Value})
	}
	return out
}

// SetXAttr sets the extended attribute attr of name to value; flag says
// whether it may create it, replace it, or both.
func (f *FileSystem) SetXAttr(ctx context.Context, name, attr string, value []byte, flag XAttrFlag) error {
	const op = "setxattr"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	x, err := xattrProto(attr, value)
	if err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if x.Value == nil {
		x.Value = []byte{}
	}
	req := &hdfs.SetXAttrRequestProto{Src: proto.String(p), XAttr: x, Flag: proto.Uint32(uint32(flag))}
	if err := f.call(ctx, "setXAttr", req, &hdfs.SetXAttrResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// RemoveXAttr removes the extended attribute attr of name.
func (f *FileSystem) RemoveXAttr(ctx context.Context, name, attr string) error {
	const op = "removexattr"
	p, err := f.resolve(op, name)
	if err != nil {
		return err
	}
	x, err := xattrProto(attr, nil)
	if err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	req := &hdfs.RemoveXAttrRequestProto{Src: proto.String(p), XAttr: x}
	if err := f.call(ctx, "removeXAttr", req, &hdfs.RemoveXAttrResponseProto{}); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// GetXAttrs returns the named extended attributes of name, in the order
// asked, or all those the caller may see when attrs is empty.
func (f *FileSystem) GetXAttrs(ctx context.Context, name string, attrs ...string) ([]XAttr, error) {
	const op = "getxattr"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	req := &hdfs.GetXAttrsRequestProto{Src: proto.String(p)}
	for _, a := range attrs {
		x, err := xattrProto(a, nil)
		if err != nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: err}
		}
		req.XAttrs = append(req.XAttrs, x)
	}
	resp := &hdfs.GetXAttrsResponseProto{}
	if err := f.call(ctx, "getXAttrs", req, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return xattrsFrom(resp.GetXAttrs()), nil
}

// ListXAttrs returns every extended attribute of name the caller may see,
// with its value.
func (f *FileSystem) ListXAttrs(ctx context.Context, name string) ([]XAttr, error) {
	const op = "listxattr"
	p, err := f.resolve(op, name)
	if err != nil {
		return nil, err
	}
	resp := &hdfs.ListXAttrsResponseProto{}
	if err := f.call(ctx, "listXAttrs", &hdfs.ListXAttrsRequestProto{Src: proto.String(p)}, resp); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return xattrsFrom(resp.GetXAttrs()), nil
}
