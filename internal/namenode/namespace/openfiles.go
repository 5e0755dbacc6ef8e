package namespace

import (
	"sort"
	"strings"
)

// OpenFile is one file open for write, as listOpenFiles reports it.
type OpenFile struct {
	ID            uint64
	Path          string
	ClientName    string
	ClientMachine string
}

// OpenFiles returns, in inode id order, up to max files open for write
// whose id is above after and whose path is prefix or below it ("/" for
// all), and whether more follow.
func (t *Tree) OpenFiles(after uint64, prefix string, max int) (files []OpenFile, more bool) {
	ids := make([]uint64, 0, len(t.uc))
	for id := range t.uc {
		if id > after {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	prefix = strings.TrimSuffix(prefix, "/")
	for _, id := range ids {
		f := t.uc[id]
		p := joinPath(dirPath(f.ucd().parent), f.name)
		if prefix != "" && p != prefix && !strings.HasPrefix(p, prefix+"/") {
			continue
		}
		if len(files) == max {
			return files, true
		}
		files = append(files, OpenFile{ID: id, Path: p, ClientName: f.ucd().client, ClientMachine: f.ucd().machine})
	}
	return files, false
}
