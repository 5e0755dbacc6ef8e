package security

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"hash"
)

// DigestLayer is the security layer of a DIGEST-MD5 session (RFC 2831
// §2.3 and §2.4): every message after the exchange is wrapped as
//
//	integrity (auth-int):  msg | HMAC-MD5(Ki, seq | msg)[0:10] | 00 01 | seq
//	privacy (auth-conf):   RC4(Kc, msg | HMAC-MD5(Ki, seq | msg)[0:10]) | 00 01 | seq
//
// where seq is a 4-byte big-endian count of the messages sent in that
// direction, Ki and Kc the signing and sealing keys of the sender's
// direction, derived from H(A1), and the RC4 stream runs on across
// messages. The framing around a wrapped message (a 4-byte length in
// Hadoop's streams) is the caller's.
//
// Wrap and Unwrap each belong to one goroutine at a time (one for each
// direction).
type DigestLayer struct {
	privacy bool
	send    direction
	recv    direction
}

type direction struct {
	seq uint32
	mac hash.Hash
	rc4 *rc4.Cipher
}

// The layer's constants (part of the wire format).
const (
	digestMACLen      = 10
	digestTrailerLen  = digestMACLen + 2 + 4
	clientSignMagic   = "Digest session key to client-to-server signing key magic constant"
	serverSignMagic   = "Digest session key to server-to-client signing key magic constant"
	clientSealMagic   = "Digest H(A1) to client-to-server sealing key magic constant"
	serverSealMagic   = "Digest H(A1) to server-to-client sealing key magic constant"
	digestMessageType = 1
)

// Errors of the layer.
var (
	ErrDigestShort     = errors.New("DIGEST-MD5: wrapped message shorter than its trailer")
	ErrDigestIntegrity = errors.New("DIGEST-MD5: message integrity check failed (MAC, type or sequence number)")
)

func md5Of(parts ...[]byte) []byte {
	h := md5.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// newDigestLayer derives the keys of a session at level q (nil for
// authentication only) for the client or the server side.
func newDigestLayer(ha1 []byte, q QOP, client bool) *DigestLayer {
	if q != QOPIntegrity && q != QOPPrivacy {
		return nil
	}
	kic := md5Of(ha1, []byte(clientSignMagic))
	kis := md5Of(ha1, []byte(serverSignMagic))
	l := &DigestLayer{privacy: q == QOPPrivacy}
	sendK, recvK := kic, kis
	if !client {
		sendK, recvK = kis, kic
	}
	l.send.mac = hmac.New(md5.New, sendK)
	l.recv.mac = hmac.New(md5.New, recvK)
	if l.privacy {
		kcc := md5Of(ha1[:16], []byte(clientSealMagic))
		kcs := md5Of(ha1[:16], []byte(serverSealMagic))
		sendC, recvC := kcc, kcs
		if !client {
			sendC, recvC = kcs, kcc
		}
		l.send.rc4, _ = rc4.NewCipher(sendC)
		l.recv.rc4, _ = rc4.NewCipher(recvC)
	}
	return l
}

// Privacy reports whether the layer encrypts (auth-conf).
func (l *DigestLayer) Privacy() bool { return l.privacy }

// Overhead is the number of bytes Wrap adds to a message.
func (l *DigestLayer) Overhead() int { return digestTrailerLen }

func (d *direction) macOf(msg []byte) []byte {
	var seq [4]byte
	binary.BigEndian.PutUint32(seq[:], d.seq)
	d.mac.Reset()
	d.mac.Write(seq[:])
	d.mac.Write(msg)
	return d.mac.Sum(nil)[:digestMACLen]
}

// AppendWrap appends the wrapped msg to dst and returns it.
func (l *DigestLayer) AppendWrap(dst, msg []byte) []byte {
	d := &l.send
	start := len(dst)
	dst = append(dst, msg...)
	dst = append(dst, d.macOf(msg)...)
	if l.privacy {
		d.rc4.XORKeyStream(dst[start:], dst[start:])
	}
	dst = append(dst, 0, digestMessageType)
	dst = binary.BigEndian.AppendUint32(dst, d.seq)
	d.seq++
	return dst
}

// Wrap returns msg wrapped.
func (l *DigestLayer) Wrap(msg []byte) []byte {
	return l.AppendWrap(make([]byte, 0, len(msg)+digestTrailerLen), msg)
}

// Unwrap checks and unwraps one message in place, returning the message
// (a prefix of b).
func (l *DigestLayer) Unwrap(b []byte) ([]byte, error) {
	if len(b) < digestTrailerLen {
		return nil, ErrDigestShort
	}
	d := &l.recv
	body := b[:len(b)-6]
	if l.privacy {
		d.rc4.XORKeyStream(body, body)
	}
	msg, mac := body[:len(body)-digestMACLen], body[len(body)-digestMACLen:]
	var want [6]byte
	want[1] = digestMessageType
	binary.BigEndian.PutUint32(want[2:], d.seq)
	if subtle.ConstantTimeCompare(mac, d.macOf(msg)) != 1 || subtle.ConstantTimeCompare(b[len(b)-6:], want[:]) != 1 {
		return nil, ErrDigestIntegrity
	}
	d.seq++
	return msg, nil
}
