package proxyuser

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

func TestAuthorize(t *testing.T) {
	c := conf.Defaults().With(
		conf.KeyValue{Key: "hadoop.proxyuser.super.hosts", Value: "127.0.0.1, 10.1.0.0/16,gw.example"},
		conf.KeyValue{Key: "hadoop.proxyuser.super.groups", Value: "staff"},
		conf.KeyValue{Key: "hadoop.proxyuser.super.users", Value: "joe,ann"},
		conf.KeyValue{Key: "hadoop.proxyuser.oozie.hosts", Value: "*"},
		conf.KeyValue{Key: "hadoop.proxyuser.oozie.groups", Value: "*"},
		conf.KeyValue{Key: "hadoop.proxyuser.nohosts.users", Value: "*"},
		conf.KeyValue{Key: "hadoop.proxyuser.svc.foo.hosts", Value: "*"}, // a dotted user name
		conf.KeyValue{Key: "hadoop.proxyuser.svc.foo.users", Value: "joe"},
	)
	lookup := func(h string) ([]string, error) {
		if h == "gw.example" {
			return []string{"192.0.2.7"}, nil
		}
		return nil, errors.New("no such host")
	}
	p, err := FromConf(c, lookup)
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{Real: "super", User: "joe", Addr: ip("127.0.0.1")}, ""},
		{Request{Real: "super", User: "bob", Groups: []string{"staff"}, Addr: ip("10.1.200.3")}, ""},
		{Request{Real: "super", User: "ann", Addr: ip("192.0.2.7")}, ""},
		{Request{Real: "super", User: "ann", Addr: ip("::ffff:127.0.0.1")}, ""},
		{Request{Real: "super", User: "bob", Groups: []string{"dev"}, Addr: ip("127.0.0.1")}, "User: super is not allowed to impersonate bob"},
		{Request{Real: "super", RealName: "super@EXAMPLE.COM", User: "eve", Addr: ip("127.0.0.1")}, "User: super@EXAMPLE.COM is not allowed to impersonate eve"},
		{Request{Real: "super", User: "joe", Addr: ip("10.2.0.1")}, "Unauthorized connection for super-user: super from IP 10.2.0.1"},
		{Request{Real: "oozie", User: "anyone", Addr: ip("172.16.0.1")}, ""},
		{Request{Real: "nohosts", User: "joe", Addr: ip("127.0.0.1")}, "Unauthorized connection for super-user: nohosts from IP 127.0.0.1"},
		{Request{Real: "joe", User: "super", Addr: ip("127.0.0.1")}, "User: joe is not allowed to impersonate super"},
		{Request{Real: "svc.foo", User: "joe", Addr: ip("127.0.0.1")}, ""},
	} {
		err := p.Authorize(tc.r)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.r, got, tc.want)
		}
	}
	if _, err := FromConf(conf.Defaults().With(conf.KeyValue{Key: "hadoop.proxyuser.x.hosts", Value: "nowhere.invalid"}), lookup); err == nil {
		t.Error("an unresolvable host must be an error")
	}
	if _, err := FromConf(conf.Defaults().With(conf.KeyValue{Key: "hadoop.proxyuser.x.hosts", Value: "10.0.0.0/99"}), lookup); err == nil {
		t.Error("a bad CIDR must be an error")
	}
}
