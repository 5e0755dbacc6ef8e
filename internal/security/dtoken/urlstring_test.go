package dtoken

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/proto/common"
)

func TestURLStringRoundTrip(t *testing.T) {
	ident := Marshal(op.DelegationTokenID{Owner: "alice@HDFSGO.TEST", Renewer: "alice", IssueDate: 1, MaxDate: 2, SequenceNumber: 3, MasterKeyID: 4})
	tok := &common.TokenProto{Identifier: ident, Password: []byte{0xfb, 0xff, 0x00, 0x3e}, Kind: proto.String(Kind), Service: proto.String("127.0.0.1:8020")}
	s := EncodeURLString(tok)
	for _, form := range []string{s, s + "==", toStd(s)} {
		got, err := DecodeURLString(form)
		if err != nil {
			t.Fatalf("DecodeURLString(%q): %v", form, err)
		}
		if !proto.Equal(got, tok) {
			t.Fatalf("round trip of %q: got %v, want %v", form, got, tok)
		}
	}
	for _, bad := range []string{"", "!!!", s[:len(s)-3], s + "AAAA"} {
		if _, err := DecodeURLString(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeURLString(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func toStd(s string) string {
	b := []byte(s)
	b = bytes.ReplaceAll(b, []byte("-"), []byte("+"))
	return string(bytes.ReplaceAll(b, []byte("_"), []byte("/")))
}

func FuzzDecodeURLString(f *testing.F) {
	f.Add(EncodeURLString(&common.TokenProto{Identifier: []byte("id"), Password: []byte("pw"), Kind: proto.String(Kind), Service: proto.String("s")}))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := DecodeURLString(s)
		if err != nil {
			return
		}
		// What decodes re-encodes to a string that decodes the same.
		again, err := DecodeURLString(EncodeURLString(tok))
		if err != nil || !proto.Equal(again, tok) {
			t.Fatalf("re-decode of %q: %v %v", s, again, err)
		}
		if len(tok.Identifier)+len(tok.Password) > len(s) {
			t.Fatalf("decoded more bytes than the input held")
		}
	})
}
