package dtsasl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datatransfer"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/security"
	"github.com/hdfsgo/hdfsgo/internal/security/blocktoken"
	"github.com/hdfsgo/hdfsgo/internal/testtool"
)

type keyring struct {
	m *blocktoken.Manager
	v *blocktoken.Verifier
}

func newKeyring() *keyring {
	now := time.Now()
	m := blocktoken.NewManager(time.Hour, time.Hour, now)
	v := &blocktoken.Verifier{}
	v.SetKeys(m.Export())
	return &keyring{m: m, v: v}
}

func (k *keyring) token() *common.TokenProto {
	return k.m.Generate("alice", "BP-1", 42, blocktoken.Read|blocktoken.Write, time.Now())
}

// echo runs srv on one connection of l: after the handshake it echoes
// what it reads, uppercased by nothing, until EOF; the handshake's error
// goes to errc.
func echo(t *testing.T, srv *Server) (addr string, errc chan error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	errc = make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		if ok, err := IsMagic(br); err != nil || !ok {
			errc <- errors.New("no magic")
			return
		}
		pc, pbr, err := srv.Accept(c, br)
		errc <- err
		if err != nil {
			return
		}
		buf := make([]byte, 100000)
		for {
			n, err := pbr.Read(buf)
			if n > 0 {
				if _, werr := pc.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return l.Addr().String(), errc
}

// recorder keeps every byte a connection writes.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(p)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

func TestRoundTripEachLevel(t *testing.T) {
	k := newKeyring()
	secret := bytes.Repeat([]byte("the plaintext of a block, "), 8000)
	for _, tc := range []struct {
		name      string
		srv, cli  Config
		encrypted bool
		want      string
	}{
		{"authentication", Config{Protection: security.QOPAuthentication}, Config{Protection: security.QOPAuthentication}, false, "unwrapped"},
		{"integrity", Config{Protection: security.QOPIntegrity}, Config{Protection: security.QOPIntegrity}, false, "*sasl.layerConn"},
		{"privacy rc4", Config{Protection: security.QOPPrivacy}, Config{Protection: security.QOPPrivacy}, true, "*sasl.layerConn"},
		{"privacy AES", Config{Protection: security.QOPPrivacy, AES: true, KeyBits: 256}, Config{Protection: security.QOPPrivacy, AES: true}, true, "*sasl.aesConn"},
		{"strongest common", Config{Protection: security.QOPIntegrity | security.QOPPrivacy}, Config{Protection: security.QOPAuthentication | security.QOPIntegrity}, false, "*sasl.layerConn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, errc := echo(t, NewServer(tc.srv, k.v, time.Now))
			raw, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			rec := &recorder{Conn: raw}
			pc, err := NewClient(tc.cli, nil).Wrap(context.Background(), rec, "BP-1", k.token())
			if err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			got := typeName(pc)
			if pc == net.Conn(rec) {
				got = "unwrapped"
			}
			if got != tc.want {
				t.Errorf("protected connection %s, want %s", got, tc.want)
			}
			go func() { pc.Write(secret) }()
			back := make([]byte, len(secret))
			if _, err := io.ReadFull(pc, back); err != nil || !bytes.Equal(back, secret) {
				t.Fatalf("echo: %v, equal %v", err, bytes.Equal(back, secret))
			}
			rec.mu.Lock()
			leaked := bytes.Contains(rec.out.Bytes(), []byte("the plaintext of a block"))
			rec.mu.Unlock()
			if leaked == tc.encrypted {
				t.Errorf("plaintext on the wire: %v, want %v", leaked, !tc.encrypted)
			}
		})
	}
}

func typeName(c net.Conn) string {
	switch c.(type) {
	case *net.TCPConn:
		return "*net.TCPConn"
	case *layerConn:
		return "*sasl.layerConn"
	case *aesConn:
		return "*sasl.aesConn"
	case *plainConn:
		return "*sasl.plainConn"
	}
	return "?"
}

func TestEncryptionKey(t *testing.T) {
	k := newKeyring()
	srv := NewServer(Config{Encrypt: true, AES: true, KeyBits: 128}, k.v, time.Now)
	addr, errc := echo(t, srv)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	key := k.m.DataEncryptionKey("BP-1", "", time.Now())
	cl := NewClient(Config{AES: true}, func(context.Context, string) (*hdfs.DataEncryptionKeyProto, error) { return key, nil })
	pc, err := cl.Wrap(context.Background(), raw, "BP-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if _, ok := pc.(*aesConn); !ok {
		t.Fatalf("connection %T, want AES", pc)
	}
	if _, err := pc.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 5)
	if _, err := io.ReadFull(pc, b); err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}

	// A key of a block key the DataNode does not have.
	bad := proto.Clone(key).(*hdfs.DataEncryptionKeyProto)
	bad.KeyId = proto.Uint32(key.GetKeyId() + 1000)
	addr, errc = echo(t, srv)
	raw2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw2.Close()
	cl2 := NewClient(Config{}, func(context.Context, string) (*hdfs.DataEncryptionKeyProto, error) { return bad, nil })
	if _, err := cl2.Wrap(context.Background(), raw2, "BP-1", nil); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	<-errc
}

func TestRefusals(t *testing.T) {
	k := newKeyring()
	srv := NewServer(Config{Protection: security.QOPPrivacy}, k.v, time.Now)

	// A wrong token password: refused as an access token error.
	addr, errc := echo(t, srv)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tok := k.token()
	tok.Password = append([]byte(nil), tok.Password...)
	tok.Password[0] ^= 1
	if _, err := NewClient(Config{Protection: security.QOPPrivacy}, nil).Wrap(context.Background(), raw, "BP-1", tok); !errors.Is(err, ErrAccessToken) {
		t.Errorf("wrong password: %v", err)
	}
	if err := <-errc; !errors.Is(err, security.ErrDigestMismatch) {
		t.Errorf("server: %v", err)
	}
	raw.Close()

	// An expired token.
	addr, errc = echo(t, srv)
	raw, _ = net.Dial("tcp", addr)
	old := k.m.Generate("alice", "BP-1", 42, blocktoken.Read, time.Now().Add(-2*time.Hour))
	if _, err := NewClient(Config{Protection: security.QOPPrivacy}, nil).Wrap(context.Background(), raw, "BP-1", old); !errors.Is(err, ErrAccessToken) || !strings.Contains(err.Error(), "is expired") {
		t.Errorf("expired token: %v", err)
	}
	<-errc
	raw.Close()

	// No common level.
	addr, errc = echo(t, srv)
	raw, _ = net.Dial("tcp", addr)
	if _, err := NewClient(Config{Protection: security.QOPAuthentication}, nil).Wrap(context.Background(), raw, "BP-1", k.token()); err == nil || !strings.Contains(err.Error(), "offers qop") {
		t.Errorf("no common qop: %v", err)
	}
	raw.Close()
	<-errc

	// A client without SASL: its op header is not the magic number.
	var op bytes.Buffer
	req := &hdfs.OpReadBlockProto{Header: &hdfs.ClientOperationHeaderProto{BaseHeader: &hdfs.BaseHeaderProto{
		Block: &hdfs.ExtendedBlockProto{PoolId: new(string), BlockId: new(uint64), GenerationStamp: new(uint64)}}, ClientName: new(string)},
		Offset: new(uint64), Len: new(uint64)}
	if err := datatransfer.WriteOp(&op, datatransfer.OpReadBlock, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(bytes.NewReader(op.Bytes()))
	if ok, _ := IsMagic(br); ok {
		t.Error("an op header taken for the magic number")
	}
	if _, _, err := srv.Accept(nopConn{}, br); !errors.Is(err, ErrBadMagic) {
		t.Errorf("plain client: %v", err)
	}
}

// nopConn is a connection that takes writes and has nothing to read.
type nopConn struct{ net.Conn }

func (nopConn) Write(p []byte) (int, error) { return len(p), nil }

func TestFrameLimits(t *testing.T) {
	l := &layerConn{r: bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), layer: nil}
	l.layer = layerPair(t)
	if _, err := l.Read(make([]byte, 10)); err == nil || !strings.Contains(err.Error(), "protected frame") {
		t.Errorf("oversized frame: %v", err)
	}
	l = &layerConn{r: bytes.NewReader([]byte{0, 0, 1, 0, 1, 2}), layer: layerPair(t)}
	if _, err := l.Read(make([]byte, 10)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated frame: %v", err)
	}
}

// layerPair returns the server's layer of a privacy session.
func layerPair(t testing.TB) *security.DigestLayer {
	ch := security.NewDigestChallengeFor(security.DataTransferDigest, security.QOPPrivacy)
	resp, _, err := security.DigestRespond(security.DataTransferDigest, ch.Bytes(), "u", "p", security.QOPPrivacy)
	if err != nil {
		t.Fatal(err)
	}
	_, s, err := ch.Verify(resp, func(string) (string, error) { return "p", nil })
	if err != nil {
		t.Fatal(err)
	}
	return s.Layer
}

func FuzzReadMessage(f *testing.F) {
	var b bytes.Buffer
	writeMessage(&b, []byte(`realm="0",nonce="x",qop="auth-conf"`), []*hdfs.CipherOptionProto{{Suite: hdfs.CipherSuiteProto_AES_CTR_NOPADDING.Enum(), InKey: []byte{1}}})
	f.Add(b.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{3, 8, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		testtool.AllocBound(t, len(in), 16, 256<<10, func() {
			m, err := ReadMessage(bufio.NewReader(bytes.NewReader(in)))
			if err == nil && m.GetStatus() != hdfs.DataTransferEncryptorMessageProto_SUCCESS {
				t.Fatal("a refusal read as success")
			}
		})
	})
}

// FuzzServerHandshake feeds arbitrary bytes after the magic number to a
// DataNode's side: it must refuse them without hanging or panicking.
func FuzzServerHandshake(f *testing.F) {
	f.Add([]byte{2, 8, 0, 2, 8, 0})
	f.Add([]byte{0x80, 0x80, 0x04})
	k := newKeyring()
	srv := NewServer(Config{Protection: security.QOPPrivacy, AES: true, KeyBits: 128}, k.v, time.Now)
	f.Fuzz(func(t *testing.T, in []byte) {
		all := append([]byte{0xde, 0xad, 0xbe, 0xef}, in...)
		if _, _, err := srv.Accept(nopConn{}, bufio.NewReader(bytes.NewReader(all))); err == nil {
			t.Fatal("arbitrary bytes passed the handshake")
		}
	})
}

func FuzzLayerRead(f *testing.F) {
	f.Add([]byte{0, 0, 0, 20, 1, 2, 3})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		l := &layerConn{r: bytes.NewReader(in), layer: layerPair(t)}
		buf := make([]byte, 64)
		testtool.AllocBound(t, len(in), 16, 256<<10, func() {
			for i := 0; i < 100; i++ {
				if _, err := l.Read(buf); err != nil {
					return
				}
			}
		})
	})
}

func TestConfigFrom(t *testing.T) {
	for _, tc := range []struct {
		kv   []conf.KeyValue
		want Config
		err  string
	}{
		{nil, Config{KeyBits: 128}, ""},
		{[]conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "integrity,privacy"}, {Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/CTR/NoPadding"}},
			Config{Protection: security.QOPIntegrity | security.QOPPrivacy, AES: true, KeyBits: 128}, ""},
		{[]conf.KeyValue{{Key: conf.DFSEncryptDataTransfer, Value: "true"}, {Key: conf.DFSEncryptDataTransferCipherKeyBitlen, Value: "256"}},
			Config{Encrypt: true, KeyBits: 256}, ""},
		{[]conf.KeyValue{{Key: conf.DFSDataTransferProtection, Value: "secret"}}, Config{}, "unknown protection"},
		{[]conf.KeyValue{{Key: conf.DFSEncryptDataTransferCipherSuites, Value: "AES/GCM"}}, Config{}, "Invalid cipher suite, dfs.encrypt.data.transfer.cipher.suites=AES/GCM"},
		{[]conf.KeyValue{{Key: conf.DFSEncryptDataTransferCipherKeyBitlen, Value: "100"}}, Config{}, "want 128, 192 or 256"},
		{[]conf.KeyValue{{Key: conf.DFSEncryptDataTransferAlgorithm, Value: "rc4"}}, Config{Algorithm: "rc4", KeyBits: 128}, ""},
		{[]conf.KeyValue{{Key: conf.DFSEncryptDataTransferAlgorithm, Value: "3des"}}, Config{}, "3des is not supported"},
	} {
		got, err := ConfigFrom(conf.Defaults().With(tc.kv...))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %q", tc.kv, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v %v, want %+v", tc.kv, got, err, tc.want)
		}
	}
}

// TestReplayRefused records a client's whole handshake and plays it to a
// new connection: the DataNode's fresh nonce makes the recorded digest
// response worthless.
func TestReplayRefused(t *testing.T) {
	k := newKeyring()
	srv := NewServer(Config{Protection: security.QOPPrivacy}, k.v, time.Now)
	addr, errc := echo(t, srv)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rec := &recorder{Conn: raw}
	if _, err := NewClient(Config{Protection: security.QOPPrivacy}, nil).Wrap(context.Background(), rec, "BP-1", k.token()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	recorded := bytes.NewReader(rec.out.Bytes())
	rec.mu.Unlock()
	// magic, the empty first message, the digest response.
	var magic [4]byte
	io.ReadFull(recorded, magic[:])
	br := bufio.NewReader(recorded)
	first, err := datatransfer.ReadDelimitedBytes(br, MaxMessage, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := datatransfer.ReadDelimitedBytes(br, MaxMessage, nil)
	if err != nil {
		t.Fatal(err)
	}
	var replay bytes.Buffer
	replay.Write(magic[:])
	for _, m := range [][]byte{first, second} {
		replay.Write(protowire.AppendVarint(nil, uint64(len(m))))
		replay.Write(m)
	}

	addr, errc = echo(t, srv)
	again, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	_ = again.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := again.Write(replay.Bytes()); err != nil {
		t.Fatal(err)
	}
	abr := bufio.NewReader(again)
	if _, err := ReadMessage(abr); err != nil {
		t.Fatalf("challenge: %v", err)
	}
	if _, err := ReadMessage(abr); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("replayed handshake: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("the DataNode accepted a replayed handshake")
	}
}
