package zkfc

import (
	"os/user"
	"slices"
	"strings"
)

// AccessList is Hadoop's AccessControlList as dfs.cluster.administrators
// holds it: "user1,user2 group1,group2"; "*" lets everyone in; " " (the
// default) nobody.
type AccessList struct {
	All    bool
	Users  []string
	Groups []string
}

// ParseAccessList reads an access list.
func ParseAccessList(s string) AccessList {
	if strings.TrimSpace(s) == "*" {
		return AccessList{All: true}
	}
	users, groups, _ := strings.Cut(s, " ")
	return AccessList{Users: splitTrim(users), Groups: splitTrim(groups)}
}

// Allows reports whether user, a member of groups, is on the list.
func (a AccessList) Allows(name string, groups []string) bool {
	if a.All || slices.Contains(a.Users, name) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(a.Groups, g) {
			return true
		}
	}
	return false
}

// osGroups are the groups of an account of this host, as Hadoop's default
// shell-based group mapping finds them; none for a user that is not one.
func osGroups(name string) []string {
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out
}
