package security

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"errors"
	"sync"

	"github.com/jcmturner/aescts/v2"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/common"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// derivedKeys are the RFC 3961 keys of one key usage: encryption (Ke),
// integrity (Ki) and checksum (Kc). The Kerberos library derives them
// again for every message, which costs more than the AES and HMAC work of
// a small one; a session derives them once per usage.
type derivedKeys struct {
	ke, ki, kc []byte
}

// wrapKeys caches the derived keys of a session's key, for the
// AES-CTS-HMAC-SHA1-96 types (RFC 3962), which are what MIT and Active
// Directory issue by default. Other types go through the library.
type wrapKeys struct {
	once  sync.Once
	fast  bool
	mu    sync.Mutex
	usage map[uint32]*derivedKeys
}

func (w *wrapKeys) keys(key types.EncryptionKey, usage uint32) (*derivedKeys, bool) {
	w.once.Do(func() {
		w.fast = key.KeyType == etypeID.AES128_CTS_HMAC_SHA1_96 || key.KeyType == etypeID.AES256_CTS_HMAC_SHA1_96
		w.usage = map[uint32]*derivedKeys{}
	})
	if !w.fast {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.usage[usage]; d != nil {
		return d, true
	}
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, false
	}
	var d derivedKeys
	if d.ke, err = et.DeriveKey(key.KeyValue, common.GetUsageKe(usage)); err != nil {
		return nil, false
	}
	if d.ki, err = et.DeriveKey(key.KeyValue, common.GetUsageKi(usage)); err != nil {
		return nil, false
	}
	if d.kc, err = et.DeriveKey(key.KeyValue, common.GetUsageKc(usage)); err != nil {
		return nil, false
	}
	w.usage[usage] = &d
	return &d, true
}

const (
	aesBlock  = 16 // confounder and CTS block
	sha1Trunc = 12 // HMAC-SHA1-96
)

func hmac96(k []byte, parts ...[]byte) []byte {
	m := hmac.New(sha1.New, k)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)[:sha1Trunc]
}

// encrypt is RFC 3962 encryption: AES-CTS of confounder|msg under Ke, then
// the HMAC-SHA1-96 of confounder|msg under Ki.
func (d *derivedKeys) encrypt(msg []byte) ([]byte, error) {
	plain := make([]byte, aesBlock+len(msg))
	rand.Read(plain[:aesBlock])
	copy(plain[aesBlock:], msg)
	_, ct, err := aescts.Encrypt(d.ke, make([]byte, aesBlock), plain)
	if err != nil {
		return nil, err
	}
	return append(ct, hmac96(d.ki, plain)...), nil
}

// decrypt reverses encrypt and checks the HMAC.
func (d *derivedKeys) decrypt(ct []byte) ([]byte, error) {
	if len(ct) < aesBlock+sha1Trunc {
		return nil, errors.New("ciphertext too short")
	}
	body, mac := ct[:len(ct)-sha1Trunc], ct[len(ct)-sha1Trunc:]
	plain, err := aescts.Decrypt(d.ke, make([]byte, aesBlock), body)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(hmac96(d.ki, plain), mac) {
		return nil, errors.New("integrity verification failed")
	}
	return plain[aesBlock:], nil
}

// checksum is the RFC 3962 checksum: HMAC-SHA1-96 under Kc.
func (d *derivedKeys) checksum(parts ...[]byte) []byte { return hmac96(d.kc, parts...) }
