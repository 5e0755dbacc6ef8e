package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"
)

// safeModeVerbs are Hadoop's words for an operation refused in safe mode
// ("Cannot set permission for /f. Name node is in safe mode."), by RPC
// method; the path of the request follows them.
var safeModeVerbs = map[string]string{
	"setPermission":    "Cannot set permission for ",
	"setOwner":         "Cannot set owner for ",
	"setTimes":         "Cannot set times ",
	"setReplication":   "Cannot set replication for ",
	"create":           "Cannot create file",
	"append":           "Cannot append to file",
	"mkdirs":           "Cannot create directory ",
	"delete":           "Cannot delete ",
	"rename":           "Cannot rename ",
	"rename2":          "Cannot rename ",
	"concat":           "Cannot concat ",
	"truncate":         "Cannot truncate for ",
	"addBlock":         "Cannot add block to ",
	"complete":         "Cannot complete file ",
	"setQuota":         "Cannot set quota on ",
	"createSymlink":    "Cannot create symlink ",
	"recoverLease":     "Cannot recover the lease of ",
	"abandonBlock":     "Cannot abandon block ",
	"fsync":            "Cannot fsync file ",
	"updatePipeline":   "Pipeline not updated",
	"setStoragePolicy": "Cannot set storage policy for ",
}

type safeModeOpKey struct{}

// withSafeModeOp records in ctx how a refusal in safe mode names the call
// of method with req.
func withSafeModeOp(ctx context.Context, method string, req proto.Message) context.Context {
	verb, ok := safeModeVerbs[method]
	if !ok {
		return ctx
	}
	var p string
	switch r := req.(type) {
	case interface{ GetSrc() string }:
		p = r.GetSrc()
	case interface{ GetTrg() string }:
		p = r.GetTrg()
	case interface{ GetPath() string }:
		p = r.GetPath()
	case interface{ GetLink() string }:
		p = r.GetLink()
	}
	if method == "updatePipeline" {
		p = ""
	}
	return context.WithValue(ctx, safeModeOpKey{}, verb+p)
}

// safeModeOp is the text withSafeModeOp recorded, or Hadoop's generic
// "Cannot modify the namespace".
func safeModeOp(ctx context.Context) string {
	if s, ok := ctx.Value(safeModeOpKey{}).(string); ok {
		return s
	}
	return "Cannot modify the namespace"
}
