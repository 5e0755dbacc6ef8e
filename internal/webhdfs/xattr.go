package webhdfs

import (
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// DecodeXAttrValue reads xattr.value as HDFS clients write it: "text" in
// double quotes, 0x followed by hex digits, 0s followed by base64; any
// other string stands for its own bytes. The error is an
// IllegalArgumentException naming the bad value.
func DecodeXAttrValue(v string) ([]byte, error) {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		return []byte(v[1 : len(v)-1]), nil
	case len(v) >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'):
		b, err := hex.DecodeString(v[2:])
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "xattr.value %q is not valid hex: %v", v, err)
		}
		return b, nil
	case len(v) >= 2 && v[0] == '0' && (v[1] == 's' || v[1] == 'S'):
		b, err := base64.StdEncoding.DecodeString(v[2:])
		if err != nil {
			return nil, remoteerr.New(remoteerr.ClassIllegalArgument, "xattr.value %q is not valid base64: %v", v, err)
		}
		return b, nil
	}
	return []byte(v), nil
}

// EncodeXAttrValue writes a value in encoding ("TEXT" or "", "HEX",
// "BASE64") as Hadoop's WebHDFS answers GETXATTRS.
func EncodeXAttrValue(b []byte, encoding string) string {
	switch strings.ToUpper(encoding) {
	case "HEX":
		return "0x" + hex.EncodeToString(b)
	case "BASE64":
		return "0s" + base64.StdEncoding.EncodeToString(b)
	}
	return `"` + string(b) + `"`
}

// XAttr is one entry of GETXATTRS's answer; Value is nil for an attribute
// without a value.
type XAttr struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
}

// XAttrsBody is GETXATTRS's answer.
type XAttrsBody struct {
	XAttrs []XAttr `json:"XAttrs"`
}

// XAttrNamesBody is LISTXATTRS's answer: the names as a JSON array held in
// a JSON string, as Hadoop writes it.
type XAttrNamesBody struct {
	XAttrNames string `json:"XAttrNames"`
}
