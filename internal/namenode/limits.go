package namenode

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Limits on what one ClientProtocol request may carry, checked once, at the
// RPC edge, before a handler sees the request: a path or a client name that
// passes here is small enough for every later step (planning, the edit log's
// records, the image). docs/SECURITY.md lists them with what a client over
// each one sees.
const (
	// MaxPathLength and MaxPathDepth are Hadoop's fixed limits on a path
	// (NameNodeRpcServer's MAX_PATH_LENGTH and MAX_PATH_DEPTH), in
	// characters and in components.
	MaxPathLength = 8000
	MaxPathDepth  = 1000
	// MaxClientNameLength bounds a client name (the lease holder recorded
	// in the edit log) and the caller's user name (the owner recorded for
	// what it creates). Hadoop has no explicit limit; stock clients send
	// names of a few dozen characters.
	MaxClientNameLength = 1024
	// MaxStringLength bounds every other string field of a request
	// (storage ids, host names, policy names, ...).
	MaxStringLength = 8000
)

// The request fields that hold paths and client names, by protobuf name;
// every ClientProtocol request spells them these ways.
var (
	pathFields = map[protoreflect.Name]bool{
		"src": true, "dst": true, "path": true, "trg": true, "srcs": true, "paths": true,
		"filename": true, "target": true, "link": true,
		"snapshotRoot": true, "snapshotPath": true, "snapshotDir": true,
	}
	clientNameFields = map[protoreflect.Name]bool{"clientName": true, "holder": true, "client": true}
)

// checkRequest applies the limits to every string field of req, nested
// messages included. Its cost is one pass over fields already decoded.
func checkRequest(method string, req proto.Message) error {
	// The most frequent calls are checked field by field without walking
	// the message by reflection (TestCheckRequestFastPath holds that each
	// case checks every string field the walk would, nested ones included,
	// with the walk's refusal).
	switch r := req.(type) {
	case *hdfs.GetFileInfoRequestProto:
		return checkPathLength(method, r.GetSrc())
	case *hdfs.GetBlockLocationsRequestProto:
		return checkPathLength(method, r.GetSrc())
	case *hdfs.GetListingRequestProto:
		return checkPathLength(method, r.GetSrc())
	case *hdfs.CreateRequestProto:
		return firstError(checkPathLength(method, r.GetSrc()),
			checkClientName(method, r.GetClientName()),
			checkOtherString(method, "ecPolicyName", r.GetEcPolicyName()),
			checkOtherString(method, "storagePolicy", r.GetStoragePolicy()))
	case *hdfs.MkdirsRequestProto:
		return checkPathLength(method, r.GetSrc())
	case *hdfs.DeleteRequestProto:
		return checkPathLength(method, r.GetSrc())
	case *hdfs.RenameRequestProto:
		return firstError(checkPathLength(method, r.GetSrc()), checkPathLength(method, r.GetDst()))
	case *hdfs.Rename2RequestProto:
		return firstError(checkPathLength(method, r.GetSrc()), checkPathLength(method, r.GetDst()))
	case *hdfs.CompleteRequestProto:
		return firstError(checkPathLength(method, r.GetSrc()),
			checkClientName(method, r.GetClientName()),
			checkOtherString(method, "poolId", r.GetLast().GetPoolId()))
	}
	return checkFields(method, req.ProtoReflect())
}

// firstError returns the first non-nil error of errs, the one the
// reflective walk (in field order) would have returned.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkFields(method string, m protoreflect.Message) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.StringKind && fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkString(method, fd.Name(), l.Get(i).String())
			}
		case fd.Kind() == protoreflect.StringKind && !fd.IsMap():
			err = checkString(method, fd.Name(), v.String())
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkFields(method, l.Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			err = checkFields(method, v.Message())
		}
		return err == nil
	})
	return err
}

func checkString(method string, field protoreflect.Name, s string) error {
	switch {
	case pathFields[field]:
		return checkPathLength(method, s)
	case clientNameFields[field]:
		return checkClientName(method, s)
	}
	return checkOtherString(method, field, s)
}

func checkClientName(method, s string) error {
	if len(s) > MaxClientNameLength {
		return remoteerr.New(remoteerr.ClassIOException, "%s: client name too long: %d bytes, the limit is %d", method, len(s), MaxClientNameLength)
	}
	return nil
}

func checkOtherString(method string, field protoreflect.Name, s string) error {
	if len(s) > MaxStringLength {
		return remoteerr.New(remoteerr.ClassIOException, "%s: field %s too long: %d bytes, the limit is %d", method, field, len(s), MaxStringLength)
	}
	return nil
}

// checkPathLength is Hadoop's checkPathLength with its message: at most
// MaxPathLength characters and MaxPathDepth components.
func checkPathLength(method, p string) error {
	// Counting runes reads at most 4 bytes per character, so a path far
	// beyond the limit is refused by its byte length alone.
	if len(p) > 4*MaxPathLength || utf8.RuneCountInString(p) > MaxPathLength || strings.Count(p, "/") > MaxPathDepth {
		return remoteerr.New(remoteerr.ClassIOException, "%s: Pathname too long.  Limit %d characters, %d levels.", method, MaxPathLength, MaxPathDepth)
	}
	return nil
}
