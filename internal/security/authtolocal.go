package security

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ruleParser matches one auth_to_local rule at the start of the remaining
// text, with the same groups as Hadoop's KerberosName parser: 2 DEFAULT,
// 4 the component count, 5 the format, 7 the match regexp, 9 and 10 the
// substitution, 11 "g", 12 "L".
var ruleParser = regexp.MustCompile(`^\s*((DEFAULT)|(RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?`)

// goReplacement turns a Java replacement string ($n group references)
// into Go's syntax (${n}); any other $ is literal.
func goReplacement(to string) string {
	var b strings.Builder
	for i := 0; i < len(to); i++ {
		if to[i] != '$' {
			b.WriteByte(to[i])
			continue
		}
		j := i + 1
		for j < len(to) && to[j] >= '0' && to[j] <= '9' {
			j++
		}
		if j == i+1 {
			b.WriteString("$$")
			continue
		}
		b.WriteString("${" + to[i+1:j] + "}")
		i = j - 1
	}
	return b.String()
}

// Rule is one hadoop.security.auth_to_local rule.
type Rule struct {
	Default    bool
	Components int
	Format     string
	Match      *regexp.Regexp // nil: every name matches
	From       *regexp.Regexp // nil: no substitution
	To         string         // Go replacement syntax (${n})
	Global     bool
	Lower      bool
	text       string
}

// String returns the rule as it was written.
func (r Rule) String() string { return r.text }

// Rules is a parsed hadoop.security.auth_to_local value, applied in order.
type Rules []Rule

// ErrNoMatchingRule is returned by ShortName when no rule applies.
var ErrNoMatchingRule = errors.New("no auth_to_local rule applies")

// MaxRulesLength bounds the text ParseRules accepts.
const MaxRulesLength = 64 << 10

// ParseRules parses the value of hadoop.security.auth_to_local as Hadoop
// does: rules separated by white space, each DEFAULT or
// RULE:[n:format](regexp)s/from/to/[g] with an optional /L (lower case).
// An empty value means DEFAULT.
func ParseRules(s string) (Rules, error) {
	if len(s) > MaxRulesLength {
		return nil, fmt.Errorf("hadoop.security.auth_to_local: %d bytes, the limit is %d", len(s), MaxRulesLength)
	}
	remaining := strings.TrimSpace(s)
	if remaining == "" {
		return Rules{{Default: true, text: "DEFAULT"}}, nil
	}
	var rules Rules
	for remaining != "" {
		m := ruleParser.FindStringSubmatchIndex(remaining)
		if m == nil || m[1] == 0 {
			return nil, fmt.Errorf("hadoop.security.auth_to_local: Invalid rule: %s", remaining)
		}
		g := func(i int) (string, bool) {
			if m[2*i] < 0 {
				return "", false
			}
			return remaining[m[2*i]:m[2*i+1]], true
		}
		text, _ := g(0)
		text = strings.TrimSpace(text)
		if _, ok := g(2); ok {
			_, lower := g(12)
			rules = append(rules, Rule{Default: true, Lower: lower, text: text})
		} else {
			r := Rule{text: text}
			n, _ := g(4)
			c, err := strconv.Atoi(n)
			if err != nil || c < 0 || c > 2 {
				return nil, fmt.Errorf("hadoop.security.auth_to_local: bad component count %q in rule %s", n, text)
			}
			r.Components = c
			r.Format, _ = g(5)
			if match, ok := g(7); ok {
				re, err := regexp.Compile("^(?:" + match + ")$")
				if err != nil {
					return nil, fmt.Errorf("hadoop.security.auth_to_local: bad regexp %q in rule %s: %v", match, text, err)
				}
				r.Match = re
			}
			if from, ok := g(9); ok {
				re, err := regexp.Compile(from)
				if err != nil {
					return nil, fmt.Errorf("hadoop.security.auth_to_local: bad regexp %q in rule %s: %v", from, text, err)
				}
				r.From = re
				to, _ := g(10)
				r.To = goReplacement(to)
				_, r.Global = g(11)
			}
			_, r.Lower = g(12)
			rules = append(rules, r)
		}
		remaining = remaining[m[1]:]
	}
	return rules, nil
}

// Principal is a Kerberos name split into its parts: primary[/instance]@realm.
type Principal struct {
	Primary, Instance, Realm string
}

// ParsePrincipal splits a principal name. A name without a realm has an
// empty Realm.
func ParsePrincipal(name string) (Principal, error) {
	var p Principal
	rest := name
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		p.Realm = rest[i+1:]
		rest = rest[:i]
		if strings.ContainsAny(p.Realm, "@/") {
			return p, fmt.Errorf("Malformed Kerberos name: %s", name)
		}
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		p.Instance = rest[i+1:]
		rest = rest[:i]
		if strings.ContainsRune(p.Instance, '/') {
			return p, fmt.Errorf("Malformed Kerberos name: %s", name)
		}
	}
	p.Primary = rest
	if p.Primary == "" {
		return p, fmt.Errorf("Malformed Kerberos name: %s", name)
	}
	return p, nil
}

// String returns primary[/instance][@realm].
func (p Principal) String() string {
	s := p.Primary
	if p.Instance != "" {
		s += "/" + p.Instance
	}
	if p.Realm != "" {
		s += "@" + p.Realm
	}
	return s
}

// apply returns the rule's result for the name, or ok=false when the rule
// does not apply.
func (r Rule) apply(p Principal, defaultRealm string) (string, bool, error) {
	var result string
	if r.Default {
		if p.Realm != defaultRealm {
			return "", false, nil
		}
		result = p.Primary
	} else {
		params := []string{p.Realm, p.Primary}
		if p.Instance != "" {
			params = append(params, p.Instance)
		}
		if len(params)-1 != r.Components {
			return "", false, nil
		}
		base, err := fillFormat(r.Format, params)
		if err != nil {
			return "", false, err
		}
		if r.Match != nil && !r.Match.MatchString(base) {
			return "", false, nil
		}
		result = base
		if r.From != nil {
			if r.Global {
				result = r.From.ReplaceAllString(base, r.To)
			} else if loc := r.From.FindStringSubmatchIndex(base); loc != nil {
				var out []byte
				out = r.From.ExpandString(out, r.To, base, loc)
				result = base[:loc[0]] + string(out) + base[loc[1]:]
			}
		}
	}
	if strings.ContainsAny(result, "/@") {
		return "", false, fmt.Errorf("Non-simple name %s after auth_to_local rule %s", result, r.text)
	}
	if r.Lower {
		result = strings.ToLower(result)
	}
	return result, true, nil
}

// fillFormat replaces $n in a rule's format by the n-th parameter ($0 the
// realm, $1 the primary, $2 the instance).
func fillFormat(format string, params []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '$' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			j++
		}
		if j == i+1 {
			return "", fmt.Errorf("bad format in username mapping in %s: $ without a number", format)
		}
		n, err := strconv.Atoi(format[i+1 : j])
		if err != nil || n >= len(params) {
			return "", fmt.Errorf("index %s from %s is outside of the valid range 0 to %d", format[i+1:j], format, len(params)-1)
		}
		b.WriteString(params[n])
		i = j - 1
	}
	return b.String(), nil
}

// ShortName maps a principal to a local user name with the rules, the
// first rule that applies winning. defaultRealm is the realm of the
// Kerberos configuration (DEFAULT maps only its principals).
func (rs Rules) ShortName(principal, defaultRealm string) (string, error) {
	p, err := ParsePrincipal(principal)
	if err != nil {
		return "", err
	}
	if p.Realm == "" && p.Instance == "" {
		return p.Primary, nil // already a short name
	}
	for _, r := range rs {
		name, ok, err := r.apply(p, defaultRealm)
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: No rules applied to %s", ErrNoMatchingRule, principal)
}
