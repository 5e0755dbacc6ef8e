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
	"github.com/hdfsgo/hdfsgo/internal/security/writable"

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
	b = writable.AppendText(b, id.Owner)
	b = writable.AppendText(b, id.Renewer)
	b = writable.AppendText(b, id.RealUser)
	b = writable.AppendVLong(b, id.IssueDate)
	b = writable.AppendVLong(b, id.MaxDate)
	b = writable.AppendVLong(b, int64(id.SequenceNumber))
	return writable.AppendVLong(b, int64(id.MasterKeyID))
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
	r := writable.NewReader(b, 1, ErrMalformed)
	id.Owner, id.Renewer, id.RealUser = r.Text(), r.Text(), r.Text()
	id.IssueDate, id.MaxDate = r.VLong(), r.VLong()
	id.SequenceNumber, id.MasterKeyID = r.VInt(), r.VInt()
	if r.Err == nil && r.Off != len(b) {
		r.Err = fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-r.Off)
	}
	return id, r.Err
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
