package conf

import (
	"fmt"
	"os/user"
	"strings"
)

// MaxSubstitutions is the number of ${var} substitutions one value may take
// (Hadoop's limit). More means a cycle or an absurd chain.
const MaxSubstitutions = 20

// maxExpandedLen bounds the length of an expanded value.
const maxExpandedLen = MaxFileSize

// expand substitutes ${var} references in raw, the value of key. A name is
// looked up as another key, as env.NAME (with optional ":-fallback" or
// "-fallback"), or as user.name (from $USER when not a key). A reference
// that cannot be resolved is left as written. A reference whose value
// contains the same reference leaves the whole value unexpanded. After MaxSubstitutions substitutions with references still resolvable it
// returns the partial value and an error naming key.
func (c *Conf) expand(key, raw string) (string, error) {
	if !strings.Contains(raw, "${") {
		return raw, nil
	}
	s := raw
	pos := 0
	steps := 0
	for {
		start, end, name := nextRef(s, pos)
		if start < 0 {
			return s, nil
		}
		val, ok := c.resolve(name)
		if !ok {
			pos = end
			continue
		}
		if strings.Contains(val, s[start:end]) {
			// The value refers to itself: give up on the whole value, as
			// Hadoop does, instead of looping to the limit.
			return raw, nil
		}
		if steps == MaxSubstitutions {
			return s, fmt.Errorf("%w: %s: more than %d substitutions expanding %q",
				ErrExpansionDepth, key, MaxSubstitutions, raw)
		}
		steps++
		if len(s)-(end-start)+len(val) > maxExpandedLen {
			return s, fmt.Errorf("%w: %s: expanded value longer than %d bytes",
				ErrExpansionDepth, key, maxExpandedLen)
		}
		s = s[:start] + val + s[end:]
		pos = start
	}
}

// nextRef finds the first ${name} at or after pos, where name is one or
// more characters other than '}', '$' and ' '. It returns the span of the
// reference and the name, or start -1 when there is none.
func nextRef(s string, pos int) (start, end int, name string) {
	for pos < len(s) {
		i := strings.Index(s[pos:], "${")
		if i < 0 {
			return -1, -1, ""
		}
		i += pos
		j := i + 2
		for j < len(s) && s[j] != '}' && s[j] != '$' && s[j] != ' ' {
			j++
		}
		if j < len(s) && s[j] == '}' && j > i+2 {
			return i, j + 1, s[i+2 : j]
		}
		pos = i + 1
	}
	return -1, -1, ""
}

// resolve looks up one reference name.
func (c *Conf) resolve(name string) (string, bool) {
	if env, ok := strings.CutPrefix(name, "env."); ok {
		fallback, hasFallback := "", false
		if i := strings.Index(env, ":-"); i >= 0 {
			env, fallback, hasFallback = env[:i], env[i+2:], true
		} else if i := strings.Index(env, "-"); i >= 0 {
			env, fallback, hasFallback = env[:i], env[i+1:], true
		}
		if v := c.env(env); v != "" {
			return v, true
		}
		return fallback, hasFallback
	}
	if e, ok := c.props[name]; ok {
		return e.value, true
	}
	if name == "user.name" {
		if u := c.env("USER"); u != "" {
			return u, true
		}
		// Services often run without $USER (systemd, containers, CI); Java's
		// user.name comes from the OS account, so fall back to it.
		if u, err := user.Current(); err == nil && u.Username != "" {
			return u.Username, true
		}
	}
	return "", false
}
