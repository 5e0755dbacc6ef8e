package webhdfs

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

func TestXAttrValue(t *testing.T) {
	for in, want := range map[string]string{`"a b"`: "a b", "0x0aff": "\x0a\xff", "0sAQI=": "\x01\x02", "plain": "plain", "": "", `"`: `"`} {
		got, err := DecodeXAttrValue(in)
		if err != nil || string(got) != want {
			t.Errorf("DecodeXAttrValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"0xzz", "0s!!"} {
		var re *remoteerr.Error
		if _, err := DecodeXAttrValue(in); !errors.As(err, &re) || re.Class != remoteerr.ClassIllegalArgument {
			t.Errorf("DecodeXAttrValue(%q) = %v, want IllegalArgumentException", in, err)
		}
	}
	for enc, want := range map[string]string{"": `"hi"`, "TEXT": `"hi"`, "HEX": "0x6869", "BASE64": "0saGk="} {
		if got := EncodeXAttrValue([]byte("hi"), enc); got != want {
			t.Errorf("EncodeXAttrValue(hi, %s) = %s, want %s", enc, got, want)
		}
	}
}

// FuzzXAttrValue: no value panics the decoder, and what hex and base64
// encode decodes back.
func FuzzXAttrValue(f *testing.F) {
	for _, s := range []string{`"x"`, "0x00ff", "0XAB", "0sAA==", "0S", "raw", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		b, err := DecodeXAttrValue(v)
		if err != nil {
			var re *remoteerr.Error
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RemoteException", err)
			}
			return
		}
		for _, enc := range []string{"HEX", "BASE64"} {
			back, err := DecodeXAttrValue(EncodeXAttrValue(b, enc))
			if err != nil || !bytes.Equal(back, b) {
				t.Fatalf("%s round trip of %q: %q %v", enc, b, back, err)
			}
		}
	})
}

func TestParseACLSpec(t *testing.T) {
	got, err := ParseACLSpec("user:bob:r-x,group::r--,default:mask::rwx,other::---", true)
	want := []ACLEntry{{Type: 0, Name: "bob", Perm: 5}, {Type: 1, Perm: 4}, {Scope: 1, Type: 2, Perm: 7}, {Type: 3}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	got, err = ParseACLSpec("user:bob,default:group:", false)
	want = []ACLEntry{{Type: 0, Name: "bob"}, {Scope: 1, Type: 1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("removal spec: got %+v %v", got, err)
	}
	for _, b := range []struct {
		spec     string
		withPerm bool
		msg      string
	}{
		{"bogus:bob:rwx", true, "Invalid type of acl in <aclSpec> :bogus:bob:rwx"},
		{"user:bob:rwz", true, "Invalid permission in <aclSpec> : user:bob:rwz"},
		{"user:bob", true, "Invalid <aclSpec> : user:bob"},
		{"user:bob:r--", false, "Invalid <aclSpec> : user:bob:r--"},
		{"default", true, "Invalid <aclSpec> : default"},
	} {
		_, err := ParseACLSpec(b.spec, b.withPerm)
		var re *remoteerr.Error
		if !errors.As(err, &re) || re.Class != remoteerr.ClassIllegalArgument || re.Message != b.msg {
			t.Errorf("ParseACLSpec(%q, %v) = %v, want %q", b.spec, b.withPerm, err, b.msg)
		}
	}
}

// FuzzParseACLSpec: no spec panics the parser; what it accepts is written
// back by ACLSpecText into a spec that reads the same.
func FuzzParseACLSpec(f *testing.F) {
	f.Add("user:bob:r-x,group::r--", true)
	f.Add("default:user:bob,mask::", false)
	f.Add("other::rwx,,", true)
	f.Add("default:", false)
	f.Fuzz(func(t *testing.T, spec string, withPerm bool) {
		es, err := ParseACLSpec(spec, withPerm)
		if err != nil {
			var re *remoteerr.Error
			if !errors.As(err, &re) || !strings.Contains(re.Message, "<aclSpec>") {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, e := range es {
			if e.Type > 3 || e.Scope > 1 || e.Perm > 7 {
				t.Fatalf("entry %+v out of range", e)
			}
		}
		text := ACLSpecText(es, withPerm)
		back, err := ParseACLSpec(text, withPerm)
		if err != nil || !reflect.DeepEqual(back, es) && len(es) > 0 {
			t.Fatalf("round trip of %q via %q: %+v %v", spec, text, back, err)
		}
	})
}
