package haservice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
)

// fakeDNS resolves from maps; unknown names do not resolve.
type fakeDNS struct {
	hosts map[string][]string
	addrs map[string][]string
}

func (d fakeDNS) LookupHost(_ context.Context, h string) ([]string, error) {
	if a, ok := d.hosts[h]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", h)
}

func (d fakeDNS) LookupAddr(_ context.Context, a string) ([]string, error) {
	if n, ok := d.addrs[a]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("no name for %s", a)
}

var dns = fakeDNS{
	hosts: map[string][]string{"nn1.example": {"fe80::1", "10.0.0.1"}, "nn2.example": {"10.0.0.2"}, "nn3.example": {"10.0.0.3"}},
	addrs: map[string][]string{"10.0.0.9": {"nn9.example."}},
}

func haConf(kv ...string) *conf.Conf {
	base := []string{
		"dfs.nameservices", "ns1",
		"dfs.ha.namenodes.ns1", "nn1,nn2,nn3,nn9,bad",
		"dfs.namenode.rpc-address.ns1.nn1", "nn1.example:8020",
		"dfs.namenode.rpc-address.ns1.nn2", "nn2.example:8020",
		"dfs.namenode.servicerpc-address.ns1.nn2", "nn2.example:8040",
		"dfs.namenode.rpc-address.ns1.nn3", "nn3.example",
		"dfs.namenode.rpc-address.ns1.nn9", "10.0.0.9:9000",
		"dfs.namenode.rpc-address.ns1.bad", "nn1.example:port",
		"dfs.ha.fencing.methods", "shell(/bin/true)",
	}
	var kvs []conf.KeyValue
	for _, list := range [][]string{base, kv} {
		for i := 0; i+1 < len(list); i += 2 {
			kvs = append(kvs, conf.KeyValue{Key: list[i], Value: list[i+1]})
		}
	}
	return conf.Defaults().With(kvs...)
}

func TestResolveNameNode(t *testing.T) {
	ctx := context.Background()
	c := haConf("dfs.ha.fencing.methods.ns1.nn2", "sshfence\nshell(fence-nn2)",
		"dfs.ha.automatic-failover.enabled.ns1", "true",
		"dfs.namenode.http-address.ns1.nn1", "nn1.example:9870")
	for _, tc := range []struct {
		nn, addr, name, hostPort, fenceKey, firstMethod string
	}{
		{"nn1", "nn1.example:8020", "NameNode at nn1.example/10.0.0.1:8020", "nn1.example:8020", "dfs.ha.fencing.methods", "shell"},
		// The service RPC address wins, as Hadoop's HA admin prefers it.
		{"nn2", "nn2.example:8040", "NameNode at nn2.example/10.0.0.2:8040", "nn2.example:8040", "dfs.ha.fencing.methods.ns1.nn2", "sshfence"},
		{"nn3", "nn3.example", "NameNode at nn3.example/10.0.0.3:8020", "nn3.example:8020", "dfs.ha.fencing.methods", "shell"},
		// A configured IP: named by its address, host by reverse lookup.
		{"nn9", "10.0.0.9:9000", "NameNode at /10.0.0.9:9000", "nn9.example:9000", "dfs.ha.fencing.methods", "shell"},
	} {
		tgt, err := haservice.ResolveNameNode(ctx, c, "", tc.nn, dns)
		if err != nil {
			t.Fatalf("%s: %v", tc.nn, err)
		}
		if tgt.Addr != tc.addr || tgt.String() != tc.name || tgt.HostPort() != tc.hostPort || tgt.FencingKey != tc.fenceKey ||
			!tgt.FencingConfigured || tgt.Fencing[0].Name != tc.firstMethod || !tgt.AutoFailover || tgt.Nameservice != "ns1" {
			t.Errorf("%s: %+v (%s)", tc.nn, tgt, tgt)
		}
	}

	tgt, _ := haservice.ResolveNameNode(ctx, c, "ns1", "nn1", dns)
	params := map[string]string{}
	for _, p := range tgt.FenceParameters() {
		params[p.Name] = p.Value
	}
	want := map[string]string{"address": "nn1.example/10.0.0.1:8020", "host": "nn1.example", "port": "8020", "nameserviceid": "ns1", "namenodeid": "nn1"}
	if fmt.Sprint(params) != fmt.Sprint(want) {
		t.Errorf("fencing parameters %v, want %v", params, want)
	}
	// The target's configuration carries its own keys as the generic ones.
	for k, v := range map[string]string{
		"dfs.namenode.rpc-address": "nn1.example:8020", "dfs.namenode.http-address": "nn1.example:9870",
		"dfs.nameservice.id": "ns1", "dfs.ha.namenode.id": "nn1", "fs.defaultFS": "hdfs://nn1.example:8020",
		"dfs.ha.automatic-failover.enabled": "true",
	} {
		if got := tgt.Conf.String(k); got != v {
			t.Errorf("target conf %s = %q, want %q", k, got, v)
		}
	}
	if tgt.DialAddress() != "10.0.0.1:8020" {
		t.Errorf("dial address %s", tgt.DialAddress())
	}

	// A lifeline address names the target in messages; calls still go to
	// the RPC address.
	tgt, err := haservice.ResolveNameNode(ctx, haConf("dfs.namenode.lifeline.rpc-address.ns1.nn1", "nn1.example:8050"), "", "nn1", dns)
	if err != nil || tgt.String() != "NameNode at nn1.example/10.0.0.1:8050" || tgt.DialAddress() != "10.0.0.1:8020" {
		t.Errorf("lifeline: %v, %v", tgt, err)
	}
}

func TestResolveNameNodeErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		c      *conf.Conf
		ns, nn string
		msg    string
	}{
		{haConf(), "", "nn7", "Unable to determine service address for namenode 'nn7'"},
		{haConf(), "ns2", "nn1", "Unable to determine service address for namenode 'nn1'"},
		{haConf(), "", "bad", "Does not contain a valid host:port authority: nn1.example:port"},
		{conf.Defaults(), "", "nn1", "Unable to determine the name service ID."},
		{haConf("dfs.nameservices", "ns1,ns2"), "", "nn1", "Unable to determine the name service ID. This is an HA configuration with " +
			"multiple name services configured. dfs.nameservices is set to [ns1, ns2]. Please re-run with the -ns option."},
	} {
		_, err := haservice.ResolveNameNode(ctx, tc.c, tc.ns, tc.nn, dns)
		if !errors.Is(err, haservice.ErrNoTarget) || !strings.HasSuffix(err.Error(), ": "+tc.msg) {
			t.Errorf("%s/%s: %v, want %q", tc.ns, tc.nn, err, tc.msg)
		}
	}
}

func TestResolveNameNodeFencingConfig(t *testing.T) {
	ctx := context.Background()
	tgt, err := haservice.ResolveNameNode(ctx, haConf("dfs.ha.fencing.methods.ns1", "stonith(now)"), "", "nn1", dns)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(tgt.FencingErr, haservice.ErrBadFencingConfig) ||
		tgt.FencingErr.Error() != "dfs.ha.fencing.methods.ns1: Could not find configured fencing method stonith" {
		t.Errorf("fencing error %v", tgt.FencingErr)
	}
	c := conf.Defaults().With(conf.KeyValue{Key: "dfs.nameservices", Value: "ns1"},
		conf.KeyValue{Key: "dfs.namenode.rpc-address.ns1.nn1", Value: "nn1.example:8020"})
	if tgt, err = haservice.ResolveNameNode(ctx, c, "", "nn1", dns); err != nil || tgt.FencingConfigured || tgt.AutoFailover {
		t.Errorf("unset fencing: %+v, %v", tgt, err)
	}
}

func TestNameNodeIDs(t *testing.T) {
	c := haConf()
	if got := haservice.NameNodeIDs(c, ""); strings.Join(got, ",") != "nn1,nn2,nn3,nn9,bad" {
		t.Errorf("ids %v", got)
	}
	if got := haservice.NameNodeIDs(haConf("dfs.nameservices", "ns1,ns2", "dfs.ha.namenodes.ns2", "a,b"), "ns2"); strings.Join(got, ",") != "a,b" {
		t.Errorf("ids %v", got)
	}
	if got := haservice.NameNodeIDs(haConf("dfs.nameservices", "ns1,ns2", "dfs.nameservice.id", "ns1"), ""); len(got) != 5 {
		t.Errorf("ids %v", got)
	}
	if got := haservice.NameNodeIDs(haConf("dfs.nameservices", "ns1,ns2"), ""); len(got) != 0 {
		t.Errorf("ids %v without a nameservice", got)
	}
}

func TestConfigValidate(t *testing.T) {
	c := conf.Defaults().With(conf.KeyValue{Key: "ha.failover-controller.new-active.rpc-timeout.ms", Value: "-5"})
	if _, err := haservice.ConfigFrom(c); err == nil || !strings.Contains(err.Error(), "ha.failover-controller.new-active.rpc-timeout.ms") {
		t.Errorf("negative timeout: %v", err)
	}
	c = conf.Defaults().With(conf.KeyValue{Key: "ha.failover-controller.cli-check.rpc-timeout.ms", Value: "x"})
	if _, err := haservice.ConfigFrom(c); err == nil || !strings.Contains(err.Error(), "ha.failover-controller.cli-check.rpc-timeout.ms") {
		t.Errorf("bad timeout: %v", err)
	}
}
