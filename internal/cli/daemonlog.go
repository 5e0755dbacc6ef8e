package cli

import (
	"bufio"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

const daemonlogUsage = `Usage: hdfs daemonlog
	[-getlevel <host:port> <classname> [-protocol (http|https)]]
	[-setlevel <host:port> <classname> <level> [-protocol (http|https)]]
`

// daemonlogMarker and daemonlogTag are how the /logLevel page marks the
// lines to print, and the HTML tags stripped from them.
const daemonlogMarker = "<!-- OUTPUT -->"

var daemonlogTag = regexp.MustCompile(`<[^>]*>`)

// runDaemonlog is Hadoop's `hadoop daemonlog`: it reads or sets a daemon's
// log level through the daemon's /logLevel page.
func runDaemonlog(inv *Invocation) int {
	args := inv.Args
	protocol := "http"
	if n := len(args); n >= 2 && args[n-2] == "-protocol" {
		protocol = args[n-1]
		args = args[:n-2]
	}
	usage := func() int {
		fmt.Fprint(inv.Env.Stderr, daemonlogUsage)
		return exitUsage
	}
	if protocol != "http" {
		if protocol == "https" {
			fmt.Fprintln(inv.Env.Stderr, "daemonlog: -protocol https is not supported: the daemons serve plain HTTP")
			return exitFail
		}
		return usage()
	}
	var query string
	switch {
	case len(args) == 3 && args[0] == "-getlevel":
		query = "log=" + url.QueryEscape(args[2])
	case len(args) == 4 && args[0] == "-setlevel":
		query = "log=" + url.QueryEscape(args[2]) + "&level=" + url.QueryEscape(args[3])
	default:
		return usage()
	}
	u := protocol + "://" + args[1] + "/logLevel?" + query
	fmt.Fprintf(inv.Env.Stdout, "Connecting to %s\n", u)
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get(u)
	if err != nil {
		fmt.Fprintf(inv.Env.Stderr, "daemonlog: %v\n", err)
		return exitFail
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), daemonlogMarker); ok {
			fmt.Fprintln(inv.Env.Stdout, daemonlogTag.ReplaceAllString(line, ""))
		}
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(inv.Env.Stderr, "daemonlog: %s answered %s\n", args[1], resp.Status)
		return exitFail
	}
	return exitOK
}
