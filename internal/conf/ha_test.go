package conf

import (
	"errors"
	"reflect"
	"testing"
)

func TestSuffixed(t *testing.T) {
	cases := []struct {
		key   string
		parts []string
		want  string
	}{
		{DFSNameNodeRPCAddress, nil, "dfs.namenode.rpc-address"},
		{DFSNameNodeRPCAddress, []string{"ns1"}, "dfs.namenode.rpc-address.ns1"},
		{DFSNameNodeRPCAddress, []string{"ns1", "nn2"}, "dfs.namenode.rpc-address.ns1.nn2"},
		{DFSNameNodeHTTPAddress, []string{"", "nn2"}, "dfs.namenode.http-address.nn2"},
		{DFSHANameNodes, []string{"mycluster"}, "dfs.ha.namenodes.mycluster"},
	}
	for _, tc := range cases {
		if got := Suffixed(tc.key, tc.parts...); got != tc.want {
			t.Errorf("Suffixed(%s, %q) = %q; want %q", tc.key, tc.parts, got, tc.want)
		}
	}
}

func TestNameNodeRPCAddresses(t *testing.T) {
	cases := []struct {
		name string
		kv   []KeyValue
		want []NameNodeAddress
		err  error
	}{
		{
			name: "defaults only",
			err:  ErrNoNameNode,
		},
		{
			name: "fs.defaultFS with port",
			kv:   []KeyValue{{FSDefaultFS, "hdfs://nn.example.com:9000"}},
			want: []NameNodeAddress{{Address: "nn.example.com:9000"}},
		},
		{
			name: "fs.defaultFS without port",
			kv:   []KeyValue{{FSDefaultFS, "hdfs://nn.example.com/"}},
			want: []NameNodeAddress{{Address: "nn.example.com:8020"}},
		},
		{
			name: "fs.defaultFS IPv6",
			kv:   []KeyValue{{FSDefaultFS, "HDFS://[::1]"}},
			want: []NameNodeAddress{{Address: "[::1]:8020"}},
		},
		{
			name: "fs.defaultFS not hdfs",
			kv:   []KeyValue{{FSDefaultFS, "s3a://bucket"}},
			err:  ErrNoNameNode,
		},
		{
			name: "rpc-address wins over fs.defaultFS",
			kv:   []KeyValue{{FSDefaultFS, "hdfs://a:1"}, {DFSNameNodeRPCAddress, "b:2"}},
			want: []NameNodeAddress{{Address: "b:2"}},
		},
		{
			name: "rpc-address with expansion",
			kv:   []KeyValue{{"nn.host", "h"}, {DFSNameNodeRPCAddress, "${nn.host}:8020"}},
			want: []NameNodeAddress{{Address: "h:8020"}},
		},
		{
			name: "HA nameservice",
			kv: []KeyValue{
				{DFSNameservices, "mycluster"},
				{"dfs.ha.namenodes.mycluster", "nn1, nn2"},
				{"dfs.namenode.rpc-address.mycluster.nn1", "h1:8020"},
				{"dfs.namenode.rpc-address.mycluster.nn2", "h2:8020"},
				{DFSNameNodeRPCAddress, "ignored:1"},
				{FSDefaultFS, "hdfs://mycluster"},
			},
			want: []NameNodeAddress{
				{Nameservice: "mycluster", NameNodeID: "nn1", Address: "h1:8020"},
				{Nameservice: "mycluster", NameNodeID: "nn2", Address: "h2:8020"},
			},
		},
		{
			name: "federation, one HA and one plain nameservice, missing address skipped",
			kv: []KeyValue{
				{DFSNameservices, "ns1,ns2"},
				{"dfs.ha.namenodes.ns1", "a,b,c"},
				{"dfs.namenode.rpc-address.ns1.a", "ha:1"},
				{"dfs.namenode.rpc-address.ns1.c", "hc:3"},
				{"dfs.namenode.rpc-address.ns2", "h2:2"},
			},
			want: []NameNodeAddress{
				{Nameservice: "ns1", NameNodeID: "a", Address: "ha:1"},
				{Nameservice: "ns1", NameNodeID: "c", Address: "hc:3"},
				{Nameservice: "ns2", Address: "h2:2"},
			},
		},
		{
			name: "nameservices without addresses",
			kv:   []KeyValue{{DFSNameservices, "ns1"}, {"dfs.ha.namenodes.ns1", "nn1"}, {DFSNameNodeRPCAddress, "x:1"}},
			err:  ErrNoNameNode,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newDefaults(noEnv).With(tc.kv...)
			got, err := c.NameNodeRPCAddresses()
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v; want %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

func TestNameservicesAndIDs(t *testing.T) {
	c := Defaults().With(KeyValue{DFSNameservices, " ns1 , ns2 ,"}, KeyValue{"dfs.ha.namenodes.ns1", "nn1,nn2,nn3"})
	if got := c.Nameservices(); !reflect.DeepEqual(got, []string{"ns1", "ns2"}) {
		t.Errorf("Nameservices = %q", got)
	}
	if got := c.NameNodeIDs("ns1"); !reflect.DeepEqual(got, []string{"nn1", "nn2", "nn3"}) {
		t.Errorf("NameNodeIDs(ns1) = %q", got)
	}
	if got := c.NameNodeIDs("ns2"); got != nil {
		t.Errorf("NameNodeIDs(ns2) = %q; want nil", got)
	}
	if got := Defaults().Nameservices(); got != nil {
		t.Errorf("default Nameservices = %q; want nil", got)
	}
}
