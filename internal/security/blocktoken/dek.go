package blocktoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
)

// Data encryption keys (dfs.encrypt.data.transfer): the credential of the
// DataTransferProtocol SASL handshake when data transfer is encrypted. A
// key is the HMAC-SHA1 of a random 8-byte nonce under a block key, so a
// DataNode holding the block keys recomputes it from (keyId, nonce)
// without having seen it; it lives as long as a block token.

// nonceLen is the length of a data encryption key's nonce (Hadoop's).
const nonceLen = 8

func dataEncryptionKey(k *Key, pool, algorithm string, expiry time.Time) *hdfs.DataEncryptionKeyProto {
	nonce := make([]byte, nonceLen)
	rand.Read(nonce)
	m := hmac.New(sha1.New, k.Secret)
	m.Write(nonce)
	d := &hdfs.DataEncryptionKeyProto{KeyId: proto.Uint32(uint32(k.ID)), BlockPoolId: proto.String(pool),
		Nonce: nonce, EncryptionKey: m.Sum(nil), ExpiryDate: proto.Uint64(uint64(expiry.UnixMilli()))}
	if algorithm != "" {
		d.EncryptionAlgorithm = proto.String(algorithm)
	}
	return d
}

// DataEncryptionKey issues a data encryption key for the block pool with
// the current key (getDataEncryptionKey). algorithm is
// dfs.encrypt.data.transfer.algorithm ("" when unset).
func (m *Manager) DataEncryptionKey(pool, algorithm string, now time.Time) *hdfs.DataEncryptionKeyProto {
	m.mu.Lock()
	k := m.current
	m.mu.Unlock()
	return dataEncryptionKey(k, pool, algorithm, now.Add(m.lifetime))
}

// DataEncryptionKey issues a data encryption key with the current key,
// for the connections a DataNode opens itself (nil when no key has
// arrived from the NameNode).
func (v *Verifier) DataEncryptionKey(pool, algorithm string, now time.Time) *hdfs.DataEncryptionKeyProto {
	v.mu.Lock()
	k, life := v.current, v.lifetime
	v.mu.Unlock()
	if k == nil {
		return nil
	}
	return dataEncryptionKey(k, pool, algorithm, now.Add(life))
}

// EncryptionKey recomputes the data encryption key of (keyID, nonce).
func (v *Verifier) EncryptionKey(keyID int32, nonce []byte) ([]byte, error) {
	v.mu.Lock()
	k := v.keys[keyID]
	cur := v.current
	v.mu.Unlock()
	if k == nil {
		curID := int32(-1)
		if cur != nil {
			curID = cur.ID
		}
		return nil, fmt.Errorf("Can't re-compute encryption key for nonce, since the required block key (keyID=%d) doesn't exist. Current key: %d", keyID, curID)
	}
	m := hmac.New(sha1.New, k.Secret)
	m.Write(nonce)
	return m.Sum(nil), nil
}

// Password recomputes the password of a block token's identifier (the
// DataTransferProtocol SASL handshake's credential), refusing an
// identifier that does not parse, has expired or names an unknown key.
func (v *Verifier) Password(identifier []byte, now time.Time) ([]byte, error) {
	id, err := Unmarshal(identifier)
	if err != nil {
		return nil, &AccessError{"Block token: " + err.Error()}
	}
	if now.UnixMilli() > id.ExpiryDate {
		return nil, &AccessError{fmt.Sprintf("Block token with %s is expired.", id)}
	}
	v.mu.Lock()
	k := v.keys[id.KeyID]
	v.mu.Unlock()
	if k == nil {
		return nil, &AccessError{fmt.Sprintf("Can't re-compute password for %s, since the required block key (keyID=%d) doesn't exist.", id, id.KeyID)}
	}
	return k.Password(identifier), nil
}

// CheckIdentifier verifies that a token identifier whose password the
// caller has already proven (a connection authenticated with the block
// token over SASL) grants mode on the block at now.
func (v *Verifier) CheckIdentifier(identifier []byte, pool string, blockID int64, mode Mode, now time.Time) error {
	id, err := Unmarshal(identifier)
	if err != nil {
		return &AccessError{"Block token: " + err.Error()}
	}
	switch {
	case id.BlockPoolID != pool || id.BlockID != blockID:
		return &AccessError{fmt.Sprintf("Block token with %s doesn't apply to block %s:blk_%d", id, pool, blockID)}
	case id.Modes&mode == 0:
		return &AccessError{fmt.Sprintf("Block token with %s doesn't have %s permission", id, strings.Trim(mode.String(), "[]"))}
	case now.UnixMilli() > id.ExpiryDate:
		return &AccessError{fmt.Sprintf("Block token with %s is expired.", id)}
	}
	return nil
}

// TokenPassword is the TOKEN method's password lookup for a block
// token (ClientDatanodeProtocol connections authenticate with the block
// token of the block they ask about): its password and its user.
func (v *Verifier) TokenPassword(identifier []byte, now time.Time) ([]byte, string, error) {
	pw, err := v.Password(identifier, now)
	if err != nil {
		return nil, "", err
	}
	id, _ := Unmarshal(identifier)
	return pw, id.UserID, nil
}
