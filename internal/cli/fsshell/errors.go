package fsshell

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/hdfsgo/hdfsgo/client"
	"github.com/hdfsgo/hdfsgo/internal/remoteerr"
)

// Hadoop's path error texts (PathIOException and its subclasses).
const (
	msgNotFound   = "No such file or directory"
	msgExists     = "File exists"
	msgIsDir      = "Is a directory"
	msgNotDir     = "Is not a directory"
	msgNotEmpty   = "Directory is not empty"
	msgIO         = "Input/output error"
	msgPermission = "Permission denied"
)

// shellError is a message shown after "<cmd>: " as it is. notFound marks
// Hadoop's PathNotFoundException, which -rm -f ignores.
type shellError struct {
	msg      string
	notFound bool
}

func (e *shellError) Error() string { return e.msg }

// pathErr is Hadoop's "`path': message" form.
func pathErr(p, msg string) error {
	return &shellError{msg: "`" + p + "': " + msg, notFound: msg == msgNotFound}
}

// describe turns an error about the path shown as display into the text
// after "<cmd>: ". An exception from the NameNode shows the first line of
// its message, as Hadoop's shell does; client conditions without one get
// Hadoop's path error texts.
func (c *cmd) describe(display string, err error) string {
	var se *shellError
	if errors.As(err, &se) {
		return se.msg
	}
	var re *remoteerr.Error
	if errors.As(err, &re) {
		if re.Message == "" {
			return re.Class
		}
		return firstLine(re.Message)
	}
	switch {
	case errors.Is(err, client.ErrWrongFS):
		return "Wrong FS: " + display + ", expected: " + c.expectedURI(display)
	case errors.Is(err, fs.ErrNotExist):
		return "`" + display + "': " + msgNotFound
	case errors.Is(err, fs.ErrExist):
		return "`" + display + "': " + msgExists
	case errors.Is(err, syscall.ENOTEMPTY):
		return "`" + display + "': " + msgNotEmpty
	case errors.Is(err, syscall.ENOTDIR):
		return "`" + display + "': " + msgNotDir
	case errors.Is(err, fs.ErrPermission):
		return "`" + display + "': " + msgPermission
	case errors.Is(err, client.ErrNotDone):
		return "`" + display + "': " + msgIO
	}
	// A transport failure: the path adds nothing to the cause.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return firstLine(pe.Err.Error())
	}
	return firstLine(err.Error())
}

// remoteText is the message of a failed call without the path form:
// used where Hadoop wraps e.getMessage() in its own sentence.
func remoteText(err error) string {
	var re *remoteerr.Error
	if errors.As(err, &re) {
		if re.Message == "" {
			return re.Class
		}
		return firstLine(re.Message)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return firstLine(pe.Err.Error())
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
