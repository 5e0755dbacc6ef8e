package balancer

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// byteDesc prints a size as Hadoop's StringUtils.byteDesc: plain bytes below
// 1 KB, an exact multiple of a binary unit without decimals ("10 MB"),
// anything else with two ("1.50 GB").
func byteDesc(n int64) string {
	if n < 0 {
		if n == -1<<63 {
			return "-8 EB"
		}
		return "-" + byteDesc(-n)
	}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " B"
	}
	const prefixes = "KMGTPE"
	i := 0
	for i+1 < len(prefixes) && n >= 1<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(1<<shift-1) == 0 {
		return strconv.FormatInt(n>>shift, 10) + " " + prefixes[i:i+1] + "B"
	}
	s := fmt.Sprintf("%.2f", float64(n)/float64(int64(1)<<shift))
	if strings.HasPrefix(s, "1024") && i+1 < len(prefixes) {
		i++
		s = fmt.Sprintf("%.2f", float64(n)/float64(int64(1)<<(10*(i+1))))
	}
	return s + " " + prefixes[i:i+1] + "B"
}

// javaDate prints a time as Java 8's DateFormat.getDateTimeInstance() does
// in the US locale ("Mar 5, 2026 1:02:03 PM"), the balancer's time stamps.
func javaDate(t time.Time) string { return t.Format("Jan 2, 2006 3:04:05 PM") }

// PrintTook prints the last line of the balancer and the mover, which
// Hadoop's tools print however they ended: the time now and how long the
// run took ("Mar 5, 2026 1:02:03 PM     Balancing took 4.567 seconds").
func PrintTook(out io.Writer, what string, now time.Time, took time.Duration) {
	fmt.Fprintf(out, "%-24s %s took %s\n", javaDate(now), what, time2Str(took))
}

// time2Str prints an elapsed time as the balancer's last line does: a Java
// double and the largest unit that keeps it at least 1.
func time2Str(d time.Duration) string {
	ms := d.Milliseconds()
	v, unit := float64(ms), "milliseconds"
	switch {
	case ms < 1000:
	case ms < 60*1000:
		v, unit = v/1000, "seconds"
	case ms < 3600*1000:
		v, unit = v/(60*1000), "minutes"
	default:
		v, unit = v/(3600*1000), "hours"
	}
	return javaDouble(v) + " " + unit
}

// javaDouble prints a double as Java's Double.toString does for the
// values time2Str makes: the shortest digits, and ".0" for whole numbers.
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
