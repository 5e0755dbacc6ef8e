package bench

import (
	"fmt"
	"io"
	"path"
	"runtime"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog/op"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
)

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// buildTree makes the namespace the create op would leave behind with Close
// set (every file created and completed, no blocks), applying the same ops
// the NameNode logs (Mkdir, Add, Close) straight to a namespace.Tree.
func buildTree(user string, gen names, now int64, features string) (*namespace.Tree, error) {
	tr := namespace.New(namespace.DefaultConfig(user))
	fperm := op.Perm{User: user, Group: "supergroup", Mode: 0o644}
	dperm := op.Perm{User: user, Group: "supergroup", Mode: 0o755}
	made := map[string]bool{"/": true}
	var mkdirs func(p string) error
	mkdirs = func(p string) error {
		if made[p] {
			return nil
		}
		if err := mkdirs(path.Dir(p)); err != nil {
			return err
		}
		made[p] = true
		return tr.Apply(&op.Mkdir{InodeID: tr.NextInodeID(), Path: p, Mtime: now, Perm: dperm})
	}
	for i := 0; i < gen.n; i++ {
		p := gen.path(i)
		if i%gen.perDir == 0 {
			if err := mkdirs(path.Dir(p)); err != nil {
				return nil, err
			}
		}
		add := &op.Add{InodeID: tr.NextInodeID(), Path: p, Replication: 3, Mtime: now, Atime: now,
			BlockSize: blockSize, Perm: fperm, ClientName: "memory-client-0", ClientMachine: "127.0.0.1", Overwrite: true}
		if err := tr.Apply(add); err != nil {
			return nil, err
		}
		if err := tr.Apply(&op.Close{Path: p, Mtime: now, Atime: now}); err != nil {
			return nil, err
		}
		var feat op.Op
		switch features {
		case "xattr":
			feat = &op.SetXAttr{Path: p, XAttrs: []op.XAttr{{NS: op.XAttrUser, Name: "tag", Value: []byte("value-01")}}}
		case "acl":
			feat = &op.SetACL{Path: p, Entries: []op.ACLEntry{{Type: op.ACLUser, Perm: 6}, {Type: op.ACLUser, Name: "bob", Perm: 4},
				{Type: op.ACLGroup, Perm: 4}, {Type: op.ACLMask, Perm: 4}, {Type: op.ACLOther, Perm: 4}}}
		}
		if feat != nil {
			if err := tr.Apply(feat); err != nil {
				return nil, err
			}
		}
	}
	return tr, nil
}

// runMemory reports the heap a namespace of opts.Files empty files holds.
func runMemory(opts Options, out io.Writer) error {
	gen := newNames(BaseDir+"/"+OpMemory, "ThroughputBench", opts.Files, opts.FilesPerDir)
	before := heapInUse()
	start := time.Now()
	switch opts.Features {
	case "", "xattr", "acl":
	default:
		return fmt.Errorf("bench: memory: -features %q: want xattr or acl", opts.Features)
	}
	tr, err := buildTree(opts.User, gen, start.UnixMilli(), opts.Features)
	if err != nil {
		return fmt.Errorf("bench: memory: %w", err)
	}
	build := time.Since(start)
	after := heapInUse()
	files, dirs := tr.NumFiles(), tr.NumDirs()
	runtime.KeepAlive(tr)
	used := float64(after) - float64(before)

	fmt.Fprintf(out, "\n--- %s inputs ---\nnrFiles = %d\nnrFilesPerDir = %d\n", OpMemory, opts.Files, opts.FilesPerDir)
	if opts.Features != "" {
		fmt.Fprintf(out, "features = %s (inodes with features: %d, distinct ACLs: %d)\n", opts.Features, tr.NumWithFeatures(), tr.NumACLs())
	}
	fmt.Fprintf(out, "--- %s stats ---\n", OpMemory)
	fmt.Fprintf(out, "# files: %d\n# directories: %d\n", files, dirs)
	fmt.Fprintf(out, "Build Time: %d ms (ops applied to the namespace, no RPC, no log)\n", build.Milliseconds())
	fmt.Fprintf(out, "Heap in use by the namespace: %.1f MB\n", used/1e6)
	fmt.Fprintf(out, "Bytes per file: %.1f (heap / files, directories included)\n", used/float64(files))
	fmt.Fprintf(out, "Bytes per inode: %.1f\n", used/float64(files+dirs))
	return nil
}
