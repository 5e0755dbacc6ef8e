package cli

import (
	"strings"
	"testing"

	"github.com/hdfsgo/hdfsgo/internal/namenode/nntest"
)

// TestStoragePoliciesCommand runs `hdfs storagepolicies` against a real
// NameNode, with Hadoop's output.
func TestStoragePoliciesCommand(t *testing.T) {
	nn := nntest.New(t)
	fs := "hdfs://" + nn.Addr
	sp := func(args ...string) (string, string, int) {
		t.Helper()
		return run(t, nil, append([]string{"storagepolicies", "-fs", fs}, args...)...)
	}
	out, errOut, code := sp("-listPolicies")
	want := "Block Storage Policies:\n" +
		"\tBlockStoragePolicy{PROVIDED:1, storageTypes=[PROVIDED, DISK], creationFallbacks=[PROVIDED, DISK], replicationFallbacks=[PROVIDED, DISK]}\n" +
		"\tBlockStoragePolicy{COLD:2, storageTypes=[ARCHIVE], creationFallbacks=[], replicationFallbacks=[]}\n" +
		"\tBlockStoragePolicy{WARM:5, storageTypes=[DISK, ARCHIVE], creationFallbacks=[DISK, ARCHIVE], replicationFallbacks=[DISK, ARCHIVE]}\n" +
		"\tBlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}\n" +
		"\tBlockStoragePolicy{ONE_SSD:10, storageTypes=[SSD, DISK], creationFallbacks=[SSD, DISK], replicationFallbacks=[SSD, DISK]}\n" +
		"\tBlockStoragePolicy{ALL_SSD:12, storageTypes=[SSD], creationFallbacks=[DISK], replicationFallbacks=[DISK]}\n" +
		"\tBlockStoragePolicy{ALL_NVDIMM:14, storageTypes=[NVDIMM], creationFallbacks=[DISK], replicationFallbacks=[DISK]}\n" +
		"\tBlockStoragePolicy{LAZY_PERSIST:15, storageTypes=[RAM_DISK, DISK], creationFallbacks=[DISK], replicationFallbacks=[DISK]}\n"
	if out != want || code != 0 {
		t.Fatalf("-listPolicies: code %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"-getStoragePolicy", "-path", "/"}, "The storage policy of / is unspecified\n", "", 0},
		{[]string{"-setStoragePolicy", "-path", "/", "-policy", "COLD"}, "Set storage policy COLD on /\n", "", 0},
		{[]string{"-getStoragePolicy", "-path", "/"}, "The storage policy of /:\nBlockStoragePolicy{COLD:2, storageTypes=[ARCHIVE], creationFallbacks=[], replicationFallbacks=[]}\n", "", 0},
		{[]string{"-setStoragePolicy", "-path", "/", "-policy", "FROZEN"}, "", "RemoteException: Cannot find a block policy with the name FROZEN\n", 2},
		{[]string{"-setStoragePolicy", "-path", "/nope", "-policy", "HOT"}, "", "FileNotFoundException: File/Directory does not exist: /nope\n", 2},
		{[]string{"-getStoragePolicy", "-path", "/nope"}, "", "File/Directory does not exist: /nope\n", 2},
		{[]string{"-unsetStoragePolicy", "-path", "/"}, "Unset storage policy from /\n", "", 0},
		{[]string{"-getStoragePolicy", "-path", "/"}, "The storage policy of / is unspecified\n", "", 0},
		{[]string{"-getStoragePolicy"}, "", "Please specify the path with -path.\nUsage:" + spGetLong + "\n", 1},
	} {
		out, errOut, code := sp(tc.args...)
		if out != tc.stdout || errOut != tc.stderr || code != tc.code {
			t.Errorf("%v: got %q %q %d, want %q %q %d", tc.args, out, errOut, code, tc.stdout, tc.stderr, tc.code)
		}
	}
	_, errOut, code = run(t, nil, "storagepolicies")
	if code != 1 || !strings.HasPrefix(errOut, "Usage: bin/hdfs storagepolicies [COMMAND]\n          [-listPolicies]\n") {
		t.Fatalf("no command: %d %q", code, errOut)
	}
}
