package imagetransfer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/storage"
)

// maxClusterIDLen bounds the cluster id of a storageInfo parameter (Hadoop's
// are "CID-" and a 36-character UUID).
const maxClusterIDLen = 256

// StorageInfo identifies the namespace a node's storage belongs to. Its wire
// form, the storageInfo parameter, is Hadoop's colon-separated
// "<layoutVersion>:<namespaceID>:<cTime>:<clusterID>", e.g.
// "-1001:1190184012:0:CID-5b0fb6c4-bd0f-4c8e-8f5e-4fd1bd0e5f60".
type StorageInfo struct {
	LayoutVersion int32
	NamespaceID   int32
	CTime         int64
	ClusterID     string
}

// StorageInfoOf returns the storage info recorded in a VERSION file.
func StorageInfoOf(v *storage.Version) StorageInfo {
	return StorageInfo{LayoutVersion: v.LayoutVersion, NamespaceID: v.NamespaceID, CTime: v.CTime, ClusterID: v.ClusterID}
}

// String returns the colon-separated wire form.
func (s StorageInfo) String() string {
	return strconv.FormatInt(int64(s.LayoutVersion), 10) + ":" +
		strconv.FormatInt(int64(s.NamespaceID), 10) + ":" +
		strconv.FormatInt(s.CTime, 10) + ":" + s.ClusterID
}

// ParseStorageInfo parses the colon-separated wire form. The error matches
// ErrBadRequest.
func ParseStorageInfo(v string) (StorageInfo, error) {
	si, why := parseStorageInfo(v)
	if why != "" {
		return si, fmt.Errorf("%w: %s", ErrBadRequest, why)
	}
	return si, nil
}

// parseStorageInfo parses v and says what is wrong with it ("" if nothing).
func parseStorageInfo(v string) (StorageInfo, string) {
	var si StorageInfo
	parts := strings.SplitN(v, ":", 5)
	if len(parts) != 4 {
		return si, fmt.Sprintf("storageInfo %q is not layoutVersion:namespaceID:cTime:clusterID", clip(v))
	}
	lv, err1 := strconv.ParseInt(parts[0], 10, 32)
	ns, err2 := strconv.ParseInt(parts[1], 10, 32)
	ct, err3 := strconv.ParseInt(parts[2], 10, 64)
	switch {
	case err1 != nil:
		return si, fmt.Sprintf("storageInfo layoutVersion %q is not a 32-bit integer", clip(parts[0]))
	case err2 != nil:
		return si, fmt.Sprintf("storageInfo namespaceID %q is not a 32-bit integer", clip(parts[1]))
	case err3 != nil:
		return si, fmt.Sprintf("storageInfo cTime %q is not a 64-bit integer", clip(parts[2]))
	}
	cid := parts[3]
	if cid == "" || len(cid) > maxClusterIDLen {
		return si, fmt.Sprintf("storageInfo clusterID must be 1 to %d bytes, have %d", maxClusterIDLen, len(cid))
	}
	for i := 0; i < len(cid); i++ {
		if c := cid[i]; c <= ' ' || c >= 0x7f {
			return si, fmt.Sprintf("storageInfo clusterID %q holds byte 0x%02x", clip(cid), c)
		}
	}
	return StorageInfo{LayoutVersion: int32(lv), NamespaceID: int32(ns), CTime: ct, ClusterID: cid}, ""
}

// differences names the fields in which s and o differ.
func (s StorageInfo) differences(o StorageInfo) []string {
	var d []string
	if s.LayoutVersion != o.LayoutVersion {
		d = append(d, "layoutVersion")
	}
	if s.NamespaceID != o.NamespaceID {
		d = append(d, "namespaceID")
	}
	if s.CTime != o.CTime {
		d = append(d, "cTime")
	}
	if s.ClusterID != o.ClusterID {
		d = append(d, "clusterID")
	}
	return d
}

// clip shortens outside input quoted in an error.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
