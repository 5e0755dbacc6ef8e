package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfsgo/hdfsgo/internal/editlog"
	"github.com/hdfsgo/hdfsgo/internal/oev"
)

const oevUsage = `Usage: hdfs oev [OPTIONS] -i INPUT_FILE -o OUTPUT_FILE
Offline edits viewer
Parse an edits log file INPUT_FILE and save results
in OUTPUT_FILE.
Required command line arguments:
-i,--inputFile <arg>   edits file to process, xml (case
                       insensitive) extension means XML format,
                       any other filename means binary format.
                       XML/Binary format input file is not allowed
                       to be processed by the same type processor.
-o,--outputFile <arg>  Name of output file. If the specified
                       file exists, it will be overwritten,
                       format of the file is determined
                       by -p option

Optional command line arguments:
-p,--processor <arg>   Select which type of processor to apply
                       against image file, currently supported
                       processors are: binary (native binary format
                       of the edit log), xml (default, XML
                       format), stats (prints statistics about
                       edits file)
-h,--help              Display usage information and exit
-f,--fix-txids         Renumber the transaction IDs in the input,
                       so that there are no gaps or invalid
                       transaction IDs.
-r,--recover           When reading binary edit logs, use recovery
                       mode.  This will give you the chance to skip
                       corrupt parts of the edit log.
-v,--verbose           More verbose output, prints the input and
                       output filenames, for processors that write
                       to a file, also output to screen.

The input is an hdfsgo edit segment (edits_N-M, edits_inprogress_N).
Recovery mode skips each damaged range and names it on stderr.`

// runOev is hdfs oev, the offline edits viewer.
func runOev(inv *Invocation) int {
	errw := inv.Env.Stderr
	var in, out, proc string
	verbose, fix, recoverMode := false, false, false
	args := inv.Args
	if len(args) == 0 {
		fmt.Fprintln(errw, oevUsage)
		return exitUsage
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) { return optionValue(errw, args, &i) }
		var ok bool
		switch a {
		case "-i", "--inputFile":
			if in, ok = val(); !ok {
				return exitUsage
			}
		case "-o", "--outputFile":
			if out, ok = val(); !ok {
				return exitUsage
			}
		case "-p", "--processor":
			if proc, ok = val(); !ok {
				return exitUsage
			}
		case "-v", "--verbose":
			verbose = true
		case "-h", "--help":
			fmt.Fprintln(inv.Env.Stdout, oevUsage)
			return exitOK
		case "-f", "--fix-txids":
			fix = true
		case "-r", "--recover":
			recoverMode = true
		default:
			fmt.Fprintf(errw, "Error parsing command-line options: Unrecognized option: %s\n", a)
			fmt.Fprintln(errw, oevUsage)
			return exitUsage
		}
	}
	if in == "" || out == "" {
		fmt.Fprintln(errw, "Error parsing command-line options: both -i and -o are required")
		fmt.Fprintln(errw, oevUsage)
		return exitUsage
	}
	proc = strings.ToLower(proc)
	if proc == "" {
		proc = "xml"
	}
	xmlIn := strings.EqualFold(filepath.Ext(in), ".xml")
	switch {
	case proc != "xml" && proc != "binary" && proc != "stats":
		fmt.Fprintf(errw, "oev: unknown processor %q (xml, binary or stats)\n", proc)
		return exitUsage
	case xmlIn && proc == "xml", !xmlIn && proc == "binary":
		fmt.Fprintf(errw, "oev: the %s input %s cannot be processed by the %s processor\n", map[bool]string{true: "XML", false: "binary"}[xmlIn], in, proc)
		return exitUsage
	}
	if verbose {
		fmt.Fprintf(inv.Env.Stdout, "input  [%s]\noutput [%s]\n", in, out)
	}
	if err := oevConvert(in, out, proc, xmlIn, verbose, fix, recoverMode, inv.Env.Stdout, errw); err != nil {
		fmt.Fprintf(errw, "Encountered exception. Exiting: %v\n", err)
		return exitFail
	}
	return exitOK
}

// tornTail turns the torn end of an in-progress segment, and the ranges a
// recovery-mode read skipped, into warnings: everything else was read.
func tornTail(err error, errw io.Writer) error {
	var re *oev.RecoveredError
	if errors.As(err, &re) {
		fmt.Fprintln(errw, re.Error())
		return nil
	}
	var te *editlog.TornRecordError
	if errors.As(err, &te) && te.ZeroFill {
		fmt.Fprintf(errw, "oev: %s: its records end at offset %d, zero fill follows (the preallocated space of a segment being written)\n", te.File, te.Offset)
		return nil
	}
	if errors.As(err, &te) {
		fmt.Fprintf(errw, "oev: %s ends in a torn record at offset %d (an in-progress segment cut mid-write); the records before it were read\n", te.File, te.Offset)
		return nil
	}
	return err
}

func oevConvert(in, out, proc string, xmlIn, verbose, fix, recoverMode bool, stdout, errw io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	return writeFileAtomic(out, func(w io.Writer) error {
		if verbose && proc != "binary" {
			w = io.MultiWriter(w, stdout)
		}
		switch {
		case xmlIn:
			v, recs, err := oev.ParseXML(r)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			if fix {
				oev.FixTxIDs(recs)
			}
			if proc == "stats" {
				return oev.RecordStats(v, recs).Write(w)
			}
			return oev.WriteSegment(w, v, recs)
		case proc == "stats" && recoverMode:
			// Count what a recovery-mode read finds.
			var x bytes.Buffer
			if err := tornTail(oev.SegmentToXMLWith(r, in, &x, oev.Options{Recover: true}), errw); err != nil {
				return err
			}
			v, recs, err := oev.ParseXML(&x)
			if err != nil {
				return err
			}
			return oev.RecordStats(v, recs).Write(w)
		case proc == "stats":
			st, err := oev.SegmentStats(r, in)
			if err = tornTail(err, errw); err != nil {
				return err
			}
			return st.Write(w)
		default:
			return tornTail(oev.SegmentToXMLWith(r, in, w, oev.Options{FixTxIDs: fix, Recover: recoverMode}), errw)
		}
	})
}

// writeFileAtomic writes name through a temporary file renamed over it,
// so a failed run never leaves half an output. An existing name that is
// not a regular file (/dev/null, a pipe) is written in place, never
// replaced.
func writeFileAtomic(name string, write func(w io.Writer) error) error {
	if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		werr := write(bw)
		if werr == nil {
			werr = bw.Flush()
		}
		return errors.Join(werr, f.Close())
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	// CreateTemp makes the file 0600; an output is an ordinary file.
	werr := tmp.Chmod(0o644)
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if werr == nil {
		werr = write(bw)
	}
	if werr == nil {
		werr = bw.Flush()
	}
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
