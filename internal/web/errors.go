package web

import "errors"

// Errors of this package. New returns ErrListen; the others describe bad
// requests and reach the client as the message of an HTTP error answer
// (for /jmx, a JSON {"result":"ERROR"} object).
var (
	// ErrListen: the server could not listen on its address. The message
	// names the address and the configuration key it came from.
	ErrListen = errors.New("web: listen")
	// errBadPattern: a JMX ObjectName or ObjectName pattern is malformed
	// (no colon, empty key or value, an element without '=', a duplicate
	// key, a wildcard where none is allowed).
	errBadPattern = errors.New("web: malformed ObjectName")
	// errBadQuery: a /jmx or /conf query parameter is not of the expected
	// form (a get without "::", an unknown format).
	errBadQuery = errors.New("web: bad query")
	// errNotFound: a bean, attribute or configuration key asked for by
	// name does not exist.
	errNotFound = errors.New("web: not found")

	// errTooDeep: a bean attribute value nests deeper than maxDepth (a
	// cycle, most likely); the attribute is left out of /jmx.
	errTooDeep = errors.New("web: attribute value nested too deeply")
)
