package web

import (
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strings"
)

// logOutputMarker starts each line of a /logLevel answer that
// `hadoop daemonlog` prints (with the tags removed), as Hadoop's LogLevel
// servlet marks them.
const logOutputMarker = "<!-- OUTPUT -->"

// logLevels are the level names /logLevel accepts (log4j's), with the slog
// level each sets.
var logLevels = map[string]slog.Level{
	"ALL": slog.LevelDebug - 4, "TRACE": slog.LevelDebug - 4, "DEBUG": slog.LevelDebug,
	"INFO": slog.LevelInfo, "WARN": slog.LevelWarn, "ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4, "OFF": slog.LevelError + 8,
}

// levelName is the log4j name of an slog level.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRACE"
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARN"
	case l < slog.LevelError+4:
		return "ERROR"
	case l < slog.LevelError+8:
		return "FATAL"
	}
	return "OFF"
}

// serveLogLevel answers /logLevel?log=NAME[&level=LEVEL] as Hadoop's
// LogLevel servlet does, for `hadoop daemonlog -getlevel|-setlevel`. The
// daemon has one logger: every NAME reads and sets the process's level.
func (s *Server) serveLogLevel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<html><head><title>Log Level</title></head><body>\n<h1>Log Level</h1>\n")
	out := func(format string, args ...any) {
		b.WriteString(logOutputMarker + html.EscapeString(fmt.Sprintf(format, args...)) + "<br />\n")
	}
	q := r.URL.Query()
	name, level := q.Get("log"), q.Get("level")
	code := http.StatusOK
	switch {
	case name == "":
		b.WriteString("<p>Give a logger name: /logLevel?log=NAME[&amp;level=LEVEL]. This daemon has one logger; every name reads and sets its level.</p>\n")
	default:
		out("Submitted Class Name: %s", name)
		out("Log Class: log/slog (one logger for the whole daemon)")
		if level != "" {
			out("Submitted Level: %s", level)
			l, ok := logLevels[strings.ToUpper(level)]
			if !ok {
				code = http.StatusBadRequest
				out("Bad Level : %s (one of ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF)", level)
				break
			}
			out("Setting Level to %s ...", strings.ToUpper(level))
			s.level.Set(l)
			s.logger.Info("web: log level set", slog.String("log", name), slog.String("level", strings.ToUpper(level)))
		}
		out("Effective Level: %s", levelName(s.level.Level()))
	}
	b.WriteString("</body></html>\n")
	w.WriteHeader(code)
	w.Write([]byte(b.String()))
}
