package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestTypeQuotaShell: dfsadmin -setSpaceQuota/-clrSpaceQuota -storageType
// and dfs -count -q -t against a NameNode, with the quota enforced on a
// write under an ALL_SSD directory.
func TestTypeQuotaShell(t *testing.T) {
	r := newShellRig(t)
	r.ok(t, "", "dfs", "-mkdir", "/t")
	r.ok(t, "", "storagepolicies", "-setStoragePolicy", "-path", "/t", "-policy", "ALL_SSD")
	r.want(t, 0, "", "", "dfsadmin", "-setSpaceQuota", "500m", "-storageType", "SSD", "/t")
	r.put(t, "/t/a", "hello")
	head := fmt.Sprintf("%13s %17s %13s %17s PATHNAME\n", "SSD_QUOTA", "REM_SSD_QUOTA", "DISK_QUOTA", "REM_DISK_QUOTA")
	r.want(t, 0, head+fmt.Sprintf("%13s %17s %13s %17s /t\n", "524288000", "524287985", "none", "inf"), "", "dfs", "-count", "-q", "-v", "-t", "SSD,DISK", "/t")
	r.want(t, 0, fmt.Sprintf("%13s %17s /t\n", "500 M", "500.0 M"), "", "dfs", "-count", "-q", "-h", "-t", "SSD", "/t")

	// A new block reserves a whole block (128 MB) on SSD for each of its
	// three replicas: over 300 MB.
	r.want(t, 0, "", "", "dfsadmin", "-setSpaceQuota", "300m", "-storageType", "ssd", "/t")
	_, errOut, code := r.run(t, "more", "dfs", "-put", "-", "/t/b")
	if code != 1 || !strings.Contains(errOut, "Quota by storage type : SSD on path : /t is exceeded. quota = 300 MB but space consumed = 384.00 MB") {
		t.Fatalf("put over the SSD quota: %d %q", code, errOut)
	}
	r.want(t, 0, "", "", "dfsadmin", "-clrSpaceQuota", "-storageType", "SSD", "/t")
	r.want(t, 0, fmt.Sprintf("%13s %17s /t\n", "none", "inf"), "", "dfs", "-count", "-q", "-t", "SSD", "/t")
	r.put(t, "/t/b", "more")

	// RAM_DISK takes no quota; a file is not a directory.
	_, errOut, code = r.run(t, "", "dfsadmin", "-setSpaceQuota", "1m", "-storageType", "RAM_DISK", "/t")
	if code != 255 || !strings.Contains(errOut, "Don't support Quota for storage type : RAM_DISK") {
		t.Fatalf("RAM_DISK quota: %d %q", code, errOut)
	}
	_, errOut, code = r.run(t, "", "dfsadmin", "-setSpaceQuota", "1m", "-storageType", "SSD", "/t/a")
	if code != 255 || !strings.Contains(errOut, "Is not a directory") {
		t.Fatalf("quota on a file: %d %q", code, errOut)
	}
}
