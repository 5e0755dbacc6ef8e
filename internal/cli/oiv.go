package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hdfsgo/hdfsgo/internal/fsimage"
	"github.com/hdfsgo/hdfsgo/internal/oiv"
)

const oivUsage = `Usage: hdfs oiv [OPTIONS] -i INPUTFILE -o OUTPUTFILE
Offline Image Viewer
View an fsimage INPUTFILE using the specified PROCESSOR,
saving the results in OUTPUTFILE.

The oiv utility will attempt to parse correctly formed image files
and will abort fail with mal-formed image files.

The tool works offline and does not require a running cluster in
order to process an image file.

The following image processors are available:
  * XML: This processor creates an XML document with all elements of
    the fsimage enumerated, suitable for further analysis by XML
    tools.
  * ReverseXML: This processor takes an XML file and creates a
    binary fsimage containing the same elements.
  * FileDistribution: This processor analyzes the file size
    distribution in the image.
    -maxSize specifies the range [0, maxSize] of file sizes to be
     analyzed (128GB by default).
    -step defines the granularity of the distribution. (2MB by default)
    -format formats the output result in a human-readable fashion
     rather than a number of bytes. (false by default)
  * Web: Run a viewer to expose read-only WebHDFS API.
    -addr specifies the address to listen. (localhost:5978 by default)
    It does not support secure mode nor HTTPS.
  * Delimited (experimental): Generate a text file with all of the elements common
    to both inodes and inodes-under-construction, separated by a
    delimiter. The default delimiter is \t, though this may be
    changed via the -delimiter argument.

Required command line arguments:
-i,--inputFile <arg>   FSImage or XML file to process.

Optional command line arguments:
-o,--outputFile <arg>  Name of output file. If the specified
                       file exists, it will be overwritten.
                       (output to stdout by default)
                       If the input file was an XML file, we
                       will also create an <outputFile>.md5 file.
-p,--processor <arg>   Select which type of processor to apply
                       against image file. (XML|FileDistribution|
                       ReverseXML|Web|Delimited)
                       The default is Web.
-delimiter <arg>       Delimiting string to use with Delimited processor.
-h,--help              Display usage information and exit

The input is an hdfsgo image (fsimage_N); -t is not supported yet. The Web viewer answers GETFILESTATUS, LISTSTATUS,
GETCONTENTSUMMARY, GETACLSTATUS, GETXATTRS and LISTXATTRS.`

// optionValue returns the value that follows the option args[*i] and
// moves *i past it; when there is none it says so on errw, in the words of
// the option parser of Hadoop's oiv and oev.
func optionValue(errw io.Writer, args []string, i *int) (string, bool) {
	if *i+1 >= len(args) {
		fmt.Fprintf(errw, "Error parsing command-line options: Missing argument for option: %s\n", strings.TrimLeft(args[*i], "-"))
		return "", false
	}
	*i++
	return args[*i], true
}

// runOiv is hdfs oiv, the offline image viewer.
func runOiv(inv *Invocation) int {
	errw := inv.Env.Stderr
	args := inv.Args
	if len(args) == 0 {
		fmt.Fprintln(errw, oivUsage)
		return exitUsage
	}
	in, out, proc, delim, addr := "", "-", "Web", "\t", "localhost:5978"
	maxSize, step, format := oiv.DefaultMaxSize, oiv.DefaultStep, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) { return optionValue(errw, args, &i) }
		var ok bool
		switch a {
		case "-i", "--inputFile":
			in, ok = val()
		case "-o", "--outputFile":
			out, ok = val()
		case "-p", "--processor":
			proc, ok = val()
		case "-delimiter":
			delim, ok = val()
		case "-addr":
			addr, ok = val()
		case "-maxSize", "-step":
			var s string
			if s, ok = val(); ok {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil || n <= 0 {
					fmt.Fprintf(errw, "oiv: %s %q is not a positive number of bytes\n", a, s)
					return exitUsage
				}
				if a == "-maxSize" {
					maxSize = n
				} else {
					step = n
				}
			}
		case "-h", "--help":
			fmt.Fprintln(inv.Env.Stdout, oivUsage)
			return exitOK
		case "-format":
			format = true
		case "-t", "--temp":
			fmt.Fprintf(errw, "oiv: %s is not supported yet\n", a)
			return exitFail
		default:
			fmt.Fprintf(errw, "Error parsing command-line options: Unrecognized option: %s\n", a)
			fmt.Fprintln(errw, oivUsage)
			return exitUsage
		}
		if !ok {
			return exitUsage
		}
	}
	if in == "" {
		fmt.Fprintln(errw, "Error parsing command-line options: Missing required option: i")
		fmt.Fprintln(errw, oivUsage)
		return exitUsage
	}
	var run func(r io.Reader, w io.Writer) error
	switch strings.ToLower(proc) {
	case "xml":
		run = oiv.XML
	case "delimited":
		run = func(r io.Reader, w io.Writer) error { return oiv.Delimited(r, w, delim, time.Local) }
	case "filedistribution":
		run = func(r io.Reader, w io.Writer) error { return oiv.FileDistribution(r, w, maxSize, step, format) }
	case "reversexml":
		if out == "-" {
			fmt.Fprintln(errw, "oiv: ReverseXML writes a binary image: give an output file with -o")
			return exitUsage
		}
	case "web":
		return oivWeb(inv, in, addr)
	default:
		fmt.Fprintf(errw, "oiv: unknown processor %q (XML, FileDistribution, ReverseXML, Web, Delimited)\n", proc)
		return exitUsage
	}
	f, err := os.Open(in)
	if err != nil {
		fmt.Fprintf(errw, "oiv: %v\n", err)
		return exitFail
	}
	defer f.Close()
	if run == nil { // ReverseXML
		var sum [16]byte
		err := writeFileAtomic(out, func(w io.Writer) error {
			var err error
			sum, err = oiv.ReverseXML(f, w)
			return err
		})
		if err == nil {
			err = writeFileAtomic(out+".md5", func(w io.Writer) error {
				_, err := w.Write(fsimage.MD5Line(sum, filepath.Base(out)))
				return err
			})
		}
		if err != nil {
			fmt.Fprintf(errw, "oiv: %s: %v\n", in, err)
			return exitFail
		}
		return exitOK
	}
	if out == "-" {
		bw := bufio.NewWriterSize(inv.Env.Stdout, 1<<20)
		err = run(f, bw)
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
	} else {
		err = writeFileAtomic(out, func(w io.Writer) error { return run(f, w) })
	}
	if err != nil {
		fmt.Fprintf(errw, "oiv: %s: %v\n", in, err)
		return exitFail
	}
	return exitOK
}

// oivWeb loads the image and serves it read-only over WebHDFS until
// SIGINT or SIGTERM.
func oivWeb(inv *Invocation, in, addr string) int {
	errw := inv.Env.Stderr
	f, err := os.Open(in)
	if err != nil {
		fmt.Fprintf(errw, "oiv: %v\n", err)
		return exitFail
	}
	img, err := oiv.LoadImage(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(errw, "oiv: %s: %v\n", in, err)
		return exitFail
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(errw, "oiv: -addr %s: %v\n", addr, err)
		return exitFail
	}
	sigs := relaySignals(inv, "")
	defer sigs.stop()
	srv := &http.Server{Handler: img, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Fprintf(inv.Env.Stdout, "WebImageViewer started. Listening on /%s. Press Ctrl+C to stop the viewer.\n", l.Addr())
	select {
	case <-sigs.ctx.Done():
	case err := <-done:
		fmt.Fprintf(errw, "oiv: the viewer stopped: %v\n", err)
		return exitFail
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	return exitOK
}
