package cli

import (
	"strings"
	"testing"
)

// TestHelpersRefuseHA: in an HA nameservice the standby checkpoints, and
// the Secondary NameNode, the Checkpoint Node and the Backup Node refuse to
// start, saying so.
func TestHelpersRefuseHA(t *testing.T) {
	dir := t.TempDir()
	writeSite(t, dir, "core-site.xml", `<configuration><property><name>fs.defaultFS</name><value>hdfs://ns1</value></property></configuration>`)
	writeSite(t, dir, "hdfs-site.xml", `<configuration>
<property><name>dfs.nameservices</name><value>ns1</value></property>
<property><name>dfs.ha.namenodes.ns1</name><value>nn1,nn2</value></property>
<property><name>dfs.namenode.rpc-address.ns1.nn1</name><value>127.0.0.1:1</value></property>
<property><name>dfs.namenode.rpc-address.ns1.nn2</name><value>127.0.0.1:2</value></property>
<property><name>dfs.namenode.shared.edits.dir</name><value>file:///tmp/none</value></property>
</configuration>`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"secondarynamenode"}, "Cannot use SecondaryNameNode in an HA cluster. The Standby Namenode will perform checkpointing."},
		{[]string{"secondarynamenode", "-checkpoint", "force"}, "Cannot use SecondaryNameNode in an HA cluster."},
		{[]string{"namenode", "-checkpoint"}, "Cannot use a Checkpoint Node in an HA cluster."},
		{[]string{"namenode", "-backup"}, "Cannot use a Backup Node in an HA cluster."},
	} {
		_, errOut, code := run(t, nil, append([]string{"--config", dir}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("hdfs %s: code %d, stderr %q; want %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}

func TestSecondaryUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", "now"}, "-checkpoint may only take 'force' as an argument"},
		{[]string{"-checkpoint", "-geteditsize"}, "May not pass both geteditsize and checkpoint"},
		{[]string{"-frobnicate"}, "unknown option -frobnicate"},
	} {
		_, errOut, code := run(t, nil, append([]string{"secondarynamenode"}, tc.args...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "Usage: hdfs secondarynamenode") {
			t.Errorf("secondarynamenode %v: code %d, stderr %q", tc.args, code, errOut)
		}
	}
	out, _, code := run(t, nil, "secondarynamenode", "-h")
	if code != 0 || !strings.Contains(out, "-geteditsize") {
		t.Errorf("-h: code %d, %q", code, out)
	}
	_, errOut, code := run(t, nil, "namenode", "-backup", "-checkpoint")
	if code != 1 || !strings.Contains(errOut, "exclusive") {
		t.Errorf("namenode -backup -checkpoint: code %d, %q", code, errOut)
	}
}
