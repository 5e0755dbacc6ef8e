package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// registerXAttrCalls serves the extended-attribute calls of ClientProtocol.
func registerXAttrCalls(c *clientRPC, s *ipc.Service) {
	handle(c.nn, s, "setXAttr", c.setXAttr)
	handle(c.nn, s, "removeXAttr", c.removeXAttr)
	handle(c.nn, s, "getXAttrs", c.getXAttrs)
	handle(c.nn, s, "listXAttrs", c.listXAttrs)
}

// xattrFromProto converts an XAttrProto; nil when absent.
func xattrFromProto(x *hdfs.XAttrProto) (op.XAttr, error) {
	if x == nil {
		return op.XAttr{}, remoteerr.New(remoteerr.ClassIllegalArgument, "no xattr in the request")
	}
	ns := x.GetNamespace()
	if ns < hdfs.XAttrProto_USER || ns > hdfs.XAttrProto_RAW {
		return op.XAttr{}, remoteerr.New(remoteerr.ClassIllegalArgument, "unknown xattr namespace %d", ns)
	}
	return op.XAttr{NS: uint8(ns), Name: x.GetName(), Value: x.Value}, nil
}

func xattrsToProto(xs []op.XAttr) []*hdfs.XAttrProto {
	out := make([]*hdfs.XAttrProto, len(xs))
	for i, x := range xs {
		out[i] = &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_XAttrNamespaceProto(x.NS).Enum(), Name: proto.String(x.Name), Value: x.Value}
	}
	return out
}

func (c *clientRPC) setXAttr(ctx context.Context, req *hdfs.SetXAttrRequestProto) (*hdfs.SetXAttrResponseProto, error) {
	x, err := xattrFromProto(req.GetXAttr())
	if err != nil {
		return nil, err
	}
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.SetXAttrResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			return t.PlanSetXAttr(u, req.GetSrc(), x, req.GetFlag())
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.SetXAttrResponseProto{}, nil
	})
}

func (c *clientRPC) removeXAttr(ctx context.Context, req *hdfs.RemoveXAttrRequestProto) (*hdfs.RemoveXAttrResponseProto, error) {
	x, err := xattrFromProto(req.GetXAttr())
	if err != nil {
		return nil, err
	}
	return atMostOnce(c, ctx, func(ctx context.Context) (*hdfs.RemoveXAttrResponseProto, error) {
		u := c.caller(ctx)
		err := c.ns.mutate(ctx, func(t *namespace.Tree, now int64) ([]op.Op, error) {
			return t.PlanRemoveXAttr(u, req.GetSrc(), x)
		})
		if err != nil {
			return nil, toRemote(err)
		}
		return &hdfs.RemoveXAttrResponseProto{}, nil
	})
}

func (c *clientRPC) getXAttrs(ctx context.Context, req *hdfs.GetXAttrsRequestProto) (*hdfs.GetXAttrsResponseProto, error) {
	names := make([]op.XAttr, 0, len(req.GetXAttrs()))
	for _, p := range req.GetXAttrs() {
		x, err := xattrFromProto(p)
		if err != nil {
			return nil, err
		}
		names = append(names, x)
	}
	u := c.caller(ctx)
	var xs []op.XAttr
	var err error
	c.ns.read(func(t *namespace.Tree) { xs, err = t.GetXAttrs(u, req.GetSrc(), names) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.GetXAttrsResponseProto{XAttrs: xattrsToProto(xs)}, nil
}

func (c *clientRPC) listXAttrs(ctx context.Context, req *hdfs.ListXAttrsRequestProto) (*hdfs.ListXAttrsResponseProto, error) {
	u := c.caller(ctx)
	var xs []op.XAttr
	var err error
	c.ns.read(func(t *namespace.Tree) { xs, err = t.ListXAttrs(u, req.GetSrc()) })
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.ListXAttrsResponseProto{XAttrs: xattrsToProto(xs)}, nil
}
