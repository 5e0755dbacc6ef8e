package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/haservice"
)

const fsckUsage = `Usage: hdfs fsck <path> [-list-corruptfileblocks | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks | -replicaDetails]]]] [-includeSnapshots] [-storagepolicies] [-blockId <blk_Id>]
	<path>	start checking from this path
	-move	move corrupted files to /lost+found
	-delete	delete corrupted files
	-files	print out files being checked
	-openforwrite	print out files opened for write
	-includeSnapshots	include snapshot data if the given path indicates a snapshottable directory or there are snapshottable directories under it
	-list-corruptfileblocks	print out list of missing blocks and files they belong to
	-files -blocks	print out block report
	-files -blocks -locations	print out locations for every block
	-files -blocks -racks	print out network topology for data-node locations
	-files -blocks -replicaDetails	print out each replica details
	-storagepolicies	print out storage policy summary for the blocks
	-blockId	print out which file this blockId belongs to, locations (nodes, racks) of this block, and other diagnostics info (under replicated, corrupted or not, etc)

Please Note:
	1. By default fsck ignores files opened for write, use -openforwrite to report such files. They are usually  tagged CORRUPT or HEALTHY depending on their block allocation status
	2. Option -includeSnapshots should not be used for comparing stats, should be used only for HEALTH check, as this may contain duplicates if the same file present in both original fs tree and inside snapshots.

The NameNode's /fsck HTTP endpoint (dfs.namenode.http-address) does the
check; -move moves each corrupt file whole to /lost+found/<its path>.`

// runFsck is hdfs fsck: it asks the active NameNode's /fsck endpoint, as
// Hadoop's DFSck does, prints the report as it streams and exits by its
// last line: 0 HEALTHY (or a path that does not exist), 1 CORRUPT.
func runFsck(inv *Invocation) int {
	args := inv.Args
	errw := inv.Env.Stderr
	// As Hadoop's DFSck, no arguments (or -files first, which Hadoop's
	// generic options would take) is a usage error, exit status -1; with
	// only options, fsck checks "/".
	if len(args) == 0 || args[0] == "-files" {
		fmt.Fprintln(errw, fsckUsage)
		return exitMinusOne
	}
	// The query in Hadoop's order: ugi, the options as given, path.
	q := "ugi=" + url.QueryEscape(clientUser(inv))
	dir := ""
	listCorrupt := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag := map[string]string{"-move": "move", "-delete": "delete", "-files": "files",
			"-openforwrite": "openforwrite", "-blocks": "blocks", "-locations": "locations",
			"-racks": "racks", "-replicaDetails": "replicadetails", "-list-corruptfileblocks": "listcorruptfileblocks"}[a]
		switch {
		case flag != "":
			q += "&" + flag + "=1"
			listCorrupt = listCorrupt || a == "-list-corruptfileblocks"
		case a == "-includeSnapshots":
			q += "&includeSnapshots=1"
		case a == "-storagepolicies":
			q += "&storagepolicies=1"
		case a == "-blockId":
			var ids []string
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				ids = append(ids, args[i])
			}
			q += "&blockId=" + url.QueryEscape(strings.Join(ids, " ")+" ")
		case !strings.HasPrefix(a, "-"):
			if dir != "" {
				fmt.Fprintf(errw, "fsck: can only operate on one path at a time '%s'\n", a)
				fmt.Fprintln(errw, fsckUsage)
				return exitMinusOne
			}
			dir = a
		default:
			fmt.Fprintf(errw, "fsck: Illegal option '%s'\n", a)
			fmt.Fprintln(errw, fsckUsage)
			return exitMinusOne
		}
	}
	if dir == "" {
		dir = "/"
	}
	p, err := fsckPath(dir, clientUser(inv))
	if err != nil {
		fmt.Fprintf(errw, "fsck: %v\n", err)
		return exitFail
	}
	q += "&path=" + url.QueryEscape(p)
	ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	base, err := activeHTTPAddress(ctx, inv.Conf)
	if err != nil {
		fmt.Fprintf(errw, "FileSystem is inaccessible due to:\n%v\nDFSck exiting.\n", err)
		return exitFail
	}
	u := base + "/fsck?" + q
	fmt.Fprintf(errw, "Connecting to namenode via %s\n", u)
	if listCorrupt {
		return fsckListCorrupt(ctx, inv, dir, u)
	}
	last, err := fsckGet(ctx, u, func(line string) { fmt.Fprintln(inv.Env.Stdout, line) })
	if err != nil {
		fmt.Fprintf(errw, "fsck: %v\n", err)
		return exitFail
	}
	return fsckStatus(last)
}

// fsckStatus is the exit status Hadoop's DFSck derives from the report's
// last line.
func fsckStatus(last string) int {
	switch {
	case strings.HasSuffix(last, "is HEALTHY"):
		return 0
	case strings.HasSuffix(last, "is CORRUPT"):
		return 1
	case strings.HasSuffix(last, "does not exist"), strings.Contains(last, "Incorrect blockId format:"):
		return 0
	case strings.HasSuffix(last, "is DECOMMISSIONED"):
		return 2
	case strings.HasSuffix(last, "is DECOMMISSIONING"):
		return 3
	}
	return exitMinusOne
}

// fsckPath is the path part of dir, resolved as Hadoop's Path is against
// the working directory /user/NAME.
func fsckPath(dir, user string) (string, error) {
	u, err := url.Parse(dir)
	if err != nil {
		return "", fmt.Errorf("bad path %q: %v", dir, err)
	}
	if u.Scheme != "" && u.Scheme != "hdfs" {
		return "", fmt.Errorf("FileSystem is %s://%s, not HDFS", u.Scheme, u.Host)
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/user/" + user + "/" + p
	}
	return path.Clean(p), nil
}

// fsckGet streams the lines of one /fsck answer to fn and returns the
// last one.
func fsckGet(ctx context.Context, u string, fn func(string)) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", fmt.Errorf("the NameNode answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	last := ""
	for sc.Scan() {
		last = sc.Text()
		fn(last)
	}
	return last, sc.Err()
}

// fsckListCorrupt pages through -list-corruptfileblocks by cookie, as
// Hadoop's DFSck does, and exits 0 only when there is none.
func fsckListCorrupt(ctx context.Context, inv *Invocation, dir, base string) int {
	out := inv.Env.Stdout
	n, cookie := 0, ""
	for pages := 0; pages < 1<<20; pages++ {
		u := base
		if cookie != "" && cookie != "0" {
			u += "&startblockafter=" + cookie
		}
		done := false
		_, err := fsckGet(ctx, u, func(line string) {
			switch {
			case done:
			case strings.HasPrefix(line, "Cookie:"):
				_, c, ok := strings.Cut(line, "\t")
				if !ok {
					done = true
				}
				cookie = c
			case strings.HasSuffix(line, "has no CORRUPT files"), strings.HasSuffix(line, "has no more CORRUPT files"),
				strings.HasSuffix(line, "does not exist"):
				done = true
			case line == "", strings.HasPrefix(line, "FSCK started by"), strings.HasPrefix(line, "The filesystem under path"):
			default:
				n++
				if n == 1 {
					fmt.Fprintf(out, "The list of corrupt files under path '%s' are:\n", dir)
				}
				fmt.Fprintln(out, line)
			}
		})
		if err != nil {
			fmt.Fprintf(inv.Env.Stderr, "fsck: %v\n", err)
			return exitFail
		}
		if done {
			break
		}
	}
	fmt.Fprintf(out, "The filesystem under path '%s' has %d CORRUPT files\n", dir, n)
	if n == 0 {
		return 0
	}
	return exitMinusOne
}

// activeHTTPAddress is the "http://host:port" of the active NameNode's web
// server: for an HA nameservice the one whose /isActive says so, else
// dfs.namenode.http-address (a wildcard host replaced by the RPC host).
func activeHTTPAddress(ctx context.Context, c *conf.Conf) (string, error) {
	defFS, _ := url.Parse(strings.TrimSpace(c.String(conf.FSDefaultFS)))
	if defFS != nil && slices.Contains(c.Nameservices(), defFS.Host) {
		ns := defFS.Host
		var tried []string
		for _, id := range haservice.NameNodeIDs(c, ns) {
			a := strings.TrimSpace(c.String(conf.Suffixed(conf.DFSNameNodeHTTPAddress, ns, id)))
			if a == "" {
				continue
			}
			base := "http://" + a
			tried = append(tried, a)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/isActive", nil)
			if err != nil {
				continue
			}
			cl := &http.Client{Timeout: 10 * time.Second}
			resp, err := cl.Do(req)
			if err != nil {
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, nil
			}
		}
		return "", fmt.Errorf("no active NameNode in nameservice %s (tried %s)", ns, strings.Join(tried, ", "))
	}
	a := strings.TrimSpace(c.String(conf.DFSNameNodeHTTPAddress))
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("%s=%q is not host:port", conf.DFSNameNodeHTTPAddress, a)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
		if defFS != nil && defFS.Hostname() != "" {
			host = defFS.Hostname()
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
