package namenode

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"github.com/hdfsgo/hdfsgo/internal/webhdfs"
)

// serveFeature answers the extended-attribute, storage-policy and ACL
// operations of WebHDFS; handled is false for any other op.
func (h *webHDFS) serveFeature(ctx context.Context, w http.ResponseWriter, req *webhdfs.Request) (handled bool, err error) {
	switch req.Op {
	case "SETXATTR", "REMOVEXATTR", "GETXATTRS", "LISTXATTRS":
		return true, h.serveXAttr(ctx, w, req)
	case "SETSTORAGEPOLICY", "UNSETSTORAGEPOLICY", "GETSTORAGEPOLICY", "GETALLSTORAGEPOLICY":
		return true, h.servePolicy(ctx, w, req)
	case "MODIFYACLENTRIES", "REMOVEACLENTRIES", "REMOVEDEFAULTACL", "REMOVEACL", "SETACL":
		return true, h.serveACL(ctx, w, req)
	}
	return false, nil
}

// xattrProto is a prefixed name ("user.a") as an XAttrProto.
func xattrProto(name string) (*hdfs.XAttrProto, error) {
	x, err := namespace.ParseXAttrName(name)
	if err != nil {
		return nil, toRemote(err)
	}
	return &hdfs.XAttrProto{Namespace: hdfs.XAttrProto_XAttrNamespaceProto(x.NS).Enum(), Name: proto.String(x.Name)}, nil
}

// oneXAttrName is the single xattr.name SETXATTR and REMOVEXATTR take.
func oneXAttrName(req *webhdfs.Request) (*hdfs.XAttrProto, error) {
	if len(req.XAttrNames) != 1 || req.XAttrNames[0] == "" {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "%s: exactly one xattr.name parameter is required", req.Op)
	}
	return xattrProto(req.XAttrNames[0])
}

// prefixedName is an XAttrProto's name with its namespace prefix.
func prefixedName(x *hdfs.XAttrProto) string {
	return strings.ToLower(x.GetNamespace().String()) + "." + x.GetName()
}

func (h *webHDFS) serveXAttr(ctx context.Context, w http.ResponseWriter, req *webhdfs.Request) error {
	c := h.c
	p := proto.String(req.Path)
	switch req.Op {
	case "SETXATTR":
		x, err := oneXAttrName(req)
		if err != nil {
			return err
		}
		if req.XAttrValue != "" {
			if x.Value, err = webhdfs.DecodeXAttrValue(req.XAttrValue); err != nil {
				return err
			}
		}
		if _, err := webCall(ctx, h, "setXAttr", c.setXAttr, &hdfs.SetXAttrRequestProto{Src: p, XAttr: x, Flag: proto.Uint32(req.XAttrFlag)}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "REMOVEXATTR":
		x, err := oneXAttrName(req)
		if err != nil {
			return err
		}
		if _, err := webCall(ctx, h, "removeXAttr", c.removeXAttr, &hdfs.RemoveXAttrRequestProto{Src: p, XAttr: x}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "GETXATTRS":
		var names []*hdfs.XAttrProto
		for _, n := range req.XAttrNames {
			x, err := xattrProto(n)
			if err != nil {
				return err
			}
			names = append(names, x)
		}
		resp, err := webCall(ctx, h, "getXAttrs", c.getXAttrs, &hdfs.GetXAttrsRequestProto{Src: p, XAttrs: names})
		if err != nil {
			return err
		}
		out := webhdfs.XAttrsBody{XAttrs: []webhdfs.XAttr{}}
		for _, x := range resp.GetXAttrs() {
			e := webhdfs.XAttr{Name: prefixedName(x)}
			if x.Value != nil {
				v := webhdfs.EncodeXAttrValue(x.Value, req.XAttrEncoding)
				e.Value = &v
			}
			out.XAttrs = append(out.XAttrs, e)
		}
		webhdfs.WriteJSON(w, http.StatusOK, out)
	case "LISTXATTRS":
		resp, err := webCall(ctx, h, "listXAttrs", c.listXAttrs, &hdfs.ListXAttrsRequestProto{Src: p})
		if err != nil {
			return err
		}
		names := []string{}
		for _, x := range resp.GetXAttrs() {
			names = append(names, prefixedName(x))
		}
		webhdfs.WriteJSON(w, http.StatusOK, webhdfs.XAttrNamesBody{XAttrNames: webhdfs.XAttrNamesText(names)})
	}
	return nil
}

// jsonPolicy is a BlockStoragePolicyProto in WebHDFS's JSON form.
func jsonPolicy(p *hdfs.BlockStoragePolicyProto) webhdfs.StoragePolicy {
	names := func(st *hdfs.StorageTypesProto) []string {
		out := []string{}
		for _, t := range st.GetStorageTypes() {
			out = append(out, t.String())
		}
		return out
	}
	ns, _ := namespace.StoragePolicyByID(uint8(p.GetPolicyId()))
	return webhdfs.StoragePolicy{
		ID: int(p.GetPolicyId()), Name: p.GetName(), StorageTypes: names(p.GetCreationPolicy()),
		CreationFallbacks: names(p.GetCreationFallbackPolicy()), ReplicationFallbacks: names(p.GetReplicationFallbackPolicy()),
		CopyOnCreateFile: ns.CopyOnCreateFile,
	}
}

func (h *webHDFS) servePolicy(ctx context.Context, w http.ResponseWriter, req *webhdfs.Request) error {
	c := h.c
	p := proto.String(req.Path)
	switch req.Op {
	case "SETSTORAGEPOLICY":
		if req.StoragePolicy == "" {
			return remoteerr.New(remoteerr.ClassIllegalArgument, "Storage policy name is empty.")
		}
		if _, err := webCall(ctx, h, "setStoragePolicy", c.setStoragePolicy, &hdfs.SetStoragePolicyRequestProto{Src: p, PolicyName: proto.String(req.StoragePolicy)}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "UNSETSTORAGEPOLICY":
		if _, err := webCall(ctx, h, "unsetStoragePolicy", c.unsetStoragePolicy, &hdfs.UnsetStoragePolicyRequestProto{Src: p}); err != nil {
			return err
		}
		webhdfs.Empty(w)
	case "GETSTORAGEPOLICY":
		resp, err := webCall(ctx, h, "getStoragePolicy", c.getStoragePolicy, &hdfs.GetStoragePolicyRequestProto{Path: p})
		if err != nil {
			return err
		}
		webhdfs.WriteJSON(w, http.StatusOK, webhdfs.StoragePolicyBody{BlockStoragePolicy: jsonPolicy(resp.GetStoragePolicy())})
	case "GETALLSTORAGEPOLICY":
		resp, err := webCall(ctx, h, "getStoragePolicies", c.getStoragePolicies, &hdfs.GetStoragePoliciesRequestProto{})
		if err != nil {
			return err
		}
		var out webhdfs.StoragePoliciesBody
		out.BlockStoragePolicies.BlockStoragePolicy = []webhdfs.StoragePolicy{}
		for _, pol := range resp.GetPolicies() {
			out.BlockStoragePolicies.BlockStoragePolicy = append(out.BlockStoragePolicies.BlockStoragePolicy, jsonPolicy(pol))
		}
		webhdfs.WriteJSON(w, http.StatusOK, out)
	}
	return nil
}

// aclSpecProto reads the request's aclspec into AclEntryProtos.
func aclSpecProto(req *webhdfs.Request, withPerm bool) ([]*hdfs.AclEntryProto, error) {
	if req.ACLSpec == "" {
		return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "%s: the aclspec parameter is missing", req.Op)
	}
	es, err := webhdfs.ParseACLSpec(req.ACLSpec, withPerm)
	if err != nil {
		return nil, err
	}
	out := make([]*hdfs.AclEntryProto, 0, len(es))
	for _, e := range es {
		p := &hdfs.AclEntryProto{
			Type:        hdfs.AclEntryProto_AclEntryTypeProto(e.Type).Enum(),
			Scope:       hdfs.AclEntryProto_AclEntryScopeProto(e.Scope).Enum(),
			Permissions: hdfs.AclEntryProto_FsActionProto(e.Perm).Enum(),
		}
		if e.Name != "" {
			p.Name = proto.String(e.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

func (h *webHDFS) serveACL(ctx context.Context, w http.ResponseWriter, req *webhdfs.Request) error {
	c := h.c
	p := proto.String(req.Path)
	var err error
	switch req.Op {
	case "MODIFYACLENTRIES":
		var spec []*hdfs.AclEntryProto
		if spec, err = aclSpecProto(req, true); err == nil {
			_, err = webCall(ctx, h, "modifyAclEntries", c.modifyAclEntries, &hdfs.ModifyAclEntriesRequestProto{Src: p, AclSpec: spec})
		}
	case "REMOVEACLENTRIES":
		var spec []*hdfs.AclEntryProto
		if spec, err = aclSpecProto(req, false); err == nil {
			_, err = webCall(ctx, h, "removeAclEntries", c.removeAclEntries, &hdfs.RemoveAclEntriesRequestProto{Src: p, AclSpec: spec})
		}
	case "SETACL":
		var spec []*hdfs.AclEntryProto
		if spec, err = aclSpecProto(req, true); err == nil {
			_, err = webCall(ctx, h, "setAcl", c.setAcl, &hdfs.SetAclRequestProto{Src: p, AclSpec: spec})
		}
	case "REMOVEDEFAULTACL":
		_, err = webCall(ctx, h, "removeDefaultAcl", c.removeDefaultAcl, &hdfs.RemoveDefaultAclRequestProto{Src: p})
	case "REMOVEACL":
		_, err = webCall(ctx, h, "removeAcl", c.removeAcl, &hdfs.RemoveAclRequestProto{Src: p})
	}
	if err != nil {
		return err
	}
	webhdfs.Empty(w)
	return nil
}

// webTypeQuota is WebHDFS's "typeQuota" object: for each storage type with
// a quota, its quota and the space consumed on it.
func webTypeQuota(infos *hdfs.StorageTypeQuotaInfosProto) map[string]any {
	out := map[string]any{}
	for _, ti := range infos.GetTypeQuotaInfo() {
		if q := int64(ti.GetQuota()); q >= 0 {
			out[ti.GetType().String()] = map[string]int64{"quota": q, "consumed": int64(ti.GetConsumed())}
		}
	}
	return out
}
