package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"errors"
	"hash"
	"sync"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/common"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// derivedKeys are the RFC 3961 keys of one key usage, ready to use: the
// AES cipher of the encryption key (Ke) and pools of HMAC-SHA1 states
// keyed with the integrity (Ki) and checksum (Kc) keys. The Kerberos
// library derives the keys, expands the AES key and builds the HMAC again
// for every message, which costs more than the AES and HMAC work of a
// small one; a session does that once per usage, and a message then
// allocates only its output.
type derivedKeys struct {
	ke     cipher.Block // safe for concurrent use
	ki, kc hmacPool
}

// hmacPool hands out HMAC-SHA1 states of one key, each with room for its
// sum; Reset brings a used one back to the keyed start without hashing
// the key again.
type hmacPool struct{ p sync.Pool }

type hmacState struct {
	h   hash.Hash
	sum [sha1.Size]byte
	hdr [16]byte // a wrap token header with EC and RRC zeroed
}

func newHMACPool(key []byte) hmacPool {
	k := append([]byte(nil), key...)
	return hmacPool{p: sync.Pool{New: func() any { return &hmacState{h: hmac.New(sha1.New, k)} }}}
}

// sum96 writes the HMAC-SHA1-96 of the parts into out (12 bytes).
func (hp *hmacPool) sum96(out []byte, parts ...[]byte) {
	st := hp.p.Get().(*hmacState)
	st.h.Reset()
	for _, p := range parts {
		st.h.Write(p)
	}
	copy(out[:sha1Trunc], st.h.Sum(st.sum[:0]))
	hp.p.Put(st)
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
	d, err := deriveKeys(key, usage)
	if err != nil {
		return nil, false
	}
	w.usage[usage] = d
	return d, true
}

func deriveKeys(key types.EncryptionKey, usage uint32) (*derivedKeys, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, err
	}
	ke, err := et.DeriveKey(key.KeyValue, common.GetUsageKe(usage))
	if err != nil {
		return nil, err
	}
	ki, err := et.DeriveKey(key.KeyValue, common.GetUsageKi(usage))
	if err != nil {
		return nil, err
	}
	kc, err := et.DeriveKey(key.KeyValue, common.GetUsageKc(usage))
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(ke)
	if err != nil {
		return nil, err
	}
	return &derivedKeys{ke: b, ki: newHMACPool(ki), kc: newHMACPool(kc)}, nil
}

const (
	aesBlock  = 16 // confounder and CTS block
	sha1Trunc = 12 // HMAC-SHA1-96
)

// sealedLen is the length of RFC 3962 ciphertext of n plaintext bytes:
// confounder, data, HMAC.
func sealedLen(n int) int { return aesBlock + n + sha1Trunc }

// sealParts is RFC 3962 encryption of the concatenation of parts into out
// (sealedLen bytes): a random confounder and the parts, AES-CTS under Ke
// with a zero IV, then the HMAC-SHA1-96 of confounder|parts under Ki.
func (d *derivedKeys) sealParts(out []byte, parts ...[]byte) {
	rand.Read(out[:aesBlock])
	n := aesBlock
	for _, p := range parts {
		n += copy(out[n:], p)
	}
	d.ki.sum96(out[n:], out[:n])
	ctsEncrypt(d.ke, out[:n])
}

// open reverses sealParts: it checks and decrypts ct into a new slice and
// returns the plaintext after the confounder.
func (d *derivedKeys) open(ct []byte) ([]byte, error) {
	if len(ct) < aesBlock+sha1Trunc {
		return nil, errors.New("ciphertext too short")
	}
	body, mac := ct[:len(ct)-sha1Trunc], ct[len(ct)-sha1Trunc:]
	// One allocation: the plaintext, then the decryption's scratch.
	plain := make([]byte, len(body)+ctsScratch)
	copy(plain, body)
	ctsDecrypt(d.ke, plain[:len(body)], plain[len(body):])
	plain = plain[:len(body)]
	var sum [sha1Trunc]byte
	d.ki.sum96(sum[:], plain)
	if subtle.ConstantTimeCompare(sum[:], mac) != 1 {
		return nil, errors.New("integrity verification failed")
	}
	return plain[aesBlock:], nil
}

// wrapChecksum is the checksum of an integrity wrap token: HMAC-SHA1-96
// under Kc of the message and the token's header with EC and RRC zero.
func (d *derivedKeys) wrapChecksum(out, msg, hdr []byte) {
	st := d.kc.p.Get().(*hmacState)
	copy(st.hdr[:], hdr)
	st.hdr[4], st.hdr[5], st.hdr[6], st.hdr[7] = 0, 0, 0, 0
	st.h.Reset()
	st.h.Write(msg)
	st.h.Write(st.hdr[:])
	copy(out[:sha1Trunc], st.h.Sum(st.sum[:0]))
	d.kc.p.Put(st)
}

// checksum96 is the RFC 3962 checksum, HMAC-SHA1-96 under Kc, into out.
func (d *derivedKeys) checksum96(out []byte, parts ...[]byte) { d.kc.sum96(out, parts...) }

// ctsEncrypt encrypts buf (at least one block) in place with AES-CBC and
// ciphertext stealing as RFC 3962 has it: a zero IV, the plaintext padded
// with zeros to whole blocks, and the last two ciphertext blocks swapped,
// the final one cut to the length of the last plaintext block.
func ctsEncrypt(b cipher.Block, buf []byte) {
	n := (len(buf) + aesBlock - 1) / aesBlock
	if n == 1 {
		b.Encrypt(buf, buf)
		return
	}
	for i := 0; i < n-1; i++ {
		blk := buf[i*aesBlock : (i+1)*aesBlock]
		if i > 0 {
			subtle.XORBytes(blk, blk, buf[(i-1)*aesBlock:i*aesBlock])
		}
		b.Encrypt(blk, blk)
	}
	// Block n-2 holds C(n-1). Swap the last plaintext bytes with C(n-1)'s
	// first ones while XORing them in: block n-2 becomes C(n-1) XOR the
	// zero-padded last block, whose encryption is C(n), and the tail
	// C(n-1) cut to its length.
	blk, tail := buf[(n-2)*aesBlock:(n-1)*aesBlock], buf[(n-1)*aesBlock:]
	for i := range tail {
		p := tail[i]
		tail[i] = blk[i]
		blk[i] ^= p
	}
	b.Encrypt(blk, blk)
}

// ctsScratch is the scratch space ctsDecrypt needs.
const ctsScratch = 2 * aesBlock

// ctsDecrypt reverses ctsEncrypt in place; scratch holds ctsScratch bytes.
func ctsDecrypt(b cipher.Block, buf, scratch []byte) {
	n := (len(buf) + aesBlock - 1) / aesBlock
	if n == 1 {
		b.Decrypt(buf, buf)
		return
	}
	d := len(buf) - (n-1)*aesBlock // bytes in the cut final block
	x := buf[(n-2)*aesBlock : (n-1)*aesBlock]
	y := buf[(n-1)*aesBlock:]
	// D(Cn) is the padded last plaintext block XOR C(n-1), whose first d
	// bytes are y and whose rest the zero padding leaves in D(Cn).
	dn, cn1 := scratch[:aesBlock], scratch[aesBlock:2*aesBlock]
	b.Decrypt(dn, x)
	copy(cn1, y)
	copy(cn1[d:], dn[d:])
	subtle.XORBytes(y, dn[:d], y)
	// P(n-1) = D(C(n-1)) XOR C(n-2) (the IV, zero, when n is 2).
	b.Decrypt(x, cn1)
	if n > 2 {
		subtle.XORBytes(x, x, buf[(n-3)*aesBlock:(n-2)*aesBlock])
	}
	// The blocks before, last first, so that each still finds the
	// ciphertext block before it.
	for i := n - 3; i >= 0; i-- {
		blk := buf[i*aesBlock : (i+1)*aesBlock]
		b.Decrypt(blk, blk)
		if i > 0 {
			subtle.XORBytes(blk, blk, buf[(i-1)*aesBlock:i*aesBlock])
		}
	}
}
