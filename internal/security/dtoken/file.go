package dtoken

import (
	"fmt"
	"github.com/hdfsgo/hdfsgo/internal/security/writable"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

// Token storage files (what `hdfs fetchdt` writes and
// HADOOP_TOKEN_FILE_LOCATION names): Hadoop's Credentials in its Writable
// form — "HDTS", version byte 0, vint token count, per token the alias
// (its service) as Text and the token (vint identifier length and bytes,
// vint password length and bytes, kind and service as Text), then vint 0
// secret keys.

const (
	fileMagic   = "HDTS"
	fileVersion = 0
	// MaxTokenFile bounds the token files ReadTokenFile accepts.
	MaxTokenFile = 1 << 20
)

// MarshalTokenFile encodes tokens as a token storage file.
func MarshalTokenFile(toks []*common.TokenProto) []byte {
	b := append([]byte(fileMagic), fileVersion)
	b = writable.AppendVLong(b, int64(len(toks)))
	for _, t := range toks {
		b = writable.AppendText(b, t.GetService())
		b = writable.AppendText(b, string(t.GetIdentifier()))
		b = writable.AppendText(b, string(t.GetPassword()))
		b = writable.AppendText(b, t.GetKind())
		b = writable.AppendText(b, t.GetService())
	}
	return writable.AppendVLong(b, 0)
}

// UnmarshalTokenFile decodes a token storage file of the Writable form;
// secret keys in it are skipped.
func UnmarshalTokenFile(b []byte) ([]*common.TokenProto, error) {
	if len(b) > MaxTokenFile {
		return nil, fmt.Errorf("token file of %d bytes, the limit is %d", len(b), MaxTokenFile)
	}
	if len(b) < 5 || string(b[:4]) != fileMagic {
		return nil, fmt.Errorf("not a token storage file (no %s magic)", fileMagic)
	}
	if b[4] != fileVersion {
		return nil, fmt.Errorf("token storage file version %d is not supported (this build reads the Writable form, version %d)", b[4], fileVersion)
	}
	r := writable.NewReader(b, 5, ErrMalformed)
	n := r.VLong()
	if n < 0 || n > int64(len(b)) {
		return nil, fmt.Errorf("token storage file: bad token count %d", n)
	}
	var toks []*common.TokenProto
	for i := int64(0); i < n && r.Err == nil; i++ {
		r.Text() // alias
		t := &common.TokenProto{Identifier: []byte(r.Text()), Password: []byte(r.Text())}
		t.Kind, t.Service = proto.String(r.Text()), proto.String(r.Text())
		toks = append(toks, t)
	}
	keys := r.VLong()
	if keys < 0 || keys > int64(len(b)) {
		r.Fail()
	}
	for i := int64(0); i < keys && r.Err == nil; i++ {
		r.Text() // alias
		r.Text() // secret
	}
	if r.Err == nil && r.Off != len(b) {
		return nil, fmt.Errorf("token storage file: %d trailing bytes", len(b)-r.Off)
	}
	if r.Err != nil {
		return nil, fmt.Errorf("token storage file: %w", r.Err)
	}
	return toks, nil
}
