package namenode

import (
	_ "embed"
	"net/http"
)

// explorerHTML is the file browser (/explorer.html): a page whose script
// lists, opens, uploads, creates and deletes through this NameNode's
// /webhdfs/v1 (uploads go to the DataNode it names), with no asset from
// elsewhere.
//
//go:embed explorer.html
var explorerHTML []byte

func serveExplorer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'; connect-src *")
	w.Write(explorerHTML)
}
