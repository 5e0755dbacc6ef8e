package namenode

import (
	"fmt"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/namenode/namespace"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
)

// loadTree builds the namespace from the newest image in cfg.NameDirs that
// loads (its MD5 checked) and belongs to namespace nsID; it returns the tree
// and the image's txid. Start-up and the checkpointers' gap path use it.
func loadTree(fsys vfs.FS, cfg *Config, nsID int32) (*namespace.Tree, int64, error) {
	var tree *namespace.Tree
	txid, err := fsimage.Load(fsys, cfg.NameDirs, func(h fsimage.Header, r *fsimage.Reader) error {
		if h.NamespaceID != nsID {
			return fmt.Errorf("namenode: image has namespaceID %d, VERSION says %d", h.NamespaceID, nsID)
		}
		t, err := namespace.NewFromImage(treeConfig(cfg), h, r.Next)
		if err != nil {
			return err
		}
		tree = t
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return tree, txid, nil
}
