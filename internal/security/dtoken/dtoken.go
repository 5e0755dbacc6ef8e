// Package dtoken is the wire side of HDFS delegation tokens: the
// identifier (Hadoop's DelegationTokenIdentifier) in its Writable form,
// the HMAC-SHA1 password, and the description Hadoop prints in its
// messages. The tokens' state lives in the NameNode's namespace (package
// namespace), which changes it only through edit-log ops.
package dtoken

import (
	"crypto/hmac"
	"crypto/sha1"
	"errors"
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
)

// Kind is the token kind of HDFS delegation tokens.
const Kind = "HDFS_DELEGATION_TOKEN"

// identifierVersion is the first byte of every identifier.
const identifierVersion = 0

// Marshal encodes an identifier as Hadoop does: version byte 0, owner,
// renewer and real user as Text, vlong issue and max dates, vint sequence
// number and master key id.
func Marshal(id op.DelegationTokenID) []byte {
	b := []byte{identifierVersion}
	b = appendText(b, id.Owner)
	b = appendText(b, id.Renewer)
	b = appendText(b, id.RealUser)
	b = appendVLong(b, id.IssueDate)
	b = appendVLong(b, id.MaxDate)
	b = appendVLong(b, int64(id.SequenceNumber))
	return appendVLong(b, int64(id.MasterKeyID))
}

// MaxIdentifierLen bounds the identifiers Unmarshal accepts.
const MaxIdentifierLen = 64 << 10

// ErrMalformed: an identifier that does not decode.
var ErrMalformed = errors.New("malformed delegation token identifier")

// Unmarshal decodes an identifier; the whole input must be used.
func Unmarshal(b []byte) (op.DelegationTokenID, error) {
	var id op.DelegationTokenID
	if len(b) == 0 || len(b) > MaxIdentifierLen {
		return id, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	if b[0] != identifierVersion {
		return id, fmt.Errorf("%w: unknown version %d", ErrMalformed, b[0])
	}
	r := &reader{b: b, off: 1}
	id.Owner, id.Renewer, id.RealUser = r.text(), r.text(), r.text()
	id.IssueDate, id.MaxDate = r.vlong(), r.vlong()
	id.SequenceNumber, id.MasterKeyID = r.vint(), r.vint()
	if r.err == nil && r.off != len(b) {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.off)
	}
	return id, r.err
}

// Password is the HMAC-SHA1 of the identifier's bytes under the master
// key's secret.
func Password(secret, identifier []byte) []byte {
	m := hmac.New(sha1.New, secret)
	m.Write(identifier)
	return m.Sum(nil)
}

// String describes a token as Hadoop's messages do.
func String(id op.DelegationTokenID) string {
	return fmt.Sprintf("(token for %s: %s owner=%s, renewer=%s, realUser=%s, issueDate=%d, maxDate=%d, sequenceNumber=%d, masterKeyId=%d)",
		id.Owner, Kind, id.Owner, id.Renewer, id.RealUser, id.IssueDate, id.MaxDate, id.SequenceNumber, id.MasterKeyID)
}

// Writable encoding (WritableUtils' zero-compressed vlong).

func appendVLong(b []byte, i int64) []byte {
	if i >= -112 && i <= 127 {
		return append(b, byte(i))
	}
	l := -112
	if i < 0 {
		i = ^i
		l = -120
	}
	for t := i; t != 0; t >>= 8 {
		l--
	}
	b = append(b, byte(l))
	n := -(l + 112)
	if n > 8 {
		n = -(l + 120)
	}
	for idx := n; idx != 0; idx-- {
		b = append(b, byte(i>>((idx-1)*8)))
	}
	return b
}

func appendText(b []byte, s string) []byte {
	b = appendVLong(b, int64(len(s)))
	return append(b, s...)
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) vlong() int64 {
	if r.err != nil || r.off >= len(r.b) {
		r.fail()
		return 0
	}
	first := int8(r.b[r.off])
	r.off++
	if first >= -112 {
		return int64(first)
	}
	neg := first < -120
	n := int(-112 - int(first))
	if neg {
		n = int(-120 - int(first))
	}
	if n > 8 || r.off+n > len(r.b) {
		r.fail()
		return 0
	}
	var v int64
	for _, c := range r.b[r.off : r.off+n] {
		v = v<<8 | int64(c)
	}
	r.off += n
	if neg {
		v = ^v
	}
	return v
}

func (r *reader) vint() int32 {
	v := r.vlong()
	if v < -1<<31 || v >= 1<<31 {
		r.fail()
	}
	return int32(v)
}

func (r *reader) text() string {
	n := r.vlong()
	if r.err != nil || n < 0 || n > int64(len(r.b)-r.off) {
		r.fail()
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = ErrMalformed
	}
}
