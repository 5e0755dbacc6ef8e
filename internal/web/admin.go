package web

import (
	"net/http"
)

// Admins limits the administrative endpoints to administrators, as
// Hadoop's web server does with hadoop.security.authorization on: /conf,
// /stacks, /logLevel and /logs/ answer 403 to anyone else, /jmx stays open
// unless InstrumentationRequiresAdmin
// (hadoop.security.instrumentation.requires.admin).
type Admins struct {
	// ACL reports whether a user with these groups is on
	// dfs.cluster.administrators ("users groups"; default nobody); nil:
	// nobody is.
	ACL func(user string, groups []string) bool
	// SuperUser and members of SuperGroup (dfs.permissions.superusergroup)
	// are administrators too.
	SuperUser, SuperGroup string
	// Groups resolves a user's groups (nil: none).
	Groups func(user string) []string
	// StaticUser is the user of a request that names none
	// (hadoop.http.staticuser.user, default dr.who).
	StaticUser string
	// InstrumentationRequiresAdmin puts /jmx behind the same check.
	InstrumentationRequiresAdmin bool
}

// RemoteUser is the user a request speaks for: the one the server's Auth
// wrapper authenticated (SPNEGO), else, with SIMPLE web authentication
// (Hadoop's pseudo authentication), its user.name parameter, else
// staticUser.
func RemoteUser(r *http.Request, staticUser string) string {
	if u, ok := AuthenticatedUser(r.Context()); ok {
		return u
	}
	if u := r.URL.Query().Get("user.name"); u != "" {
		return u
	}
	if staticUser == "" {
		return "dr.who"
	}
	return staticUser
}

// allows reports whether user is an administrator.
func (a *Admins) allows(user string) bool {
	if user == a.SuperUser && user != "" {
		return true
	}
	var groups []string
	if a.Groups != nil {
		groups = a.Groups(user)
	}
	for _, g := range groups {
		if g == a.SuperGroup && g != "" {
			return true
		}
	}
	return a.ACL != nil && a.ACL(user, groups)
}

// adminOnly wraps an administrative endpoint: with Admins set, a
// non-administrator gets 403 "User NAME is unauthorized to access this
// page." (Hadoop's text).
func (s *Server) adminOnly(h http.Handler) http.Handler {
	a := s.admins
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := RemoteUser(r, a.StaticUser)
		if !a.allows(u) {
			http.Error(w, "User "+u+" is unauthorized to access this page.", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
