package zkfc

import (
	"fmt"
	"os"
	"strings"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper permission bits (ZooDefs.Perms), as ha.zookeeper.acl spells
// them: r w c d a.
var permLetters = map[rune]int32{
	'r': zk.PermRead, 'w': zk.PermWrite, 'c': zk.PermCreate, 'd': zk.PermDelete, 'a': zk.PermAdmin,
}

// ParseACL reads ha.zookeeper.acl as Hadoop's ZKUtil.parseACLs does: a
// comma-separated list of scheme:id:perms, where id may itself contain
// colons (digest:user:hash:rwcda) and perms are letters of "rwcda". An
// empty list means "the creator may do everything" (auth::cdrwa). Errors
// are ErrBadACL with Hadoop's text.
func ParseACL(s string) ([]zk.ACL, error) {
	var acl []zk.ACL
	for _, a := range splitTrim(s) {
		first, last := strings.IndexByte(a, ':'), strings.LastIndexByte(a, ':')
		if first < 0 || first == last {
			return nil, fmt.Errorf("%w: ACL '%s' not of expected form scheme:id:perm", ErrBadACL, a)
		}
		var perms int32
		for _, c := range a[last+1:] {
			p, ok := permLetters[c]
			if !ok {
				return nil, fmt.Errorf("%w: Invalid permission '%c' in permission string '%s'", ErrBadACL, c, a[last+1:])
			}
			perms |= p
		}
		acl = append(acl, zk.ACL{Scheme: a[:first], ID: a[first+1 : last], Perms: perms})
	}
	if len(acl) == 0 {
		return zk.AuthACL(zk.PermAll), nil
	}
	return acl, nil
}

// AuthInfo is one credential added to every ZooKeeper session.
type AuthInfo struct {
	Scheme string
	Auth   []byte
}

// ParseAuth reads ha.zookeeper.auth as Hadoop's ZKUtil.parseAuth does: a
// comma-separated list of scheme:auth (e.g. digest:hdfs-zkfcs:secret).
func ParseAuth(s string) ([]AuthInfo, error) {
	var out []AuthInfo
	for _, a := range splitTrim(s) {
		scheme, auth, ok := strings.Cut(a, ":")
		if !ok {
			return nil, fmt.Errorf("%w: Auth '%s' not of expected form scheme:auth", ErrBadACL, a)
		}
		out = append(out, AuthInfo{Scheme: scheme, Auth: []byte(auth)})
	}
	return out, nil
}

// resolveIndirection is Hadoop's resolveConfIndirection: a value
// "@/path/to/file" stands for the file's trimmed contents, so that ACLs
// and credentials need not sit in the configuration.
func resolveIndirection(key, v string) (string, error) {
	path, ok := strings.CutPrefix(v, "@")
	if !ok {
		return v, nil
	}
	b, err := os.ReadFile(strings.TrimSpace(path))
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBadConfig, key, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// splitTrim splits at commas, trims, and drops empty parts (Guava's
// Splitter.on(',').omitEmptyStrings().trimResults()).
func splitTrim(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
