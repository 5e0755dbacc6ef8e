package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// breakLinks gives each file that shares its inode with another name (the
// previous/ state an upgrade keeps, see upgrade.go) a copy of its own, so
// that a change made in place leaves the other name's bytes alone: the
// copy is written beside the file as <name>.unlinked, synced, renamed over
// the file, and the directory synced. Files with one name are left alone.
// A crash before the rename leaves the .unlinked file, which the start-up
// scan removes; after it, the file is already the private copy.
func breakLinks(paths ...string) error {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("datanode/storage: %w", err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink <= 1 {
			continue
		}
		if err := copyOver(p, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// copyOver replaces p by a fresh copy of itself.
func copyOver(p string, perm os.FileMode) (err error) {
	tmp := p + UnlinkSuffix
	in, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("datanode/storage: unlink %s: %w", p, err)
	}
	defer in.Close()
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("datanode/storage: unlink %s: %w", p, err)
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("datanode/storage: unlink %s: %w", p, err)
	}
	if err := fdatasync(out); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("datanode/storage: unlink %s: %w", p, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("datanode/storage: unlink %s: %w", p, err)
	}
	return syncDir(filepath.Dir(p))
}

// linkCount returns how many names p's inode has (1 when the file system
// does not say).
func linkCount(p string) (uint64, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		return 0, fmt.Errorf("datanode/storage: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink), nil
	}
	return 1, nil
}
