package namenode

import (
	"os/user"
	"sync"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/clock"
)

// groupCache resolves a user's groups from the NameNode host's OS accounts, as
// Hadoop's default ShellBasedUnixGroupsMapping does, caching answers for
// hadoop.security.groups.cache.secs (300 s). Users that are not OS accounts
// (common for simple auth) have no groups. Safe for concurrent use.
type groupCache struct {
	clock clock.Clock
	ttl   time.Duration
	// static are hadoop.user.group.static.mapping.overrides: set before
	// the NameNode serves, read-only after.
	static map[string][]string
	mu     struct {
		sync.Mutex
		m map[string]groupEntry
	}
}

type groupEntry struct {
	groups  []string
	expires time.Time
}

func newGroupCache(c clock.Clock, ttl time.Duration) *groupCache {
	g := &groupCache{clock: c, ttl: ttl}
	g.mu.m = make(map[string]groupEntry)
	return g
}

func (g *groupCache) groups(name string) []string {
	if gs, ok := g.static[name]; ok {
		return gs
	}
	now := g.clock.Now()
	if e, ok := g.cached(name); ok && now.Before(e.expires) {
		return e.groups
	}
	var groups []string
	if u, err := user.Lookup(name); err == nil {
		if ids, err := u.GroupIds(); err == nil {
			for _, id := range ids {
				if gr, err := user.LookupGroupId(id); err == nil {
					groups = append(groups, gr.Name)
				}
			}
		}
	}
	g.store(name, groupEntry{groups: groups, expires: now.Add(g.ttl)})
	return groups
}

// clear forgets every cached answer (dfsadmin -refreshUserToGroupsMappings).
func (g *groupCache) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.m = make(map[string]groupEntry)
}

func (g *groupCache) cached(name string) (groupEntry, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.mu.m[name]
	return e, ok
}

func (g *groupCache) store(name string, e groupEntry) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.mu.m) > 10000 {
		g.mu.m = make(map[string]groupEntry)
	}
	g.mu.m[name] = e
}
