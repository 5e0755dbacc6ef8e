package datanode

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hdfsgo/hdfsgo/internal/conf"
)

// Node-local data traffic over a UNIX domain socket (dfs.domain.socket.path).
//
// The DataNode serves the same DataTransferProtocol on the socket as on its
// TCP streaming port, through the same xceiver server (and the same limit
// of dfs.datanode.max.transfer.threads). A client on the same host that has
// dfs.client.domain.socket.data.traffic set connects there instead of over
// TCP: a domain socket moves data two to three times faster than loopback
// TCP and costs both sides less CPU (docs/PERFORMANCE.md).
//
// As in Hadoop, "_PORT" in the path is replaced with the TCP streaming port,
// so several DataNodes on one host can share one setting, and every
// directory above the socket must be safe: owned by root or by the
// DataNode's user, and not writable by others (or by a group other than
// root's) unless it has the sticky bit. Otherwise another local user could
// put their own socket in its place.

// maxSocketPath is the longest path a UNIX socket address holds on Linux
// (sun_path is 108 bytes with the terminating NUL).
const maxSocketPath = 107

// CheckDomainSocketPath reports whether the DataNode can put its domain
// socket at path (with "_PORT" already replaced): an absolute path short
// enough for a socket address, in safe directories.
func CheckDomainSocketPath(path string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("datanode: %s: %s", conf.DFSDomainSocketPath, fmt.Sprintf(format, args...))
	}
	if !filepath.IsAbs(path) {
		return bad("%q is not an absolute path", path)
	}
	if len(path) > maxSocketPath {
		return bad("%q is %d bytes long; a UNIX socket path holds at most %d", path, len(path), maxSocketPath)
	}
	if err := checkSocketDirs(filepath.Dir(path), os.Getuid()); err != nil {
		return bad("%v", err)
	}
	return nil
}

// listenDomain creates the DataNode's domain socket at path. A socket left
// by a DataNode that died is replaced; any other file there is an error.
func listenDomain(path string) (*net.UnixListener, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("datanode: %s: %s", conf.DFSDomainSocketPath, fmt.Sprintf(format, args...))
	}
	if err := CheckDomainSocketPath(path); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, bad("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, bad("removing the stale socket: %v", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, bad("%v", err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, bad("%v", err)
	}
	// Any local user may connect, as to the TCP port.
	if err := os.Chmod(path, 0o666); err != nil {
		_ = l.Close()
		return nil, bad("%v", err)
	}
	return l, nil
}

// checkSocketDirs checks dir and every directory above it (see the comment
// at the top of the file).
func checkSocketDirs(dir string, uid int) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("cannot read the owner of %s", d)
		}
		mode := fi.Mode()
		sticky := mode&fs.ModeSticky != 0
		switch {
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory", d)
		case st.Uid != 0 && int(st.Uid) != uid:
			return fmt.Errorf("the directory %s is owned by uid %d, neither root nor the DataNode's uid %d", d, st.Uid, uid)
		case mode.Perm()&0o002 != 0 && !sticky:
			return fmt.Errorf("the directory %s (mode %v) is writable by everyone; make it safe with chmod o-w %s", d, mode.Perm(), d)
		case mode.Perm()&0o020 != 0 && st.Gid != 0 && !sticky:
			return fmt.Errorf("the directory %s (mode %v) is writable by group %d; make it safe with chmod g-w %s", d, mode.Perm(), st.Gid, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
