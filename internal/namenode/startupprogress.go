package namenode

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/vfs"
	"github.com/hdfsgo/hdfsgo/internal/web"
)

// Start-up progress, as Hadoop's StartupProgress reports it: four phases in
// order — loading the image, loading the edits after it, saving a
// checkpoint, safe mode — each with a count of what it has done out of a
// total. The first three are over when the NameNode serves; safe mode is
// read live from the block manager.

// The phases load records, by index.
const (
	phaseImage = iota
	phaseEdits
	phaseCheckpoint
	numLoadPhases
)

// phaseProgress is one phase: when it ran, what it read, what it counted.
type phaseProgress struct {
	begin, end   time.Time // zero: not started / not over
	file         string    // the image or edits it read, if one
	size         int64     // of file, -1 unknown
	count, total int64     // inodes, edits, blocks: done and to do
}

// startupProgress is what load records.
type startupProgress struct {
	began  time.Time
	phases [numLoadPhases]phaseProgress
}

// phaseInfo names a phase (Hadoop's Phase enum) and its one step.
var phaseInfo = [...]struct{ name, desc, step, stepDesc string }{
	{"LoadingFsImage", "Loading fsimage", "Inodes", "inodes"},
	{"LoadingEdits", "Loading edits", "", ""},
	{"SavingCheckpoint", "Saving checkpoint", "Inodes", "inodes"},
	{"SafeMode", "Safe mode", "AwaitingReportedBlocks", "awaiting reported blocks"},
}

// imageFileOf is the path and size of the image of txid in dirs, as load
// chose it ("", -1 if not found).
func imageFileOf(fsys vfs.FS, dirs []string, txid int64) (string, int64) {
	for _, d := range dirs {
		imgs, err := fsimage.List(fsys, d)
		if err != nil {
			continue
		}
		for _, img := range imgs {
			if img.TxID != txid {
				continue
			}
			if fi, err := fsys.Stat(img.Path); err == nil {
				return img.Path, fi.Size()
			}
			return img.Path, -1
		}
	}
	return "", -1
}

// phaseView is one phase as the page, /startupProgress and the bean show it.
type phaseView struct {
	Name            string     `json:"name"`
	Desc            string     `json:"desc"`
	Status          string     `json:"status"` // PENDING, RUNNING, COMPLETE
	PercentComplete float64    `json:"percentComplete"`
	ElapsedTime     int64      `json:"elapsedTime"` // ms
	File            string     `json:"file,omitempty"`
	Size            *int64     `json:"size,omitempty"`
	Steps           []stepView `json:"steps"`
	count, total    int64
}

type stepView struct {
	Name            string  `json:"name,omitempty"`
	Desc            string  `json:"desc,omitempty"`
	Count           int64   `json:"count"`
	Total           int64   `json:"total"`
	PercentComplete float64 `json:"percentComplete"`
	ElapsedTime     int64   `json:"elapsedTime"`
}

// progressView is the whole of start-up progress at now.
type progressView struct {
	ElapsedTime     int64       `json:"elapsedTime"`
	PercentComplete float64     `json:"percentComplete"`
	Phases          []phaseView `json:"phases"`
}

func fraction(count, total int64, done bool) float64 {
	switch {
	case done:
		return 1
	case total <= 0:
		return 0
	}
	return min(1, float64(count)/float64(total))
}

// startupView builds the view: the recorded phases and safe mode now.
func (nn *NameNode) startupView() progressView {
	now := nn.deps.Clock.Now()
	p := nn.progress
	phases := make([]phaseView, 0, len(phaseInfo))
	add := func(i int, ph phaseProgress) {
		v := phaseView{Name: phaseInfo[i].name, Desc: phaseInfo[i].desc, File: ph.file, count: ph.count, total: ph.total}
		if ph.file != "" && ph.size >= 0 {
			v.Size = &ph.size
		}
		end := ph.end
		switch {
		case ph.begin.IsZero():
			v.Status = "PENDING"
		case end.IsZero():
			v.Status, end = "RUNNING", now
		default:
			v.Status = "COMPLETE"
		}
		if !ph.begin.IsZero() {
			v.ElapsedTime = end.Sub(ph.begin).Milliseconds()
		}
		v.PercentComplete = fraction(ph.count, ph.total, v.Status == "COMPLETE")
		v.Steps = []stepView{{Name: phaseInfo[i].step, Desc: phaseInfo[i].stepDesc, Count: ph.count, Total: ph.total,
			PercentComplete: v.PercentComplete, ElapsedTime: v.ElapsedTime}}
		phases = append(phases, v)
	}
	for i, ph := range p.phases {
		add(i, ph)
	}
	sm := phaseProgress{begin: p.phases[phaseCheckpoint].end}
	nn.ns.readLocked(func() { sm.count, sm.total, sm.end = nn.ns.mu.bm.StartupSafeMode() })
	if !sm.end.IsZero() && sm.end.Before(sm.begin) {
		sm.end = sm.begin // left before the web pages began to count
	}
	add(phaseCheckpoint+1, sm)
	v := progressView{Phases: phases}
	end := sm.end
	if end.IsZero() {
		end = now
	}
	v.ElapsedTime = end.Sub(p.began).Milliseconds()
	for _, ph := range phases {
		v.PercentComplete += ph.PercentComplete / float64(len(phases))
	}
	return v
}

// startupAttrs is the StartupProgress bean: Hadoop's attribute names,
// PHASE{Count,ElapsedTime,PercentComplete,Total} for each phase.
func (nn *NameNode) startupAttrs() []web.Attr {
	v := nn.startupView()
	attrs := []web.Attr{{Name: "ElapsedTime", Value: v.ElapsedTime}, {Name: "PercentComplete", Value: v.PercentComplete}}
	for _, ph := range v.Phases {
		attrs = append(attrs,
			web.Attr{Name: ph.Name + "Count", Value: ph.count},
			web.Attr{Name: ph.Name + "ElapsedTime", Value: ph.ElapsedTime},
			web.Attr{Name: ph.Name + "Total", Value: ph.total},
			web.Attr{Name: ph.Name + "PercentComplete", Value: ph.PercentComplete})
	}
	return attrs
}

// serveStartupProgress is /startupProgress, the JSON the UI's page reads
// in Hadoop.
func (nn *NameNode) serveStartupProgress(w http.ResponseWriter, _ *http.Request) {
	b, err := json.MarshalIndent(nn.startupView(), "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(b, '\n'))
}

// startupPage is the Startup Progress tab.
func (nn *NameNode) startupPage() web.Page {
	v := nn.startupView()
	t := &web.Table{Header: []string{"Phase", "Completion", "Elapsed time"}}
	for _, ph := range v.Phases {
		name := ph.Desc
		if ph.File != "" {
			name += " " + ph.File
			if ph.Size != nil {
				name += " (" + web.Bytes(*ph.Size) + ")"
			}
		}
		t.Rows = append(t.Rows, []string{name, pct(ph.PercentComplete) + " " + ph.Status, seconds(ph.ElapsedTime)})
		if st := ph.Steps[0]; st.Desc != "" || st.Total > 0 {
			desc := st.Desc
			if desc == "" {
				desc = "edits"
			}
			t.Rows = append(t.Rows, []string{"    " + desc + " (" + strconv.FormatInt(st.Count, 10) + "/" + strconv.FormatInt(st.Total, 10) + ")",
				pct(st.PercentComplete), seconds(st.ElapsedTime)})
		}
	}
	return nn.tabPage("Startup Progress", web.Section{
		Heading: "Startup Progress",
		Note:    "Elapsed Time: " + seconds(v.ElapsedTime) + ", Percent Complete: " + pct(v.PercentComplete),
		Table:   t,
	})
}

func pct(f float64) string    { return strconv.Itoa(int(f*100+0.5)) + "%" }
func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) + " sec" }
