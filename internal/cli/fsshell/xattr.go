package fsshell

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/hdfsgo/hdfsgo/client"
)

// popOption removes "-opt VALUE" from args, as Hadoop's
// StringUtils.popOptionWithArgument does; ok is false when the option is
// absent, and an option without a value is a usage error.
func popOptionArg(args []string, opt string) (value string, ok bool, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == opt {
			if i+1 >= len(args) {
				return "", false, nil, usagef("option '%s' requires an argument", opt)
			}
			rest = append(append([]string(nil), args[:i]...), args[i+2:]...)
			return args[i+1], true, rest, nil
		}
	}
	return "", false, args, nil
}

// removeWord removes the first occurrence of w from args.
func removeWord(args []string, w string) (bool, []string) {
	for i, a := range args {
		if a == w {
			return true, append(append([]string(nil), args[:i]...), args[i+1:]...)
		}
	}
	return false, args
}

// xattrEncoding is Hadoop's XAttrCodec: how -getfattr shows a value.
type xattrEncoding int

const (
	encText xattrEncoding = iota
	encHex
	encBase64
)

func encodeXAttrValue(v []byte, enc xattrEncoding) string {
	switch enc {
	case encHex:
		return "0x" + hex.EncodeToString(v)
	case encBase64:
		return "0s" + base64.StdEncoding.EncodeToString(v)
	}
	return `"` + strings.ToValidUTF8(string(v), "\uFFFD") + `"`
}

// decodeXAttrValue reads a -setfattr -v value: "quoted text", 0x hex,
// 0s base64, or plain text.
func decodeXAttrValue(s string) ([]byte, error) {
	if len(s) >= 2 {
		switch {
		case s[0] == '"' && s[len(s)-1] == '"':
			return []byte(s[1 : len(s)-1]), nil
		case s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
			b, err := hex.DecodeString(s[2:])
			if err != nil {
				return nil, fmt.Errorf("%s", "Illegal hexadecimal value: "+s[2:])
			}
			return b, nil
		case s[0] == '0' && (s[1] == 's' || s[1] == 'S'):
			b, err := base64.StdEncoding.DecodeString(s[2:])
			if err != nil {
				return nil, fmt.Errorf("%s", "Illegal base64 value: "+s[2:])
			}
			return b, nil
		}
	}
	return []byte(s), nil
}

func runSetfattr(c *cmd, args []string) error {
	name, hasName, args, err := popOptionArg(args, "-n")
	if err != nil {
		return err
	}
	v, hasValue, args, err := popOptionArg(args, "-v")
	if err != nil {
		return err
	}
	var value []byte
	if hasValue {
		if value, err = decodeXAttrValue(v); err != nil {
			return usagef("%v", err)
		}
	}
	xname, hasX, args, err := popOptionArg(args, "-x")
	if err != nil {
		return err
	}
	switch {
	case hasName && hasX:
		return usagef("Can not specify both '-n name' and '-x name' option.")
	case !hasName && !hasX:
		return usagef("Must specify '-n name' or '-x name' option.")
	case len(args) == 0:
		return usagef("<path> is missing.")
	case len(args) > 1:
		return usagef("Too many arguments.")
	}
	c.forEachArg(args, func(it *item) error {
		var err error
		if hasName {
			err = it.fs.SetXAttr(c.ctx, it.abs, name, value, client.XAttrCreate|client.XAttrReplace)
		} else {
			err = it.fs.RemoveXAttr(c.ctx, it.abs, xname)
		}
		if err != nil {
			return &shellError{msg: c.describe(it.str, err)}
		}
		return nil
	}, nil)
	return nil
}

func runGetfattr(c *cmd, args []string) error {
	name, hasName, args, err := popOptionArg(args, "-n")
	if err != nil {
		return err
	}
	dump, args := removeWord(args, "-d")
	en, hasEn, args, err := popOptionArg(args, "-e")
	if err != nil {
		return err
	}
	enc := encText
	if hasEn {
		switch strings.ToUpper(en) {
		case "TEXT":
		case "HEX":
			enc = encHex
		case "BASE64":
			enc = encBase64
		default:
			return usagef("Invalid/unsupported encoding option specified: %s", en)
		}
	}
	recursive, args := removeWord(args, "-R")
	switch {
	case hasName == dump:
		return usagef("Must specify '-n name' or '-d' option.")
	case len(args) == 0:
		return usagef("<path> is missing.")
	case len(args) > 1:
		return usagef("Too many arguments.")
	}
	print := func(x client.XAttr) {
		if x.Value == nil {
			return
		}
		if len(x.Value) == 0 {
			fmt.Fprintln(c.env.Stdout, x.Name)
			return
		}
		fmt.Fprintf(c.env.Stdout, "%s=%s\n", x.Name, encodeXAttrValue(x.Value, enc))
	}
	c.forEachArg(args, func(it *item) error {
		return c.walk(it, recursive, func(it *item) error {
			fmt.Fprintf(c.env.Stdout, "# file: %s\n", it.str)
			if dump {
				xs, err := it.fs.GetXAttrs(c.ctx, it.abs)
				if err != nil {
					return &shellError{msg: c.describe(it.str, err)}
				}
				for _, x := range javaHashMapOrder(xs) {
					if x.Value == nil {
						x.Value = []byte{}
					}
					print(x)
				}
				return nil
			}
			xs, err := it.fs.GetXAttrs(c.ctx, it.abs, name)
			if err != nil {
				return &shellError{msg: c.describe(it.str, err)}
			}
			for _, x := range xs {
				x.Name = name // as typed, like Hadoop's shell
				if x.Value == nil {
					x.Value = []byte{}
				}
				print(x)
			}
			return nil
		})
	}, nil)
	return nil
}

// javaHashMapOrder returns xs in the order a java.util.HashMap keyed by
// the names iterates them, which is the order Hadoop's -getfattr -d
// prints: by bucket (the String hash, spread, modulo the table size), then
// by insertion within a bucket.
func javaHashMapOrder(xs []client.XAttr) []client.XAttr {
	size := 16
	for len(xs) > size*3/4 {
		size *= 2
	}
	buckets := make([][]client.XAttr, size)
	for _, x := range xs {
		var h int32
		for _, u := range utf16.Encode([]rune(x.Name)) {
			h = 31*h + int32(u)
		}
		uh := uint32(h)
		i := int((uh ^ uh>>16) & uint32(size-1))
		buckets[i] = append(buckets[i], x)
	}
	out := make([]client.XAttr, 0, len(xs))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}
