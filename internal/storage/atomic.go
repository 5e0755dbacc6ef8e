package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// TmpSuffix is appended to a file's name while AtomicWriteFile writes it. A file
// with this suffix that survives a crash is a leftover (see Dir.Analyze).
const TmpSuffix = ".tmp"

// AtomicWriteFile replaces path with data so that after a crash path holds
// either its old contents or all of data: it writes path+".tmp", syncs it,
// renames it over path and syncs the directory.
func AtomicWriteFile(fsys vfs.FS, path string, data []byte) (err error) {
	tmp := path + TmpSuffix
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer func() {
		if err != nil {
			_ = fsys.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("storage: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: rename %s to %s: %w", tmp, path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("storage: sync dir of %s: %w", path, err)
	}
	return nil
}

// MaxSmallFile is the largest file ReadFile accepts: it is meant for VERSION,
// seen_txid, md5 and epoch files, never for images or segments.
const MaxSmallFile = 1 << 20

// ReadFile returns the contents of a small metadata file (at most MaxSmallFile
// bytes; a larger file yields ErrTooLarge).
func ReadFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSmallFile+1))
	if err != nil {
		return nil, fmt.Errorf("storage: read %s: %w", path, err)
	}
	if len(data) > MaxSmallFile {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, path, MaxSmallFile)
	}
	return data, nil
}

// isNotExist reports whether err says a file does not exist, through any wrapping.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}

// MkdirAllSync creates dir and any missing parents, and makes every directory
// it created durable by syncing its parent: after a crash the whole path is
// there or the call did not return. dir's own entry in its parent is synced
// even when dir already existed, since whoever made it may not have.
func MkdirAllSync(fsys vfs.FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !isNotExist(err) {
			return fmt.Errorf("storage: stat %s: %w", d, err)
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		if parent := filepath.Dir(dir); parent != dir {
			if err := fsys.SyncDir(parent); err != nil {
				return fmt.Errorf("storage: sync dir %s: %w", parent, err)
			}
		}
		return nil
	}
	if err := fsys.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("storage: create %s: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		parent := filepath.Dir(missing[i])
		if err := fsys.SyncDir(parent); err != nil {
			return fmt.Errorf("storage: sync dir %s: %w", parent, err)
		}
	}
	return nil
}
