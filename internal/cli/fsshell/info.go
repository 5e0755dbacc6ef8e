package fsshell

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hdfsgo/hdfsgo/client"
)

// statTimeLayout is Hadoop's -stat date format, always in UTC.
const statTimeLayout = "2006-01-02 15:04:05"

func runStat(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, unlimited, []string{"R"}, false)
	if err != nil {
		return err
	}
	format := "%y"
	if strings.Contains(rest[0], "%") {
		format = rest[0]
		rest = rest[1:]
		if len(rest) < 1 {
			return usagef("Not enough arguments: expected 1 but got 0")
		}
	}
	c.forEachArg(rest, func(it *item) error {
		return c.walk(it, f.on("R"), func(it *item) error {
			c.printf("%s\n", statLine(format, it))
			return nil
		})
	}, nil)
	return nil
}

// statLine expands a -stat format for one path. An unknown %c prints c; a
// trailing % is dropped.
func statLine(format string, it *item) string {
	s := it.status()
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' {
			b.WriteByte(ch)
			continue
		}
		if i+1 == len(format) {
			break
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(octalPerm(s.Permission))
		case 'A':
			b.WriteString(permString(s.Permission))
		case 'b':
			b.WriteString(strconv.FormatInt(s.Length, 10))
		case 'F':
			switch s.Type {
			case client.TypeDir:
				b.WriteString("directory")
			case client.TypeFile:
				b.WriteString("regular file")
			default:
				b.WriteString("symlink")
			}
		case 'g':
			b.WriteString(s.Group)
		case 'n':
			if it.abs != "/" {
				b.WriteString(path.Base(it.abs))
			}
		case 'o':
			b.WriteString(strconv.FormatInt(s.BlockSize, 10))
		case 'r':
			b.WriteString(strconv.Itoa(int(s.Replication)))
		case 'u':
			b.WriteString(s.Owner)
		case 'x':
			b.WriteString(s.AccessTime.UTC().Format(statTimeLayout))
		case 'X':
			b.WriteString(strconv.FormatInt(s.AccessTime.UnixMilli(), 10))
		case 'y':
			b.WriteString(s.ModTime.UTC().Format(statTimeLayout))
		case 'Y':
			b.WriteString(strconv.FormatInt(s.ModTime.UnixMilli(), 10))
		default:
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

func runTest(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 1, 1, []string{"e", "d", "f", "s", "z", "w", "r"}, false)
	if err != nil {
		return err
	}
	var flag string
	n := 0
	for _, o := range []string{"e", "d", "f", "s", "z", "w", "r"} {
		if f.on(o) {
			flag = o
			n++
		}
	}
	switch n {
	case 0:
		return usagef("No test flag given")
	case 1:
	default:
		return usagef("Only one test flag is allowed")
	}
	c.forEachArg(rest, func(it *item) error {
		s := it.status()
		ok := false
		switch flag {
		case "e":
			ok = true
		case "d":
			ok = it.isDir()
		case "f":
			ok = s.Type == client.TypeFile
		case "s":
			ok = s.Length > 0
		case "z":
			ok = s.Length == 0
		case "r", "w":
			perm := fs.FileMode(0o4)
			if flag == "w" {
				perm = 0o2
			}
			err := it.fs.Access(c.ctx, it.abs, perm)
			switch {
			case err == nil:
				ok = true
			case errors.Is(err, fs.ErrPermission), errors.Is(err, fs.ErrNotExist):
			default:
				return err
			}
		}
		if !ok {
			c.exitCode = 1
		}
		return nil
	}, func(*item) error {
		c.exitCode = 1
		return nil
	})
	return nil
}

// Column formats of -count (Hadoop's ContentSummary and QuotaUsage).
func countColumns(dirs, files, size string) string {
	return padLeft(dirs, 12) + " " + padLeft(files, 12) + " " + padLeft(size, 18) + " "
}

func quotaColumns(q, remQ, sq, remSQ string) string {
	return padLeft(q, 12) + " " + padLeft(remQ, 15) + " " + padLeft(sq, 15) + " " + padLeft(remSQ, 15) + " "
}

// quotaStorageTypes are the storage types that take quotas, in Hadoop's
// order (StorageType.getTypesSupportingQuota).
var quotaStorageTypes = []string{"RAM_DISK", "NVDIMM", "SSD", "DISK", "ARCHIVE"}

// takeValueOption removes "-name [VALUE]" from the options at the front
// of args the way Hadoop's CommandFormat does for an option with a value:
// the next word is its value when more than min words remain and it does
// not start with "-". found reports whether the option was there.
func takeValueOption(args []string, name string, min int) (rest []string, value string, found bool) {
	rest = append([]string(nil), args...)
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a != "-"+name {
			continue
		}
		rest = append(rest[:i], rest[i+1:]...)
		if i < len(rest) && len(rest) > min && (!strings.HasPrefix(rest[i], "-") || rest[i] == "-") {
			value = rest[i]
			rest = append(rest[:i], rest[i+1:]...)
		}
		return rest, value, true
	}
	return rest, "", false
}

func runCount(c *cmd, args []string) error {
	args, types, byType := takeValueOption(args, "t", 1)
	f, rest, err := parseFlags(args, 1, unlimited, []string{"q", "h", "v", "u", "x", "e", "s"}, false)
	if err != nil {
		return err
	}
	showQuotas, human, usageOnly, showEC, showSnap := f.on("q"), f.on("h"), f.on("u"), f.on("e"), f.on("s")
	var typeList []string
	byType = byType && (showQuotas || usageOnly)
	if byType {
		if types == "" || strings.EqualFold(types, "all") {
			typeList = quotaStorageTypes
		} else {
			for _, t := range strings.Split(types, ",") {
				u := strings.ToUpper(strings.TrimSpace(t))
				if !slices.Contains(append(quotaStorageTypes, "PROVIDED"), u) {
					return usagef("No enum constant org.apache.hadoop.fs.StorageType.%s", u)
				}
				typeList = append(typeList, u)
			}
		}
	}
	if (showQuotas || usageOnly) && f.on("x") {
		c.printf("q or u option is given, the -x option is ignored.\n")
	}
	if f.on("v") {
		var h string
		switch {
		case byType:
			for _, t := range typeList {
				h += fmt.Sprintf("%13s %17s ", t+"_QUOTA", "REM_"+t+"_QUOTA")
			}
		case usageOnly:
			h = quotaColumns("QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA")
		case showQuotas:
			h = quotaColumns("QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA") +
				countColumns("DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE")
		default:
			h = countColumns("DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE")
		}
		if showEC {
			h += "ERASURECODING_POLICY "
		}
		if showSnap {
			h += fmt.Sprintf("%12s %12s %12s %12s ", "SNAPSHOT_LENGTH", "SNAPSHOT_FILE_COUNT", "SNAPSHOT_DIR_COUNT", "SNAPSHOT_SPACE_CONSUMED")
		}
		c.printf("%sPATHNAME\n", h)
	}
	c.forEachArg(rest, func(it *item) error {
		var line string
		switch {
		case byType:
			u, err := it.fs.QuotaUsage(c.ctx, it.abs)
			if err != nil {
				return err
			}
			for _, t := range typeList {
				q, rem := "none", "inf"
				if tq, ok := u.TypeQuotas[t]; ok && tq.Quota >= 0 {
					q, rem = formatSize(tq.Quota, human), formatSize(tq.Quota-tq.Consumed, human)
				}
				line += fmt.Sprintf("%13s %17s ", q, rem)
			}
		case usageOnly:
			u, err := it.fs.QuotaUsage(c.ctx, it.abs)
			if err != nil {
				return err
			}
			q, remQ, sq, remSQ := "none", "inf", "none", "inf"
			if u.Quota > 0 {
				q, remQ = formatSize(u.Quota, human), formatSize(u.Quota-u.FileAndDirectoryCount, human)
			}
			if u.SpaceQuota >= 0 {
				sq, remSQ = formatSize(u.SpaceQuota, human), formatSize(u.SpaceQuota-u.SpaceConsumed, human)
			}
			line = quotaColumns(q, remQ, sq, remSQ)
		default:
			s, err := it.fs.ContentSummary(c.ctx, it.abs)
			if err != nil {
				return err
			}
			if showQuotas {
				q, remQ, sq, remSQ := "none", "inf", "none", "inf"
				if s.Quota > 0 {
					q, remQ = formatSize(s.Quota, human), formatSize(s.Quota-(s.DirectoryCount+s.FileCount), human)
				}
				if s.SpaceQuota > 0 {
					sq, remSQ = formatSize(s.SpaceQuota, human), formatSize(s.SpaceQuota-s.SpaceConsumed, human)
				}
				line = quotaColumns(q, remQ, sq, remSQ)
			}
			dirs, files, length := s.DirectoryCount, s.FileCount, s.Length
			if f.on("x") && !showQuotas {
				// -x: without what only snapshots keep.
				dirs, files, length = dirs-s.SnapshotDirectoryCount, files-s.SnapshotFileCount, length-s.SnapshotLength
			}
			line += countColumns(formatSize(dirs, human), formatSize(files, human), formatSize(length, human))
		}
		if showEC {
			s, err := it.fs.ContentSummary(c.ctx, it.abs)
			if err != nil {
				return err
			}
			if s.ErasureCodingPolicy != "Replicated" {
				line += "EC:"
			}
			line += s.ErasureCodingPolicy + " "
		}
		if showSnap {
			s, err := it.fs.ContentSummary(c.ctx, it.abs)
			if err != nil {
				return err
			}
			line += fmt.Sprintf("%12s %12s %12s %12s ", formatSize(s.SnapshotLength, human), formatSize(s.SnapshotFileCount, human),
				formatSize(s.SnapshotDirectoryCount, human), formatSize(s.SnapshotSpaceConsumed, human))
		}
		c.printf("%s%s\n", line, it.str)
		return nil
	}, nil)
	return nil
}

func runDus(c *cmd, args []string) error {
	return runDu(c, append([]string{"-s"}, args...))
}

func runDu(c *cmd, args []string) error {
	// -x leaves out what only snapshots keep.
	f, rest, err := parseFlags(args, 0, unlimited, []string{"h", "s", "v", "x"}, false)
	if err != nil {
		return err
	}
	human, summary := f.on("h"), f.on("s")
	if len(rest) == 0 {
		rest = []string{"."}
	}
	t := newTable(3)
	if f.on("v") {
		t.add("SIZE", "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS", "FULL_PATH_NAME")
		t.header = true
	}
	row := func(it *item) error {
		s, err := it.fs.ContentSummary(c.ctx, it.abs)
		if err != nil {
			return err
		}
		length, space := s.Length, s.SpaceConsumed
		if f.on("x") {
			length, space = length-s.SnapshotLength, space-s.SnapshotSpaceConsumed
		}
		t.add(formatSize(length, human), formatSize(space, human), it.str)
		return nil
	}
	c.forEachArg(rest, func(it *item) error {
		if summary || !it.isDir() {
			return row(it)
		}
		kids, err := c.children(it)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := row(k); err != nil {
				c.failErr(k.str, err)
			}
		}
		return nil
	}, nil)
	if !t.empty() {
		c.printf("%s", t)
	}
	return nil
}

func runDf(c *cmd, args []string) error {
	f, rest, err := parseFlags(args, 0, unlimited, []string{"h"}, false)
	if err != nil {
		return err
	}
	human := f.on("h")
	if len(rest) == 0 {
		rest = []string{"/"}
	}
	t := newTable(5)
	t.add("Filesystem", "Size", "Used", "Available", "Use%")
	t.header = true
	for i := 1; i < 5; i++ {
		t.right[i] = true
	}
	c.forEachArg(rest, func(it *item) error {
		st, err := it.fs.StatFs(c.ctx)
		if err != nil {
			return err
		}
		size, used, free := int64(st.Capacity), int64(st.Used), int64(st.Remaining)
		name := it.fs.URI()
		if it.fs == c.local {
			name = "file:///"
		}
		t.add(name, formatSize(size, human), formatSize(used, human), formatSize(free, human),
			formatPercent(float64(used)/float64(size)))
		return nil
	}, nil)
	if !t.empty() {
		c.printf("%s", t)
	}
	return nil
}
