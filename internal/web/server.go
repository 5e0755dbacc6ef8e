package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/hdfsgo/hdfsgo/internal/conf"
	"github.com/hdfsgo/hdfsgo/internal/ratelog"
)

// Config configures a Server.
type Config struct {
	// Addr is the listen address ("0.0.0.0:9870", "127.0.0.1:0"); ignored when
	// Listener is set.
	Addr string
	// Listener, if set, is served instead of listening on Addr.
	Listener net.Listener
	// Role names the daemon in page titles and errors ("NameNode", "DataNode").
	Role string
	// KeyName is the configuration key Addr came from, named in the listen
	// error ("dfs.namenode.http-address").
	KeyName string
	// Conf is served at /conf; nil makes /conf answer 404 with a message.
	Conf *conf.Conf
	// Logger receives request errors (discarded when nil).
	Logger *slog.Logger
	// Limits bound connections, concurrent requests and slow clients (see
	// Limits; zero fields take the defaults).
	Limits Limits
	// LogLevel, if set, is the level of the daemon's logger: /logLevel
	// reads and sets it (`hdfs daemonlog`). Without it /logLevel is 404.
	LogLevel *slog.LevelVar
	// LogDir, if set, is served read-only at /logs/ (Hadoop's
	// hadoop.log.dir, $HADOOP_LOG_DIR); without it /logs/ answers 404
	// saying so.
	LogDir string
	// Admins, when set, limits /conf, /stacks, /logLevel and /logs/ (and
	// /jmx if it says so) to administrators (admin.go); nil: everyone.
	Admins *Admins
	// Auth, if set, wraps every endpoint: the daemon's HTTP
	// authentication (SPNEGO with Kerberos), which may answer a request
	// itself (401) or pass it on with the authenticated user in its
	// context.
	Auth func(http.Handler) http.Handler
}

// Server is a running web server. Safe for concurrent use.
type Server struct {
	ln     net.Listener // the listener served, limitListener around the given one
	limits *limitListener
	lim    Limits
	// requests bounds the requests served at once (hadoop.http.max.threads);
	// stacks bounds /stacks dumps.
	requests *gate
	stacks   *gate
	role     string
	level    *slog.LevelVar // nil: no /logLevel
	conf     *conf.Conf
	admins   *Admins // nil: no administrative endpoint is limited
	redact   redactor
	logger   *slog.Logger
	mux      *http.ServeMux
	srv      *http.Server
	done     chan struct{} // closed when the serving goroutine has ended
	closed   chan struct{} // closed when the first Close has finished

	// mu guards the bean registry and the start/close state. It is never
	// held while serving a request or waiting for the serving goroutine.
	mu struct {
		sync.Mutex
		beans   []*registered // registration order; only appended to
		names   map[string]bool
		started bool
		closing bool         // Close has begun; Start does nothing from then on
		err     error        // result of the first Close, once closed is closed
		webhdfs http.Handler // the role's WebHDFS handler; nil: 501
	}
}

// New listens (unless cfg.Listener is set) and returns a server that is not yet
// serving; register beans and handlers, then call Start. A listen error names
// the address and cfg.KeyName: `web: listen on 0.0.0.0:9870 (dfs.namenode.http-address): ...`.
func New(cfg Config) (*Server, error) {
	prom := false
	if cfg.Conf != nil {
		var err error
		if prom, err = cfg.Conf.Bool(conf.HadoopPrometheusEndpointEnabled); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	ln := cfg.Listener
	if ln == nil {
		if cfg.Addr == "" {
			return nil, fmt.Errorf("%w: no address%s", ErrListen, keySuffix(cfg.KeyName))
		}
		var err error
		ln, err = net.Listen("tcp", cfg.Addr)
		if err != nil {
			return nil, fmt.Errorf("%w on %s%s: %w", ErrListen, cfg.Addr, keySuffix(cfg.KeyName), err)
		}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	role := cfg.Role
	if role == "" {
		role = "server"
	}
	lim := cfg.Limits.withDefaults()
	ll := newLimitListener(ln, lim.MaxConnections, ratelog.New(logger, nil, 0, 0))
	s := &Server{
		ln:       ll,
		limits:   ll,
		lim:      lim,
		requests: newGate("requests", lim.MaxRequests),
		stacks:   newGate("/stacks requests", lim.MaxStacks),
		role:     role,
		level:    cfg.LogLevel,
		conf:     cfg.Conf,
		admins:   cfg.Admins,
		logger:   logger,
		mux:      http.NewServeMux(),
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
	}
	s.redact = newRedactor(cfg.Conf, logger)
	s.mu.names = make(map[string]bool)
	var errorLog *log.Logger
	if cfg.Logger != nil {
		errorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	} else {
		errorLog = log.New(io.Discard, "", 0)
	}
	// No ReadTimeout or WriteTimeout: they bound a whole request, which
	// would cut long downloads; guard sets progress deadlines instead.
	var h http.Handler = s.mux
	if cfg.Auth != nil {
		h = cfg.Auth(h)
	}
	s.srv = &http.Server{
		Handler:           securityHeaders(h),
		ReadHeaderTimeout: lim.HeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ErrorLog:          errorLog,
	}
	jmx := http.Handler(http.HandlerFunc(s.serveJMX))
	if cfg.Admins != nil && cfg.Admins.InstrumentationRequiresAdmin {
		jmx = s.adminOnly(jmx)
	}
	s.builtin("GET /jmx", jmx)
	s.builtin("GET /conf", s.adminOnly(http.HandlerFunc(s.serveConf)))
	if prom {
		s.builtin("GET /prom", http.HandlerFunc(s.serveProm))
	}
	if cfg.LogLevel != nil {
		s.builtin("GET /logLevel", s.adminOnly(http.HandlerFunc(s.serveLogLevel)))
	}
	if cfg.LogDir != "" {
		s.mux.Handle("GET /logs/", s.guard(newGate("/logs requests", lim.MaxEndpointRequests), false,
			s.adminOnly(http.StripPrefix("/logs/", http.FileServer(http.Dir(cfg.LogDir))))))
	} else {
		s.builtin("GET /logs/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "web: no log directory: this "+role+" logs to its standard error (set HADOOP_LOG_DIR to serve one at /logs/)", http.StatusNotFound)
		}))
	}
	s.mux.Handle("GET /stacks", s.guard(s.stacks, true, s.adminOnly(http.HandlerFunc(s.serveStacks))))
	webhdfs := s.guard(newGate("/webhdfs requests", lim.MaxEndpointRequests), false, http.HandlerFunc(s.serveWebHDFS))
	s.mux.Handle("/webhdfs/v1", webhdfs)
	s.mux.Handle("/webhdfs/v1/", webhdfs)
	return s, nil
}

// builtin registers one of the package's own endpoints, whose answers are
// small: each write must be done within IdleTimeout of the start.
func (s *Server) builtin(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.guard(newGate(pattern+" requests", s.lim.MaxEndpointRequests), true, h))
}

func keySuffix(key string) string {
	if key == "" {
		return ""
	}
	return " (" + key + ")"
}

// Addr is the address being listened on (the real port when Addr had :0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// AddBean registers a bean. Names must be unique (a duplicate panics: it is a
// programming error).
func (s *Server) AddBean(b Bean) {
	n, err := parseObjectName(b.Name, false)
	if err != nil {
		panic(fmt.Sprintf("web: AddBean: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.names[b.Name] {
		panic(fmt.Sprintf("web: AddBean: duplicate bean name %q", b.Name))
	}
	s.mu.names[b.Name] = true
	s.mu.beans = append(s.mu.beans, &registered{Bean: b, name: n})
}

// beans returns the registered beans in registration order.
func (s *Server) beans() []*registered {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.beans[:len(s.mu.beans):len(s.mu.beans)]
}

// Handle registers a role handler on the server's mux (http.ServeMux pattern
// syntax of Go 1.22+, e.g. "GET /isActive", "GET /{$}"). A pattern that
// conflicts with one already registered panics, as http.ServeMux does.
// The handler runs under the server's limits: at most
// Limits.MaxEndpointRequests at once for this pattern, and each write of
// its answer may take IdleTimeout.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, s.guard(newGate(pattern+" requests", s.lim.MaxEndpointRequests), false, h))
}

// Refused is the number of connections refused because
// Limits.MaxConnections were open.
func (s *Server) Refused() int64 { return s.limits.refused.Load() }

// OpenConns is the number of connections open now.
func (s *Server) OpenConns() int64 { return s.limits.open.Load() }

// Start serves in a goroutine owned by the server. A second Start, or a
// Start after Close, does nothing.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.started || s.mu.closing {
		return
	}
	s.mu.started = true
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("web: serve failed", slog.String("role", s.role),
				slog.String("addr", s.ln.Addr().String()), slog.Any("error", err))
		}
	}()
}

// Close stops accepting, waits for requests in flight up to ctx's deadline, and
// returns once the serving goroutine has ended. Safe to call twice; safe if
// Start was never called (it then closes the listener). When ctx ends first,
// the remaining connections are closed and ctx's error is returned.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.closing {
		s.mu.Unlock()
		<-s.closed
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.mu.err
	}
	s.mu.closing = true
	started := s.mu.started
	s.mu.Unlock()

	var err error
	if !started {
		if cerr := s.ln.Close(); cerr != nil {
			err = fmt.Errorf("web: close listener: %w", cerr)
		}
		close(s.done)
	} else {
		if serr := s.srv.Shutdown(ctx); serr != nil {
			err = serr
			s.srv.Close()
		}
		<-s.done
	}
	s.mu.Lock()
	s.mu.err = err
	s.mu.Unlock()
	close(s.closed)
	return err
}

// securityHeaders adds the headers Hadoop's HTTP server puts on every
// response.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		next.ServeHTTP(w, r)
	})
}

// SetWebHDFS makes h answer /webhdfs/v1 and everything under it, under
// the server's limits (a write or a read of a request body may each take
// IdleTimeout; a transfer that keeps moving has no bound). Until it is
// called those requests get 501 and a RemoteException naming
// UnsupportedOperationException.
func (s *Server) SetWebHDFS(h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.webhdfs = h
}

// serveWebHDFS hands a WebHDFS request to the role's handler, or answers
// with Hadoop's RemoteException JSON for UnsupportedOperationException
// when the role has none.
func (s *Server) serveWebHDFS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.mu.webhdfs
	s.mu.Unlock()
	if h != nil {
		h.ServeHTTP(w, r)
		return
	}
	var buf bytes.Buffer
	buf.WriteString(`{"RemoteException":{"exception":"UnsupportedOperationException",` +
		`"javaClassName":"java.lang.UnsupportedOperationException","message":`)
	writeString(&buf, "WebHDFS is not supported by this "+s.role+"; use hdfs:// (RPC port)")
	buf.WriteString("}}")
	writeJSON(w, http.StatusNotImplemented, "application/json", buf.Bytes())
}
