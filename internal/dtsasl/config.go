package dtsasl

import (
	"fmt"
	"net"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/security"
)

// AESCTR is the one cipher suite of dfs.encrypt.data.transfer.cipher.suites.
const AESCTR = "AES/CTR/NoPadding"

// Config is the protection both sides of a connection are configured
// with.
type Config struct {
	// Protection is dfs.data.transfer.protection (authentication,
	// integrity, privacy, or a list); 0 (unset) means no SASL handshake
	// unless Encrypt.
	Protection security.QOP
	// Encrypt is dfs.encrypt.data.transfer (false): the handshake uses a
	// data encryption key and privacy. On a client it is the NameNode's
	// server default that counts (see Client).
	Encrypt bool
	// Algorithm is dfs.encrypt.data.transfer.algorithm (unset), handed
	// out with data encryption keys: "" or rc4, the DIGEST-MD5 cipher
	// (3des is refused as not supported).
	Algorithm string
	// AES is dfs.encrypt.data.transfer.cipher.suites = AES/CTR/NoPadding:
	// after a privacy handshake the stream is encrypted with AES/CTR
	// under fresh keys instead of the DIGEST-MD5 layer.
	AES bool
	// KeyBits is dfs.encrypt.data.transfer.cipher.key.bitlength (128,
	// 192 or 256): the AES key length.
	KeyBits int
}

// Enabled reports whether the DataNode requires the handshake.
func (c Config) Enabled() bool { return c.Protection != 0 || c.Encrypt }

// ConfigFrom reads the keys.
func ConfigFrom(c *conf.Conf) (Config, error) {
	var cfg Config
	var err error
	if p := c.String(conf.DFSDataTransferProtection); strings.TrimSpace(p) != "" {
		if cfg.Protection, err = security.ParseProtection(conf.DFSDataTransferProtection, p); err != nil {
			return Config{}, err
		}
	}
	if cfg.Encrypt, err = c.Bool(conf.DFSEncryptDataTransfer); err != nil {
		return Config{}, err
	}
	switch cfg.Algorithm = strings.TrimSpace(c.String(conf.DFSEncryptDataTransferAlgorithm)); cfg.Algorithm {
	case "", "rc4":
	case "3des":
		return Config{}, fmt.Errorf("%s=3des is not supported: the DIGEST-MD5 layer here has RC4 only (use rc4, or AES/CTR through %s)",
			conf.DFSEncryptDataTransferAlgorithm, conf.DFSEncryptDataTransferCipherSuites)
	default:
		return Config{}, fmt.Errorf("%s=%s: want 3des or rc4", conf.DFSEncryptDataTransferAlgorithm, cfg.Algorithm)
	}
	switch s := strings.TrimSpace(c.String(conf.DFSEncryptDataTransferCipherSuites)); s {
	case "":
	case AESCTR:
		cfg.AES = true
	default:
		return Config{}, fmt.Errorf("Invalid cipher suite, %s=%s (the only suite is %s)", conf.DFSEncryptDataTransferCipherSuites, s, AESCTR)
	}
	n, err := c.Int(conf.DFSEncryptDataTransferCipherKeyBitlen)
	if err != nil {
		return Config{}, err
	}
	if n != 128 && n != 192 && n != 256 {
		return Config{}, fmt.Errorf("%s: %d bits, want 128, 192 or 256", conf.DFSEncryptDataTransferCipherKeyBitlen, n)
	}
	cfg.KeyBits = int(n)
	return cfg, nil
}

// secureChannel reports whether a connection needs no handshake: a UNIX
// domain socket reaches only processes of this host.
func secureChannel(c net.Conn) bool {
	_, ok := c.(*net.UnixConn)
	return ok
}
