package namenode

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// rackResolver maps DataNode addresses to rack paths, as Hadoop's
// DNSToSwitchMapping does: from net.topology.table.file.name ("host rack" per
// line, read once), else by running net.topology.script.file.name with the
// address as argument (answers cached), else /default-rack.
type rackResolver struct {
	table  map[string]string
	script string
	mu     struct {
		sync.Mutex
		cache map[string]string
	}
}

func newRackResolver(cfg *Config) (*rackResolver, error) {
	r := &rackResolver{script: cfg.TopologyScript}
	r.mu.cache = make(map[string]string)
	if cfg.TopologyTable != "" {
		f, err := os.Open(cfg.TopologyTable)
		if err != nil {
			return nil, fmt.Errorf("namenode: net.topology.table.file.name: %w", err)
		}
		defer f.Close()
		r.table = make(map[string]string)
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			if len(fields) != 2 || !strings.HasPrefix(fields[1], "/") {
				return nil, fmt.Errorf("namenode: %s line %d: want \"host /rack\", got %q", cfg.TopologyTable, line, sc.Text())
			}
			r.table[fields[0]] = fields[1]
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("namenode: %s: %w", cfg.TopologyTable, err)
		}
	}
	return r, nil
}

// rack resolves one address ("" means the default rack).
func (r *rackResolver) rack(ip string) string {
	if r.table != nil {
		return r.table[ip]
	}
	if r.script == "" {
		return ""
	}
	if v, ok := r.cached(ip); ok {
		return v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.script, ip).Output()
	v := ""
	if err == nil {
		if f := strings.Fields(string(out)); len(f) > 0 && strings.HasPrefix(f[0], "/") {
			v = f[0]
		}
	}
	r.store(ip, v)
	return v
}

func (r *rackResolver) cached(ip string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.mu.cache[ip]
	return v, ok
}

func (r *rackResolver) store(ip, rack string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.cache[ip] = rack
}
