package fsshell

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// binaryPrefixes are Hadoop's traditional binary prefixes, K = 2^10 up to
// E = 2^60, in increasing order.
var binaryPrefixes = [...]struct {
	symbol byte
	shift  uint
}{{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}, {'P', 50}, {'E', 60}}

// humanSize renders n the way Hadoop's -h options do: below 1024 the plain
// number; otherwise the largest prefix not above n, an exact multiple
// without decimals ("2 K"), else one decimal rounded half up ("1.5 K"); a
// value that rounds to 1024.0 moves to the next prefix.
func humanSize(n int64) string {
	if n == math.MinInt64 {
		return "-8 E"
	}
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	if n < 1024 {
		return sign + strconv.FormatInt(n, 10)
	}
	u := uint64(n)
	i := 0
	for i+1 < len(binaryPrefixes) && u >= 1<<binaryPrefixes[i+1].shift {
		i++
	}
	shift := binaryPrefixes[i].shift
	mask := uint64(1)<<shift - 1
	if u&mask == 0 {
		return fmt.Sprintf("%s%d %c", sign, u>>shift, binaryPrefixes[i].symbol)
	}
	s := oneDecimal(u, shift)
	if strings.HasPrefix(s, "1024") && i+1 < len(binaryPrefixes) {
		i++
		s = oneDecimal(u, binaryPrefixes[i].shift)
	}
	return fmt.Sprintf("%s%s %c", sign, s, binaryPrefixes[i].symbol)
}

// oneDecimal formats u / 2^shift with one decimal, rounding half up, in
// exact integer arithmetic.
func oneDecimal(u uint64, shift uint) string {
	q := u >> shift
	r := u & (uint64(1)<<shift - 1)
	// r < 2^60, so r*10 fits in 64 bits.
	tenths := (r*10 + uint64(1)<<(shift-1)) >> shift
	whole := q + tenths/10
	return fmt.Sprintf("%d.%d", whole, tenths%10)
}

// formatSize is humanSize with -h, the plain number without.
func formatSize(n int64, human bool) string {
	if human {
		return humanSize(n)
	}
	return strconv.FormatInt(n, 10)
}

// permString renders HDFS permission bits as rwxr-xr-x, with the last
// character t (or T without other-execute) for the sticky bit.
func permString(p uint16) string {
	const rwx = "rwx"
	b := make([]byte, 9)
	for i := 0; i < 9; i++ {
		if p&(1<<(8-i)) != 0 {
			b[i] = rwx[i%3]
		} else {
			b[i] = '-'
		}
	}
	if p&0o1000 != 0 {
		if p&1 != 0 {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}

// octalPerm renders permission bits as Hadoop's %a does: the digits of the
// mode without leading zeros (755, 1777, 0).
func octalPerm(p uint16) string {
	v := int(p>>9&1)*1000 + int(p>>6&7)*100 + int(p>>3&7)*10 + int(p&7)
	return strconv.Itoa(v)
}

// formatPercent renders a fraction as a whole percentage rounded half up;
// NaN (zero capacity) prints as NaN%.
func formatPercent(fraction float64) string {
	if math.IsNaN(fraction) {
		return "NaN%"
	}
	if math.IsInf(fraction, 0) {
		if fraction > 0 {
			return "Infinity%"
		}
		return "-Infinity%"
	}
	return strconv.FormatFloat(math.Floor(fraction*100+0.5), 'f', 0, 64) + "%"
}

// table aligns rows of cells: columns are separated by two spaces, padded
// to the widest cell, right-aligned where asked; the last column is not
// padded when left-aligned.
type table struct {
	rows   [][]string
	widths []int
	right  []bool
	header bool
}

func newTable(columns int) *table {
	return &table{widths: make([]int, columns), right: make([]bool, columns)}
}

func (t *table) add(cells ...string) {
	for i, c := range cells {
		t.widths[i] = max(t.widths[i], len(c))
	}
	t.rows = append(t.rows, cells)
}

// empty reports whether the table has no rows besides a header.
func (t *table) empty() bool {
	n := len(t.rows)
	if t.header {
		n--
	}
	return n <= 0
}

func (t *table) String() string {
	var b strings.Builder
	last := len(t.widths) - 1
	for _, row := range t.rows {
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", t.widths[i]-len(c))
			switch {
			case t.right[i]:
				b.WriteString(pad + c)
			case i == last:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// padLeft right-aligns s in width w, like Java's %ws.
func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// padRight left-aligns s in width w, like Java's %-ws.
func padRight(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}
