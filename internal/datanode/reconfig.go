package datanode

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/datanode/storage"
	"github.com/hdfsgo/hdfsgo/internal/ipc"
	"github.com/hdfsgo/hdfsgo/internal/proto/hdfs"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
	"google.golang.org/protobuf/proto"
)

// ReconfigurationProtocol is the Java interface name of the DataNode's
// reconfiguration service (the same methods are also ClientDatanodeProtocol
// methods, which is how dfsadmin -reconfig datanode calls them).
const ReconfigurationProtocol = "org.apache.hadoop.hdfs.protocol.ReconfigurationProtocol"

// reconfigurable lists the properties a running DataNode takes from a
// reconfiguration (dfsadmin -reconfig datanode HOST:IPC_PORT start).
var reconfigurable = []string{conf.DFSDataNodeDataDir}

// reconfTask is one reconfiguration: started by startReconfiguration, it
// reads the configuration again (Deps.ReloadConf) and applies each
// reconfigurable property that changed, recording what happened for
// getReconfigurationStatus.
//
//	startReconfiguration ──▶ running ──▶ done (endTime, one change per property:
//	                        (another start is refused)       error message or none)
type reconfTask struct {
	start, end time.Time // end zero while running
	changes    []reconfChange
}

type reconfChange struct {
	name, oldValue, newValue string
	err                      string // "" when it was applied
}

// registerReconfig registers the reconfiguration methods on svc.
func (dn *DataNode) registerReconfig(svc *ipc.Service) {
	ipc.Handle(svc, "startReconfiguration", func(ctx context.Context, _ *hdfs.StartReconfigurationRequestProto) (*hdfs.StartReconfigurationResponseProto, error) {
		if err := dn.startReconfiguration(); err != nil {
			return nil, err
		}
		return &hdfs.StartReconfigurationResponseProto{}, nil
	})
	ipc.Handle(svc, "getReconfigurationStatus", func(ctx context.Context, _ *hdfs.GetReconfigurationStatusRequestProto) (*hdfs.GetReconfigurationStatusResponseProto, error) {
		return dn.reconfigurationStatus(), nil
	})
	ipc.Handle(svc, "listReconfigurableProperties", func(ctx context.Context, _ *hdfs.ListReconfigurablePropertiesRequestProto) (*hdfs.ListReconfigurablePropertiesResponseProto, error) {
		return &hdfs.ListReconfigurablePropertiesResponseProto{Name: append([]string(nil), reconfigurable...)}, nil
	})
}

// startReconfiguration starts a reconfiguration task on a goroutine the
// DataNode owns.
func (dn *DataNode) startReconfiguration() error {
	if dn.reloadConf == nil {
		return remoteerr.New(remoteerr.ClassUnsupported, "datanode: startReconfiguration is not supported by this DataNode: it was started without configuration files to read again")
	}
	c, err := dn.reloadConf()
	if err != nil {
		return remoteerr.New(remoteerr.ClassIOException, "datanode: reading the configuration again: %v", err)
	}
	dn.mu.Lock()
	if t := dn.mu.reconf; t != nil && t.end.IsZero() {
		dn.mu.Unlock()
		return remoteerr.New(remoteerr.ClassIOException, "Another reconfiguration task is running.")
	}
	task := &reconfTask{start: dn.clk.Now()}
	dn.mu.reconf = task
	oldDirs := strings.Join(dn.mu.dataDirs, ",")
	dn.mu.Unlock()
	newDirs := strings.Join(c.Strings(conf.DFSDataNodeDataDir), ",")
	dn.log.Info("reconfiguration started", conf.DFSDataNodeDataDir, newDirs)
	dn.wg.Add(1)
	go func() {
		defer dn.wg.Done()
		var changes []reconfChange
		if !sameDataDirs(oldDirs, newDirs) {
			ch := reconfChange{name: conf.DFSDataNodeDataDir, oldValue: oldDirs, newValue: newDirs}
			if err := dn.reconfigureDataDirs(c.Strings(conf.DFSDataNodeDataDir)); err != nil {
				ch.err = err.Error()
				dn.log.Error("reconfiguration of "+conf.DFSDataNodeDataDir+" failed", "err", err)
			}
			changes = append(changes, ch)
		}
		dn.mu.Lock()
		task.changes, task.end = changes, dn.clk.Now()
		dn.mu.Unlock()
		dn.log.Info("reconfiguration finished", "changes", len(changes))
	}()
	return nil
}

// sameDataDirs reports whether two dfs.datanode.data.dir values name the
// same volumes (order, spelling and whitespace aside).
func sameDataDirs(a, b string) bool {
	norm := func(v string) []string {
		var out []string
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			d, st, err := parseDataDir(e)
			if err != nil {
				out = append(out, e)
				continue
			}
			out = append(out, dataDirEntry(d, st))
		}
		sort.Strings(out)
		return out
	}
	x, y := norm(a), norm(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// reconfigureDataDirs makes the volumes in service those of entries: new
// directories (and failed ones listed again) are opened, formatted if empty
// and added; directories no longer listed leave service, their replicas
// reported lost. A full block report follows.
func (dn *DataNode) reconfigureDataDirs(entries []string) error {
	dn.mu.Lock()
	ready := dn.mu.ds != nil
	dn.mu.Unlock()
	if !ready {
		return fmt.Errorf("%w: volumes can be changed once the DataNode has joined its block pool", ErrPoolNotReady)
	}
	want := map[string]storage.StorageType{}
	var order []string
	for _, e := range entries {
		d, st, err := parseDataDir(e)
		if err != nil {
			return fmt.Errorf("%s: %w", conf.DFSDataNodeDataDir, err)
		}
		if _, dup := want[d]; dup {
			return fmt.Errorf("%s: %s is listed twice", conf.DFSDataNodeDataDir, d)
		}
		want[d] = st
		order = append(order, d)
	}
	if len(want) == 0 {
		return fmt.Errorf("%s: no data directory left", conf.DFSDataNodeDataDir)
	}
	var errs []error
	inService := map[string]bool{}
	for _, v := range dn.volumes() {
		inService[v.Dir()] = true
		st, keep := want[v.Dir()]
		switch {
		case !keep:
			if err := dn.removeVolume(v); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", v.Dir(), err))
			}
		case st != v.StorageType():
			errs = append(errs, fmt.Errorf("%s: changing the storage type of a volume in service (%s to %s) is not supported: remove it, then add it",
				v.Dir(), v.StorageType(), st))
		}
	}
	for _, d := range order {
		if inService[d] {
			continue
		}
		if err := dn.addVolume(d, want[d], dn.volTesting); err != nil {
			errs = append(errs, fmt.Errorf("adding %s: %w", d, err))
		}
	}
	// Failures of volumes no longer configured are forgotten.
	dn.mu.Lock()
	kept := dn.mu.failed[:0]
	for _, f := range dn.mu.failed {
		if _, ok := want[f.Dir]; ok {
			kept = append(kept, f)
		}
	}
	dn.mu.failed = kept
	var applied []string
	for _, v := range dn.mu.ds.Volumes() {
		applied = append(applied, dataDirEntry(v.Dir(), v.StorageType()))
	}
	for _, f := range dn.mu.failed {
		applied = append(applied, dataDirEntry(f.Dir, f.StorageType))
	}
	if len(errs) == 0 {
		dn.mu.dataDirs = append([]string(nil), entries...)
	} else {
		dn.mu.dataDirs = applied
	}
	dn.mu.Unlock()
	dn.requestFullReports()
	return errors.Join(errs...)
}

// reconfigurationStatus is getReconfigurationStatus's answer: start time 0
// when no reconfiguration ever ran.
func (dn *DataNode) reconfigurationStatus() *hdfs.GetReconfigurationStatusResponseProto {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	t := dn.mu.reconf
	if t == nil {
		return &hdfs.GetReconfigurationStatusResponseProto{StartTime: proto.Int64(0)}
	}
	resp := &hdfs.GetReconfigurationStatusResponseProto{StartTime: proto.Int64(t.start.UnixMilli())}
	if !t.end.IsZero() {
		resp.EndTime = proto.Int64(t.end.UnixMilli())
		for _, c := range t.changes {
			ch := &hdfs.GetReconfigurationStatusConfigChangeProto{Name: proto.String(c.name), OldValue: proto.String(c.oldValue),
				NewValue: proto.String(c.newValue)}
			if c.err != "" {
				ch.ErrorMessage = proto.String(c.err)
			}
			resp.Changes = append(resp.Changes, ch)
		}
	}
	return resp
}
