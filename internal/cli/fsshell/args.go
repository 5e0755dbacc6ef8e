package fsshell

import (
	"fmt"
	"math"
	"strings"
)

// usageError is a bad command line. Run prints it prefixed with the
// command as typed ("-ls: Illegal option -z"), then the command's usage,
// and exits with status 255 (Hadoop's -1).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// flagSet is the parsed form of Hadoop's simple option syntax: each option
// is one word ("-R", "-skipTrash"; "-Rf" is not "-R -f"); parsing stops at
// the first word not starting with "-", at "-" itself, or after "--".
type flagSet struct {
	set map[string]bool
}

func (f *flagSet) on(name string) bool { return f.set[name] }

// parseFlags removes the options from args and checks the number of
// remaining arguments against min and max. With ignoreUnknown, unknown
// options stay in args (chmod uses this so "-w" can be a mode).
func parseFlags(args []string, min, max int, names []string, ignoreUnknown bool) (*flagSet, []string, error) {
	fs := &flagSet{set: map[string]bool{}}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	rest := append([]string(nil), args...)
	pos := 0
	for pos < len(rest) {
		a := rest[pos]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a == "--" {
			rest = append(rest[:pos], rest[pos+1:]...)
			break
		}
		opt := a[1:]
		switch {
		case known[opt]:
			rest = append(rest[:pos], rest[pos+1:]...)
			fs.set[opt] = true
		case ignoreUnknown:
			pos++
		default:
			return nil, nil, usagef("Illegal option %s", a)
		}
	}
	if len(rest) < min {
		return nil, nil, usagef("Not enough arguments: expected %d but got %d", min, len(rest))
	}
	if max >= 0 && len(rest) > max {
		return nil, nil, usagef("Too many arguments: expected %d but got %d", max, len(rest))
	}
	return fs, rest, nil
}

// unlimited is the max argument count of commands taking any number.
const unlimited = math.MaxInt32
