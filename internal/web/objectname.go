package web

import (
	"fmt"
	"strings"
)

// objectName is a parsed JMX ObjectName ("domain:key=value,...") or, when
// parsed as a pattern, an ObjectName pattern. Quoted values are not
// supported: a value runs to the next comma.
type objectName struct {
	domain string
	props  []property        // in the order written
	index  map[string]string // key -> value
	anyKey bool              // a lone "*" element: other keys allowed
}

type property struct{ key, value string }

// parseObjectName parses s. With pattern set, '*' and '?' are wildcards in
// the domain and in values, and a lone "*" element allows properties the
// pattern does not name; without it they are errors.
func parseObjectName(s string, pattern bool) (objectName, error) {
	bad := func(format string, args ...any) (objectName, error) {
		return objectName{}, fmt.Errorf("%w %q: %s", errBadPattern, s, fmt.Sprintf(format, args...))
	}
	domain, rest, ok := strings.Cut(s, ":")
	if !ok {
		return bad("no colon between domain and key properties")
	}
	if !pattern && strings.ContainsAny(domain, "*?") {
		return bad("wildcard in the domain of a name that is not a pattern")
	}
	if strings.ContainsAny(domain, "\n") {
		return bad("newline in domain")
	}
	if rest == "" {
		return bad("empty key property list")
	}
	n := objectName{domain: domain, index: make(map[string]string)}
	for _, elem := range strings.Split(rest, ",") {
		if elem == "*" {
			if !pattern {
				return bad("'*' in a name that is not a pattern")
			}
			if n.anyKey {
				return bad("'*' given more than once")
			}
			n.anyKey = true
			continue
		}
		k, v, ok := strings.Cut(elem, "=")
		switch {
		case !ok:
			return bad("element %q has no '='", elem)
		case k == "":
			return bad("empty key in element %q", elem)
		case strings.ContainsAny(k, "*?:\"\n"):
			return bad("invalid character in key %q", k)
		case v == "":
			return bad("empty value for key %q", k)
		case strings.ContainsAny(v, "=\"\n"):
			return bad("invalid character in value of key %q", k)
		case !pattern && strings.ContainsAny(v, "*?"):
			return bad("wildcard in the value of key %q in a name that is not a pattern", k)
		}
		if _, dup := n.index[k]; dup {
			return bad("duplicate key %q", k)
		}
		n.index[k] = v
		n.props = append(n.props, property{k, v})
	}
	return n, nil
}

// matches reports whether the name n (parsed without pattern) is selected
// by the pattern p. Property order does not matter.
func (p objectName) matches(n objectName) bool {
	if !glob(p.domain, n.domain) {
		return false
	}
	if !p.anyKey && len(p.props) != len(n.props) {
		return false
	}
	for _, pp := range p.props {
		v, ok := n.index[pp.key]
		if !ok || !glob(pp.value, v) {
			return false
		}
	}
	return true
}

// glob matches s against pattern, where '*' stands for any run of
// characters (possibly none) and '?' for exactly one. It runs in
// O(len(pattern)*len(s)) at worst.
func glob(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
