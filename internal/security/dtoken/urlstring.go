package dtoken

import (
	"encoding/base64"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/security/writable"
)

// A token's URL string (WebHDFS's delegation= and token= parameters,
// Hadoop's Token.encodeToUrlString): the token's Writable form — vint
// identifier length and bytes, vint password length and bytes, kind and
// service as Text — in URL-safe base64 without padding.

// MaxURLString bounds the URL strings DecodeURLString accepts.
const MaxURLString = 16 << 10

// EncodeURLString returns the URL string of a token.
func EncodeURLString(t *common.TokenProto) string {
	var b []byte
	b = writable.AppendText(b, string(t.GetIdentifier()))
	b = writable.AppendText(b, string(t.GetPassword()))
	b = writable.AppendText(b, t.GetKind())
	b = writable.AppendText(b, t.GetService())
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeURLString decodes a token's URL string (either base64 alphabet,
// padded or not, as Hadoop's decoder accepts).
func DecodeURLString(s string) (*common.TokenProto, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty token string", ErrMalformed)
	}
	if len(s) > MaxURLString {
		return nil, fmt.Errorf("%w: token string of %d bytes", ErrMalformed, len(s))
	}
	s = strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(s), "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: token string is not base64: %v", ErrMalformed, err)
	}
	r := writable.NewReader(b, 0, ErrMalformed)
	t := &common.TokenProto{Identifier: []byte(r.Text()), Password: []byte(r.Text())}
	t.Kind, t.Service = proto.String(r.Text()), proto.String(r.Text())
	if r.Err == nil && r.Off != len(b) {
		return nil, fmt.Errorf("%w: token string has %d trailing bytes", ErrMalformed, len(b)-r.Off)
	}
	if r.Err != nil {
		return nil, fmt.Errorf("token string: %w", r.Err)
	}
	return t, nil
}
