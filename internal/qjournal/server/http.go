package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/qjournal/protocol"
	"github.com/hdfsgo/hdfsgo/internal/version"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Header naming the file /getJournal sends (Hadoop's ImageServlet header).
const headerFileName = "X-Image-Edits-Name"

// registerWeb mounts /getJournal, the status page and the beans.
func (jn *JournalNode) registerWeb() {
	jn.web.Handle("GET "+protocol.GetJournalPath, http.HandlerFunc(jn.serveGetJournal))
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { web.RenderPage(w, jn.statusPage()) })
	jn.web.Handle("GET /{$}", page)
	jn.web.Handle("GET /journalnode.html", page)
	jn.web.AddBean(web.Bean{Name: "Hadoop:service=JournalNode,name=JournalNodeInfo",
		ModelerType: "org.apache.hadoop.hdfs.qjournal.server.JournalNode", Attrs: jn.infoAttrs})
	jn.web.AddBean(web.RuntimeBean("JournalNode"))
}

// addJournalBean registers the bean of a journal opened now.
func (jn *JournalNode) addJournalBean(j *Journal) {
	jn.web.AddBean(web.Bean{Name: "Hadoop:service=JournalNode,name=Journal-" + j.jid,
		ModelerType: "Journal-" + j.jid, Attrs: func() []web.Attr { return jn.journalAttrs(j) }})
}

// serveGetJournal sends a segment file byte for byte (see package protocol
// for the exchange).
func (jn *JournalNode) serveGetJournal(w http.ResponseWriter, r *http.Request) {
	q, err := protocol.ParseGetJournal(r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	j := jn.existingJournal(q.JournalID)
	if j == nil {
		http.Error(w, fmt.Sprintf("No journal %q on this JournalNode", q.JournalID), http.StatusNotFound)
		return
	}
	mine, ok := j.storageInfoString()
	if !ok {
		http.Error(w, fmt.Sprintf("Journal %s is not formatted", q.JournalID), http.StatusNotFound)
		return
	}
	if q.StorageInfo != "" && q.StorageInfo != mine {
		msg := fmt.Sprintf("This node has storage info '%s' but the requesting node expected '%s'", mine, clip(q.StorageInfo))
		jn.deps.Logger.Warn("refused a segment request", "remote", r.RemoteAddr, "why", msg)
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	f, name, size, err := j.openSegment(q.SegmentTxID)
	if err != nil {
		if errors.Is(err, errNoSegment) {
			http.Error(w, fmt.Sprintf("No edit log found starting at txid %d", q.SegmentTxID), http.StatusNotFound)
			return
		}
		http.Error(w, "getedit failed. "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set(headerFileName, name)
	h.Set("Content-Disposition", "attachment; filename="+name)
	var src io.Reader = f
	if _, _, ip, _ := editlog.ParseSegmentName(name); !ip {
		// A finalized segment never changes: its length is known.
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		src = io.LimitReader(f, size)
	}
	// An in-progress one may grow, or lose a torn tail when it is
	// finalized, while it is sent: it goes chunked, up to where it ends.
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, src); err != nil {
		jn.deps.Logger.Debug("sending a segment", "segment", name, "to", r.RemoteAddr, "err", err)
	}
}

func (jn *JournalNode) journalAttrs(j *Journal) []web.Attr {
	s := j.Status()
	m := &j.metric
	attrs := []web.Attr{
		{Name: "tag.Context", Value: "dfs"},
		{Name: "tag.Hostname", Value: hostname()},
		{Name: "BatchesWritten", Value: m.batchesWritten.Load()},
		{Name: "TxnsWritten", Value: m.txnsWritten.Load()},
		{Name: "BytesWritten", Value: m.bytesWritten.Load()},
		{Name: "BatchesWrittenWhileLagging", Value: m.batchesWrittenWhileLagging.Load()},
	}
	now := jn.deps.Clock.Now()
	pcts := []float64{0.5, 0.75, 0.9, 0.95, 0.99}
	names := []string{"50th", "75th", "90th", "95th", "99th"}
	for _, win := range []int{60, 300, 3600} {
		n, q := m.syncs.window(now.Add(-time.Duration(win)*time.Second), pcts)
		prefix := fmt.Sprintf("Syncs%ds", win)
		attrs = append(attrs, web.Attr{Name: prefix + "NumOps", Value: n})
		for i, p := range names {
			attrs = append(attrs, web.Attr{Name: prefix + p + "PercentileLatencyMicros", Value: q[i]})
		}
	}
	last := int64(0)
	if !s.LastJournalTime.IsZero() {
		last = s.LastJournalTime.UnixMilli()
	}
	return append(attrs,
		web.Attr{Name: "CurrentLagTxns", Value: s.CurrentLagTxns},
		web.Attr{Name: "LastWrittenTxId", Value: s.HighestWrittenTxID},
		web.Attr{Name: "LastWriterEpoch", Value: s.LastWriterEpoch},
		web.Attr{Name: "LastPromisedEpoch", Value: s.LastPromisedEpoch},
		web.Attr{Name: "LastJournalTimestamp", Value: last},
		web.Attr{Name: "TxnsServedViaRpc", Value: m.txnsServedViaRPC.Load()},
		web.Attr{Name: "BytesServedViaRpc", Value: m.bytesServedViaRPC.Load()},
		web.Attr{Name: "RpcRequestCacheMissAmountNumMisses", Value: m.cacheMisses.Load()},
		web.Attr{Name: "RpcRequestCacheMissAmountAvgTxns", Value: avg(m.cacheMissTxns.Load(), m.cacheMisses.Load())},
		web.Attr{Name: "RpcEmptyResponses", Value: m.rpcEmptyResponses.Load()},
	)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

func avg(sum, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

func (jn *JournalNode) infoAttrs() []web.Attr {
	status := map[string]any{}
	var clusters []any
	seen := map[string]bool{}
	for _, j := range jn.Journals() {
		s := j.Status()
		status[s.JournalID] = map[string]any{"Formatted": strconv.FormatBool(s.Formatted)}
		if s.ClusterID != "" && !seen[s.ClusterID] {
			seen[s.ClusterID] = true
			clusters = append(clusters, s.ClusterID)
		}
	}
	return []web.Attr{
		{Name: "JournalsStatus", Value: status},
		{Name: "ClusterIds", Value: clusters},
		{Name: "Version", Value: version.String()},
		{Name: "RpcAddress", Value: jn.rpcAddr.String()},
		{Name: "HttpAddress", Value: jn.web.Addr().String()},
	}
}

func (jn *JournalNode) statusPage() web.Page {
	rows := [][]string{}
	for _, j := range jn.Journals() {
		s := j.Status()
		seg := "none"
		if s.CurrentSegment > 0 {
			seg = strconv.FormatInt(s.CurrentSegment, 10)
		}
		last := "never"
		if !s.LastJournalTime.IsZero() {
			last = s.LastJournalTime.UTC().Format(time.RFC3339)
		}
		rows = append(rows, []string{s.JournalID, strconv.FormatBool(s.Formatted), s.ClusterID,
			strconv.FormatUint(s.LastPromisedEpoch, 10), strconv.FormatUint(s.LastWriterEpoch, 10),
			strconv.FormatInt(s.CommittedTxID, 10), strconv.FormatInt(s.HighestWrittenTxID, 10),
			strconv.FormatInt(s.CurrentLagTxns, 10), seg, last, s.Dir})
	}
	return web.Page{
		Title:    "JournalNode",
		Subtitle: "RPC " + jn.rpcAddr.String() + ", web " + jn.web.Addr().String(),
		Sections: []web.Section{
			{Heading: "Overview", Rows: [][2]string{
				{"Edits directory", jn.cfg.EditsDir},
				{"Edit cache", editCacheText(jn.cfg)},
				{"JournalNode sync", syncText(jn.cfg)},
				{"Version", version.String()},
			}},
			{Heading: "Journals", Table: &web.Table{
				Header: []string{"Journal", "Formatted", "Cluster", "Last promised epoch", "Last writer epoch",
					"Committed txid", "Last written txid", "Lag (txns)", "Open segment", "Last write", "Directory"},
				Rows:  rows,
				Empty: "No journal yet",
			}},
		},
	}
}

func editCacheText(c Config) string {
	if !c.TailEditsInProgress {
		return "off (dfs.ha.tail-edits.in-progress is false)"
	}
	return fmt.Sprintf("%d bytes (dfs.journalnode.edit-cache-size.bytes)", c.EditCacheSize)
}

func syncText(c Config) string {
	if !c.EnableSync {
		return "off (dfs.journalnode.enable.sync is false)"
	}
	return "every " + c.SyncInterval.String()
}
