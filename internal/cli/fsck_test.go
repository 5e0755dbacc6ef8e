package cli

import "testing"

// fsck resolves its path as Hadoop's Path does.
func TestFsckPath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/", "/"}, {"/a/b/", "/a/b"}, {"hdfs://nn:8020/x", "/x"}, {"hdfs:///x/../y", "/y"}, {"rel", "/user/u/rel"}, {"hdfs://nn:8020", "/"},
	} {
		if got, err := fsckPath(c.in, "u"); err != nil || got != c.want {
			t.Errorf("fsckPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := fsckPath("file:///tmp", "u"); err == nil {
		t.Error("a file: path was accepted")
	}
}

// The exit status follows the report's last line, as Hadoop's DFSck.
func TestFsckStatus(t *testing.T) {
	for _, c := range []struct {
		last string
		want int
	}{
		{"The filesystem under path '/' is HEALTHY", 0},
		{"The filesystem under path '/x' is CORRUPT", 1},
		{"Path '/nope' does not exist", 0},
		{"Incorrect blockId format: foo", 0},
		{"Fsck on path '/' FAILED", 255},
	} {
		if got := fsckStatus(c.last); got != c.want {
			t.Errorf("fsckStatus(%q) = %d, want %d", c.last, got, c.want)
		}
	}
}
